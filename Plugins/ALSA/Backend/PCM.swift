import ALSADevices
import CAlsa
import HapticsPluginKit
import HapticsSupport

#if canImport(Glibc)
import Glibc
#endif

/// One open ALSA playback PCM: the one owner of its `snd_pcm_t`, closed exactly once.
///
/// Opened without blocking (a busy card is refused at once, not waited for), then written in blocking
/// mode, with interleaved access, in the first sample format of S16, S32 and
/// float the PCM takes, at the output's channels and rate (no conversion: a PCM that refuses them
/// is an error that names what it takes and the fix, `plughw:`). Writes convert the host's floats,
/// put each actuator's samples on its channel (scaled to its rated level) and silence on the rest.
final class PCM: @unchecked Sendable {
    // Used by one thread at a time: the host serialises calls per device.
    private let handle: OpaquePointer
    let output: ALSAOutput
    let format: snd_pcm_format_t
    /// Bytes of one interleaved frame in ``format`` at the output's channel count.
    private let bytesPerFrame: Int
    /// The period and buffer the card chose, in frames.
    let periodFrames: Int
    let bufferFrames: Int
    private var interleaved: UnsafeMutableRawBufferPointer
    private var capacityFrames = 0
    /// Pacing for a PCM with no clock of its own (a `file` or `null` PCM, which takes any amount at
    /// once): the start of the run and the frames written since, so the backend feeds it in real time.
    private var pacedSince: UInt64?
    private var pacedFrames = 0
    private var closed = false

    /// Opens and configures `output`'s PCM.
    init(output: ALSAOutput) throws(BackendFailure) {
        self.output = output
        var pcm: OpaquePointer?
        // Non-blocking: a blocking open of a busy hw device waits in the kernel until it is free.
        let rc = snd_pcm_open(&pcm, output.pcm, SND_PCM_STREAM_PLAYBACK, SND_PCM_NONBLOCK)
        guard rc == 0, let pcm else { throw Self.openFailure(output: output, code: rc) }
        handle = pcm
        // Writes block (the card's clock paces the stream).
        snd_pcm_nonblock(pcm, 0)
        do {
            (format, periodFrames, bufferFrames) = try Self.configure(pcm, output: output)
        } catch {
            snd_pcm_close(pcm)
            throw error
        }
        bytesPerFrame = Int(snd_pcm_format_physical_width(format) / 8) * output.channels
        interleaved = UnsafeMutableRawBufferPointer(start: nil, count: 0)
    }

    deinit { close() }

    /// Closes the PCM (output stops at once); later calls do nothing.
    func close() {
        guard !closed else { return }
        closed = true
        snd_pcm_drop(handle)
        snd_pcm_close(handle)
        interleaved.deallocate()
    }

    /// Readies the stream to start with the first write.
    func prepare() throws(BackendFailure) {
        pacedSince = nil
        try check(snd_pcm_prepare(handle), "prepare")
    }

    /// Drops what is queued: silent at once; the next write starts the stream again.
    func drop() throws(BackendFailure) {
        pacedSince = nil
        try check(snd_pcm_drop(handle), "drop")
        try check(snd_pcm_prepare(handle), "prepare")
    }

    /// Writes `block`, blocking while the buffer is full; returns the underruns recovered from and
    /// the frames queued after it.
    func write(_ block: SampleBlock) throws(BackendFailure) -> SamplesWritten {
        guard block.channelCount == output.actuators.count else {
            throw BackendFailure(code: EINVAL, "\(output.id): a block of \(block.channelCount) channels for \(output.actuators.count) actuators")
        }
        let frames = block.frameCount
        if frames > capacityFrames {
            interleaved.deallocate()
            interleaved = UnsafeMutableRawBufferPointer.allocate(byteCount: frames * bytesPerFrame, alignment: 8)
            // Channels no actuator uses are never written again: silent from here on.
            interleaved.initializeMemory(as: UInt8.self, repeating: 0)
            capacityFrames = frames
        }
        convert(block)
        var underruns = 0
        var done = 0
        while done < frames {
            let written = snd_pcm_writei(handle, interleaved.baseAddress! + done * bytesPerFrame, snd_pcm_uframes_t(frames - done))
            if written >= 0 {
                done += Int(written)
                continue
            }
            let code = Int32(written)
            if code == -EPIPE {
                // An underrun: the card played all it had. Start again with this block.
                underruns += 1
                try check(snd_pcm_prepare(handle), "recover from an underrun")
            } else if code == -ESTRPIPE {
                // Suspended (the machine slept): resume, or prepare where the card cannot.
                if !PCMRecovery.resume(handle) { try check(snd_pcm_prepare(handle), "recover from a suspend") }
            } else if code == -EINTR || code == -EAGAIN {
                continue
            } else {
                try check(code, "write")
            }
        }
        var delay: snd_pcm_sframes_t = 0
        let known = snd_pcm_delay(handle, &delay) == 0
        if known, delay > 0 {
            pacedSince = nil
            return SamplesWritten(underruns: underruns, delayFrames: Int(delay))
        }
        // No clock of its own (alsa-lib's `null` and `file` report a delay of 0): paced like a card,
        // and its delay is the card's it stands in for. A PCM that cannot tell is paced, and says so.
        let paced = pace(frames)
        return SamplesWritten(underruns: underruns, delayFrames: known ? paced : nil)
    }

    /// For a PCM with no clock of its own, sleeps until `frames` more frames are due (as ``write(_:)``
    /// would pace them, so the write that follows does not sleep) or the timeout; returns the frames
    /// that can be written now. A PCM with a clock (any card) refuses with EOPNOTSUPP: its writes
    /// wait on the card themselves, after the host rendered by its own clock just before a period
    /// frees. Waiting in `snd_pcm_wait` and rendering after it instead underran about 60 times in
    /// each `Scripts/bench-alsa` race on `snd-aloop` under emulation (three runs), against 7 (and
    /// the bare client's 6–10) rendering by the host's clock.
    func wait(frames: Int, timeoutNanoseconds: UInt64) throws(BackendFailure) -> Int {
        guard let since = pacedSince else {
            throw BackendFailure(code: EOPNOTSUPP, "\(output.id): \(output.pcm) has a clock of its own; its writes wait for it")
        }
        let due = due(since: since, frames: pacedFrames + frames)
        let now = Monotonic.now()
        Monotonic.sleep(until: min(due, now &+ timeoutNanoseconds))
        return Monotonic.now() >= due ? frames : 0
    }

    /// For a PCM that queued a whole block with no delay (no clock of its own), sleeps so writes
    /// run at the nominal rate, a buffer ahead, as into a card's buffer; returns the frames such a
    /// card would still hold (what it would report as its delay). A PCM with a clock (any card) is
    /// never slowed.
    private func pace(_ frames: Int) -> Int {
        let now = Monotonic.now()
        guard let since = pacedSince else {
            pacedSince = now
            pacedFrames = frames
            return frames
        }
        pacedFrames += frames
        let due = due(since: since, frames: pacedFrames)
        if due > now { Monotonic.sleep(until: due) }
        let played = Int(Double(Monotonic.now() - since) / 1e9 * Double(output.rate))
        return max(pacedFrames - played, 0)
    }

    /// When a paced run that began at `since` may have written `frames` frames: a buffer ahead of
    /// the nominal rate, as into a card's buffer (monotonic nanoseconds).
    private func due(since: UInt64, frames: Int) -> UInt64 {
        since + UInt64(max(frames - bufferFrames, 0)) * 1_000_000_000 / UInt64(output.rate)
    }

    /// The host's floats into the PCM's format, each actuator on its channel, the rest silent.
    private func convert(_ block: SampleBlock) {
        let channels = output.channels
        let frames = block.frameCount
        let base = interleaved.baseAddress!
        for (index, actuator) in output.actuators.enumerated() {
            let scale = Float(actuator.ratedLevel)
            let source = block.samples.baseAddress! + index
            let stride = block.channelCount
            // One loop per format, the format's conversion inlined (a switch per sample cost more than the conversion).
            switch format {
            case SND_PCM_FORMAT_S16_LE:
                Self.fill(base.assumingMemoryBound(to: Int16.self) + actuator.channel - 1, channels, source, stride, frames) { value in
                    Int16((Self.clip(value * scale) * 32_767).rounded()).littleEndian
                }
            case SND_PCM_FORMAT_S32_LE:
                Self.fill(base.assumingMemoryBound(to: Int32.self) + actuator.channel - 1, channels, source, stride, frames) { value in
                    Int32((Double(Self.clip(value * scale)) * 2_147_483_647).rounded()).littleEndian
                }
            default:
                Self.fill(base.assumingMemoryBound(to: Float.self) + actuator.channel - 1, channels, source, stride, frames) { value in
                    Self.clip(value * scale)
                }
            }
        }
    }

    /// A sample within −1…1; NaN (from a host that sent one) is silence, never a trap in the conversion.
    @inline(__always)
    private static func clip(_ value: Float) -> Float {
        value.isNaN ? 0 : min(max(value, -1), 1)
    }

    /// Writes `frames` converted samples, `stride` apart in `source`, `channels` apart in `target`.
    @inline(__always)
    private static func fill<Sample>(
        _ target: UnsafeMutablePointer<Sample>, _ channels: Int, _ source: UnsafePointer<Float>, _ stride: Int, _ frames: Int,
        _ convert: (Float) -> Sample
    ) {
        for frame in 0..<frames { target[frame * channels] = convert(source[frame * stride]) }
    }

    private func check(_ code: Int32, _ what: String) throws(BackendFailure) {
        guard code < 0 else { return }
        let errno = -code
        if PCMRecovery.cardIsGone(handle, errno: errno) {
            throw BackendFailure(code: ENODEV, "\(output.id): the card behind \(output.pcm) is gone (unplugged)")
        }
        throw BackendFailure(code: errno, "\(output.id): \(what) on \(output.pcm) failed: \(String(cString: snd_strerror(code)))")
    }

    /// Sets the hardware parameters; every refusal names what the PCM takes and the fix.
    private static func configure(_ pcm: OpaquePointer, output: ALSAOutput) throws(BackendFailure) -> (snd_pcm_format_t, Int, Int) {
        var params: OpaquePointer?
        guard snd_pcm_hw_params_malloc(&params) == 0, let params else { throw BackendFailure(code: ENOMEM, "\(output.id): out of memory") }
        defer { snd_pcm_hw_params_free(params) }
        func fail(_ code: Int32, _ problem: String, _ fix: String) -> BackendFailure {
            BackendFailure(code: code < 0 ? -code : EINVAL, "\(output.id): \(output.pcm) \(problem) (\(output.source)); \(fix)")
        }
        var rc = snd_pcm_hw_params_any(pcm, params)
        guard rc >= 0 else { throw fail(rc, "has no usable configuration: \(String(cString: snd_strerror(rc)))", "check `aplay -D \(output.pcm) --dump-hw-params /dev/zero`") }
        rc = snd_pcm_hw_params_set_access(pcm, params, SND_PCM_ACCESS_RW_INTERLEAVED)
        guard rc >= 0 else { throw fail(rc, "refuses interleaved access", "use \"plughw:…\" or a plug PCM") }
        let formats = [SND_PCM_FORMAT_S16_LE, SND_PCM_FORMAT_S32_LE, SND_PCM_FORMAT_FLOAT_LE]
        guard let format = formats.first(where: { snd_pcm_hw_params_test_format(pcm, params, $0) == 0 }) else {
            throw fail(-EINVAL, "takes none of S16_LE, S32_LE, FLOAT_LE", "use \"plughw:…\", which converts")
        }
        snd_pcm_hw_params_set_format(pcm, params, format)
        rc = snd_pcm_hw_params_set_channels(pcm, params, UInt32(output.channels))
        guard rc >= 0 else {
            var low: UInt32 = 0, high: UInt32 = 0
            snd_pcm_hw_params_get_channels_min(params, &low)
            snd_pcm_hw_params_get_channels_max(params, &high)
            throw fail(rc, "refuses \(output.channels) channels: it takes \(low)…\(high)", "set \"channels\" within that range")
        }
        rc = snd_pcm_hw_params_set_rate(pcm, params, UInt32(output.rate), 0)
        guard rc >= 0 else {
            var low: UInt32 = 0, high: UInt32 = 0, direction: Int32 = 0
            snd_pcm_hw_params_get_rate_min(params, &low, &direction)
            snd_pcm_hw_params_get_rate_max(params, &high, &direction)
            throw fail(rc, "refuses \(output.rate) Hz: it takes \(low)…\(high) Hz", "set \"rate_hz\" to a rate it takes, or use \"plughw:…\", which resamples")
        }
        var period = snd_pcm_uframes_t(output.periodFrames)
        var direction: Int32 = 0
        rc = snd_pcm_hw_params_set_period_size_near(pcm, params, &period, &direction)
        guard rc >= 0 else { throw fail(rc, "refuses a period of \(output.periodFrames) frames", "set \"period_us\" higher") }
        var buffer = snd_pcm_uframes_t(output.bufferFrames)
        rc = snd_pcm_hw_params_set_buffer_size_near(pcm, params, &buffer)
        guard rc >= 0 else { throw fail(rc, "refuses a buffer of \(output.bufferFrames) frames", "set \"periods\" differently") }
        rc = snd_pcm_hw_params(pcm, params)
        guard rc >= 0 else { throw fail(rc, "refuses the configuration: \(String(cString: snd_strerror(rc)))", "check `aplay -D \(output.pcm) --dump-hw-params /dev/zero`") }
        // Start as soon as one period is queued; never stop on an underrun by itself (it is counted and recovered).
        var software: OpaquePointer?
        if snd_pcm_sw_params_malloc(&software) == 0, let software {
            defer { snd_pcm_sw_params_free(software) }
            snd_pcm_sw_params_current(pcm, software)
            snd_pcm_sw_params_set_start_threshold(pcm, software, period)
            snd_pcm_sw_params_set_avail_min(pcm, software, period)
            snd_pcm_sw_params(pcm, software)
        }
        return (format, Int(period), Int(buffer))
    }

    /// The failure for a PCM that would not open: busy (a sound server holds the card, and which
    /// process), missing (the card is not there), or no permission.
    static func openFailure(output: ALSAOutput, code: Int32) -> BackendFailure {
        let errno = code < 0 ? -code : EIO
        switch errno {
        case EBUSY:
            let holder = holderOfCard(pcm: output.pcm).map { " by \($0)" } ?? ""
            return BackendFailure(
                code: EBUSY,
                "\(output.id): \(output.pcm) is in use\(holder): a sound server (PipeWire, PulseAudio) holds the card. "
                    + "Free it for direct access (`pactl set-card-profile CARD off`, or stop the server), or give the haptics their own "
                    + "stream: PipeWire's \"Direct\"/\"Pro Audio\" profile and a device file whose pcm is \"pipewire\" or \"pulse\"")
        case ENOENT, ENODEV, ENXIO:
            return BackendFailure(
                code: ENODEV, "\(output.id): no PCM \(output.pcm) (\(output.source)): \(String(cString: snd_strerror(code))); see `aplay -l` and `aplay -L` for what exists")
        case EACCES, EPERM:
            return BackendFailure(
                code: EACCES, "\(output.id): no permission to open \(output.pcm): add the user to the 'audio' group (or run through hapticsd)")
        default:
            return BackendFailure(code: errno, "\(output.id): cannot open \(output.pcm): \(String(cString: snd_strerror(code)))")
        }
    }

    /// Who holds the playback substream of `pcm`'s card, when `pcm` names a card.
    static func holderOfCard(pcm: String) -> String? {
        SoundCard.scan().first { pcm.contains("CARD=\($0.id),") || pcm.hasSuffix("CARD=\($0.id)") || pcm.contains("hw:\($0.index)") }?.playbackOwner()
    }
}
