import CAlsa

#if canImport(Glibc)
import Glibc
#endif

/// What a playback (``PCM``) and a capture (``CapturePCM``) stream do alike when ALSA reports trouble.
enum PCMRecovery {
    /// Resumes `handle` after a suspend (-ESTRPIPE: the machine slept), waiting while the card is
    /// still waking; false when the card cannot resume and the stream must be prepared again.
    static func resume(_ handle: OpaquePointer) -> Bool {
        var resumed = snd_pcm_resume(handle)
        while resumed == -EAGAIN {
            usleep(10_000)
            resumed = snd_pcm_resume(handle)
        }
        return resumed >= 0
    }

    /// Whether `errno` (positive) from a call on `handle` means its card is gone (unplugged).
    static func cardIsGone(_ handle: OpaquePointer, errno: Int32) -> Bool {
        errno == ENODEV || errno == EBADFD && snd_pcm_state(handle) == SND_PCM_STATE_DISCONNECTED
    }
}
