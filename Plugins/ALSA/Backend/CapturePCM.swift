import CAlsa
import HapticsPluginKit
import HapticsSupport

#if canImport(Glibc)
import Glibc
#endif

/// One open ALSA capture PCM (ABI 1.9): the one owner of its `snd_pcm_t`, closed exactly once.
///
/// Opened without blocking and read without blocking after `snd_pcm_wait`, so a read returns by its
/// timeout whatever the source does. Interleaved, in the first of S16, S32 and float the PCM takes,
/// at the nearest rate and channel count it takes to the host's request (48 kHz and 2 channels when
/// the host leaves them), a period near the request (5 ms by default) and four periods of buffer.
/// Each read converts to floats and stamps the first frame with the monotonic time it entered the
/// card: the read's time less the frames the card still held (`snd_pcm_delay`) and those read.
/// A PCM with no clock of its own (`null`, or `file` with an `infile`) is paced at its nominal rate.
final class CapturePCM: CaptureDriver, @unchecked Sendable {
    // Read from one thread at a time (the contract); `close` runs once, after the last read.
    private let handle: OpaquePointer
    private let source: String
    let format: AudioCaptureFormat
    private let sampleFormat: snd_pcm_format_t
    private var raw: UnsafeMutableRawBufferPointer
    private var started = false
    private var overruns = 0
    /// For a PCM with no clock of its own (alsa-lib's `null`, or `file` reading an `infile` over
    /// it), which would give any amount at once: when the run began and the frames read since, so
    /// the backend gives them at the nominal rate, a period at a time, as a card would.
    private let paced: Bool
    private var pacedSince: UInt64 = 0
    private var pacedFrames = 0
    private var closed = false

    init(source: String, request: CaptureRequest) throws(BackendFailure) {
        self.source = source
        var pcm: OpaquePointer?
        let rc = snd_pcm_open(&pcm, source, SND_PCM_STREAM_CAPTURE, SND_PCM_NONBLOCK)
        guard rc == 0, let pcm else { throw Self.openFailure(source: source, code: rc) }
        handle = pcm
        do {
            (sampleFormat, format) = try Self.configure(pcm, source: source, request: request)
        } catch {
            snd_pcm_close(pcm)
            throw error
        }
        let type = snd_pcm_type(pcm)
        paced = type == SND_PCM_TYPE_NULL || type == SND_PCM_TYPE_FILE
        let width = Int(snd_pcm_format_physical_width(sampleFormat) / 8)
        raw = UnsafeMutableRawBufferPointer.allocate(byteCount: format.bufferFrames * format.channels * width, alignment: 8)
    }

    deinit { close() }

    func close() {
        guard !closed else { return }
        closed = true
        snd_pcm_drop(handle)
        snd_pcm_close(handle)
        raw.deallocate()
    }

    func read(into samples: UnsafeMutableBufferPointer<Float>, timeoutNanoseconds: UInt64) throws(BackendFailure) -> CaptureRead {
        if !started {
            try check(snd_pcm_start(handle), "start")
            started = true
            pacedSince = Monotonic.now()
        }
        var capacity = min(samples.count / format.channels, format.bufferFrames)
        let deadline = Monotonic.now() &+ timeoutNanoseconds
        if paced {
            // The next period is due when its last frame would have entered a card.
            let due = pacedSince + UInt64(pacedFrames + format.periodFrames) * 1_000_000_000 / UInt64(format.rate)
            Monotonic.sleep(until: min(due, deadline))
            let now = Monotonic.now()
            guard now >= due else { return CaptureRead(frames: 0, timeNanoseconds: now, overruns: 0) }
            let elapsed = Int((now - pacedSince) * UInt64(format.rate) / 1_000_000_000)
            capacity = min(capacity, elapsed - pacedFrames)
        }
        while true {
            let now = Monotonic.now()
            let milliseconds = now >= deadline ? 0 : Int32(clamping: (deadline - now + 999_999) / 1_000_000)
            let ready = snd_pcm_wait(handle, milliseconds)
            if ready < 0 {
                try recover(ready)
                continue
            }
            let read = snd_pcm_readi(handle, raw.baseAddress!, snd_pcm_uframes_t(capacity))
            let stamp = Monotonic.now()
            if read == -snd_pcm_sframes_t(EAGAIN) || read == 0 {
                if stamp >= deadline { return CaptureRead(frames: 0, timeNanoseconds: stamp, overruns: takeOverruns()) }
                continue
            }
            if read < 0 {
                try recover(Int32(read))
                continue
            }
            let frames = Int(read)
            convert(frames, into: samples)
            if paced {
                let time = pacedSince + UInt64(pacedFrames) * 1_000_000_000 / UInt64(format.rate)
                pacedFrames += frames
                return CaptureRead(frames: frames, timeNanoseconds: time, overruns: 0)
            }
            var delay: snd_pcm_sframes_t = 0
            let held = snd_pcm_delay(handle, &delay) == 0 ? max(Int(delay), 0) : 0
            let age = UInt64(held + frames) * 1_000_000_000 / UInt64(format.rate)
            return CaptureRead(frames: frames, timeNanoseconds: stamp > age ? stamp - age : 0, overruns: takeOverruns())
        }
    }

    private func takeOverruns() -> Int {
        defer { overruns = 0 }
        return overruns
    }

    /// An overrun (the host read too late: frames were lost) or a suspend is recovered from and
    /// counted; anything else fails the read.
    private func recover(_ code: Int32) throws(BackendFailure) {
        switch -code {
        case EPIPE:
            overruns += 1
            try check(snd_pcm_prepare(handle), "recover from an overrun")
            try check(snd_pcm_start(handle), "restart after an overrun")
        case ESTRPIPE:
            if !PCMRecovery.resume(handle) {
                try check(snd_pcm_prepare(handle), "recover from a suspend")
                try check(snd_pcm_start(handle), "restart after a suspend")
            }
        case EINTR, EAGAIN:
            return
        default:
            try check(code, "read")
        }
    }

    /// The card's samples as floats, −1…1.
    private func convert(_ frames: Int, into samples: UnsafeMutableBufferPointer<Float>) {
        let count = frames * format.channels
        switch sampleFormat {
        case SND_PCM_FORMAT_S16_LE:
            let source = raw.baseAddress!.assumingMemoryBound(to: Int16.self)
            for index in 0..<count { samples[index] = Float(Int16(littleEndian: source[index])) / 32_768 }
        case SND_PCM_FORMAT_S32_LE:
            let source = raw.baseAddress!.assumingMemoryBound(to: Int32.self)
            for index in 0..<count { samples[index] = Float(Double(Int32(littleEndian: source[index])) / 2_147_483_648) }
        default:
            let source = raw.baseAddress!.assumingMemoryBound(to: Float.self)
            for index in 0..<count {
                let value = source[index]
                samples[index] = value.isNaN ? 0 : min(max(value, -1), 1)
            }
        }
    }

    private func check(_ code: Int32, _ what: String) throws(BackendFailure) {
        guard code < 0 else { return }
        let errno = -code
        if PCMRecovery.cardIsGone(handle, errno: errno) {
            throw BackendFailure(code: ENODEV, "capture \(source): the card is gone (unplugged)")
        }
        throw BackendFailure(code: errno, "capture \(source): \(what) failed: \(String(cString: snd_strerror(code)))")
    }

    /// Sets the hardware parameters near the request; a refusal names what the PCM takes and the fix.
    private static func configure(_ pcm: OpaquePointer, source: String, request: CaptureRequest) throws(BackendFailure) -> (snd_pcm_format_t, AudioCaptureFormat) {
        var params: OpaquePointer?
        guard snd_pcm_hw_params_malloc(&params) == 0, let params else { throw BackendFailure(code: ENOMEM, "capture \(source): out of memory") }
        defer { snd_pcm_hw_params_free(params) }
        func fail(_ code: Int32, _ problem: String) -> BackendFailure {
            BackendFailure(
                code: code < 0 ? -code : EINVAL,
                "capture \(source): \(problem); check `arecord -D \(source) --dump-hw-params -d 1 /dev/null`, or use \"plughw:…\", which converts")
        }
        var rc = snd_pcm_hw_params_any(pcm, params)
        guard rc >= 0 else { throw fail(rc, "no usable configuration: \(String(cString: snd_strerror(rc)))") }
        rc = snd_pcm_hw_params_set_access(pcm, params, SND_PCM_ACCESS_RW_INTERLEAVED)
        guard rc >= 0 else { throw fail(rc, "refuses interleaved access") }
        let formats = [SND_PCM_FORMAT_S16_LE, SND_PCM_FORMAT_S32_LE, SND_PCM_FORMAT_FLOAT_LE]
        guard let sampleFormat = formats.first(where: { snd_pcm_hw_params_test_format(pcm, params, $0) == 0 }) else {
            throw fail(-EINVAL, "takes none of S16_LE, S32_LE, FLOAT_LE")
        }
        snd_pcm_hw_params_set_format(pcm, params, sampleFormat)
        var channels = UInt32(request.channels ?? 2)
        rc = snd_pcm_hw_params_set_channels_near(pcm, params, &channels)
        guard rc >= 0, (1...32).contains(channels) else { throw fail(rc, "takes no channel count near \(request.channels ?? 2) within 1…32") }
        var rate = UInt32(request.rate ?? 48_000)
        var direction: Int32 = 0
        rc = snd_pcm_hw_params_set_rate_near(pcm, params, &rate, &direction)
        guard rc >= 0, (1_000...768_000).contains(rate) else { throw fail(rc, "takes no rate near \(request.rate ?? 48_000) Hz within 1000…768000") }
        var period = snd_pcm_uframes_t(request.periodFrames ?? Int(rate) / 200)
        rc = snd_pcm_hw_params_set_period_size_near(pcm, params, &period, &direction)
        guard rc >= 0, period > 0 else { throw fail(rc, "refuses a period near \(request.periodFrames ?? Int(rate) / 200) frames") }
        var buffer = period * 4
        rc = snd_pcm_hw_params_set_buffer_size_near(pcm, params, &buffer)
        guard rc >= 0, buffer >= period else { throw fail(rc, "refuses a buffer near \(period * 4) frames") }
        rc = snd_pcm_hw_params(pcm, params)
        guard rc >= 0 else { throw fail(rc, "refuses the configuration: \(String(cString: snd_strerror(rc)))") }
        var software: OpaquePointer?
        if snd_pcm_sw_params_malloc(&software) == 0, let software {
            defer { snd_pcm_sw_params_free(software) }
            snd_pcm_sw_params_current(pcm, software)
            // Wake the reader once a period is there.
            snd_pcm_sw_params_set_avail_min(pcm, software, period)
            snd_pcm_sw_params(pcm, software)
        }
        return (sampleFormat, AudioCaptureFormat(rate: Int(rate), channels: Int(channels), periodFrames: Int(period), bufferFrames: Int(buffer)))
    }

    /// The failure for a source that would not open: missing, busy, or no permission.
    private static func openFailure(source: String, code: Int32) -> BackendFailure {
        let errno = code < 0 ? -code : EIO
        switch errno {
        case ENOENT, ENODEV, ENXIO:
            return BackendFailure(code: ENOENT, "no capture source \(source): \(String(cString: snd_strerror(code))); see `arecord -l` and `arecord -L` for what exists")
        case EBUSY:
            return BackendFailure(code: EBUSY, "capture \(source) is in use: a sound server holds the card; capture through it (\"pulse\", \"pipewire\") instead")
        case EACCES, EPERM:
            return BackendFailure(code: EACCES, "no permission to capture from \(source): add the user to the 'audio' group")
        default:
            return BackendFailure(code: errno, "cannot capture from \(source): \(String(cString: snd_strerror(code)))")
        }
    }
}

extension ALSABackend: AudioCaptureBackend {
    /// Opens the ALSA PCM `source` ("default", "hw:Loopback,1,0") for capture.
    func openCapture(source: String, request: CaptureRequest) throws(BackendFailure) -> any CaptureDriver {
        guard !source.isEmpty else { throw BackendFailure(code: EINVAL, "an empty capture source; name an ALSA PCM such as \"default\" or \"hw:Loopback,1,0\"") }
        return try CapturePCM(source: source, request: request)
    }
}
