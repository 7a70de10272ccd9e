import CHapticsABI
#if canImport(Glibc)
import Glibc
#endif
import HapticsSupport
import HapticsTriggers

/// A failure a backend reports to the host: an errno value and a one-line message that names the
/// node, path or line involved and, where there is one, the fix.
public struct BackendFailure: Error, Sendable, CustomStringConvertible {
    /// The errno value (positive); the host receives its negation.
    public var code: Int32
    /// The message the host reads through `last_error`.
    public var message: String

    /// A failure with errno `code` and `message`.
    public init(code: Int32, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }

    /// A thread the backend needed could not be started.
    public init(_ error: ThreadStartError) {
        self.init(code: error.errno, error.description)
    }
}

/// One backend instance, written in Swift. ``fillBackendTable(name:host:table:size:make:)`` wraps it
/// in the C table.
///
/// The host serialises calls per device but may call ``devices()`` and ``open(deviceID:)`` from
/// several threads at once: implementations protect their own state.
public protocol BackendDriver: AnyObject, Sendable {
    /// The devices found now.
    func devices() throws(BackendFailure) -> [DeviceSpec]
    /// Opens a device, asleep and stopped.
    func open(deviceID: String) throws(BackendFailure) -> any DeviceDriver
    /// Releases the instance; every device has been closed before.
    func destroy()
}

extension BackendDriver {
    /// Nothing to release by default.
    public func destroy() {}
}

extension DeviceDriver {
    /// A device that takes frames refuses samples.
    public func writeSamples(_ block: SampleBlock) throws(BackendFailure) -> SamplesWritten {
        throw BackendFailure(code: EOPNOTSUPP, "this device takes drive frames, not samples")
    }

    /// By default a device does not offer the wait (ABI 1.5): the host then renders just in time
    /// by its own clock and lets ``writeSamples(_:)`` block.
    public func waitForSamples(frames: Int, timeoutNanoseconds: UInt64) throws(BackendFailure) -> Int {
        throw BackendFailure(code: EOPNOTSUPP, "this device does not wait for room in its buffer")
    }

    /// By default a device has no effects of its own (ABI 1.7).
    public func playNative(_ sequence: String) throws(BackendFailure) {
        throw BackendFailure(code: EOPNOTSUPP, "this device has no effects of its own")
    }

    /// By default a device has no effects of its own (ABI 1.8).
    public func nativeFeedback(_ effect: String, scale: Double) -> String? { nil }

    /// By default a device has no effects of its own (ABI 1.8).
    public func startNative(_ sequence: String) throws(BackendFailure) {
        throw BackendFailure(code: EOPNOTSUPP, "this device has no effects of its own")
    }

    /// By default a device does not calibrate itself (ABI 1.7).
    public func selfCalibrate() throws(BackendFailure) -> [String: Double] {
        throw BackendFailure(code: EOPNOTSUPP, "this device does not calibrate itself")
    }

    /// By default a device does not calibrate itself (ABI 1.7).
    public func restoreCalibration(_ values: [String: Double]) throws(BackendFailure) {
        throw BackendFailure(code: EOPNOTSUPP, "this device does not calibrate itself")
    }

    /// By default a device has no adaptive triggers (ABI 1.6).
    public func setTriggers(right: AdaptiveTriggerEffect?, left: AdaptiveTriggerEffect?) throws(BackendFailure) {
        throw BackendFailure(code: EOPNOTSUPP, "this device has no adaptive triggers")
    }
}

/// What a device did with a block of samples.
public struct SamplesWritten: Sendable, Hashable {
    /// Underruns recovered from since the last block (the block is queued either way).
    public var underruns: Int
    /// Frames queued in the device and not yet played, the block's included, when the write
    /// returned (ALSA's delay); nil when the device cannot tell.
    public var delayFrames: Int?

    /// A result.
    public init(underruns: Int, delayFrames: Int?) {
        self.underruns = underruns
        self.delayFrames = delayFrames
    }
}

/// A block of samples as the host sent it (ABI 1.4): floats, −1…1 of each channel's full scale,
/// interleaved frame by frame in the device's channel order. Valid only during the call.
public struct SampleBlock: @unchecked Sendable {
    // Borrowed from the host for the length of one `write_samples` call, never kept.
    /// CLOCK_MONOTONIC nanoseconds at which the host means the first frame to be felt.
    public let timeNanoseconds: UInt64
    /// Frames in the block.
    public let frameCount: Int
    /// Samples per frame.
    public let channelCount: Int
    /// The `frameCount × channelCount` samples.
    public let samples: UnsafeBufferPointer<Float>

    /// Wraps a C block.
    public init(_ raw: haptics_samples_v1) {
        timeNanoseconds = raw.time_ns
        frameCount = Int(raw.frame_count)
        channelCount = Int(raw.channel_count)
        samples = UnsafeBufferPointer(start: raw.samples, count: frameCount * channelCount)
    }

    /// The sample of `channel` in frame `frame`.
    public subscript(frame: Int, channel: Int) -> Float { samples[frame * channelCount + channel] }
}

/// One opened device of a Swift backend.
public protocol DeviceDriver: AnyObject, Sendable {
    /// Leaves the lowest-power state.
    func wake() throws(BackendFailure)
    /// Returns to the lowest-power state; output stops.
    func sleep() throws(BackendFailure)
    /// Drives the channels as `frame` says; must not block on a slow transport.
    func submit(_ frame: FrameView) throws(BackendFailure)
    /// Stops all output now (a device that takes samples drops what it has queued).
    func stop() throws(BackendFailure)
    /// Queues a block of samples on an awake device that takes them (``DeviceSpec/sampleStream``),
    /// blocking while its buffer is full. The default refuses: the device takes frames.
    func writeSamples(_ block: SampleBlock) throws(BackendFailure) -> SamplesWritten
    /// Blocks until an awake device that takes samples can queue `frames` frames without blocking,
    /// or `timeoutNanoseconds` have passed; returns the frames it can queue at once (ABI 1.5's
    /// `wait_samples`). The default refuses with EOPNOTSUPP: the host then does without.
    func waitForSamples(frames: Int, timeoutNanoseconds: UInt64) throws(BackendFailure) -> Int
    /// Sets the adaptive triggers of an awake device with ``DeviceSpec/adaptiveTriggers`` (ABI 1.6's
    /// `set_triggers`): nil leaves that trigger as it is. The effects hold until set again, `sleep`,
    /// `close` or the process's death, which release them; `stop` leaves them. An effect the device
    /// cannot play fails with EINVAL and changes nothing. The default refuses with EOPNOTSUPP.
    func setTriggers(right: AdaptiveTriggerEffect?, left: AdaptiveTriggerEffect?) throws(BackendFailure)
    /// Plays `sequence`, effects stored in an awake device with ``DeviceSpec/nativeEffects`` in the
    /// backend's text form (ABI 1.7's `play_native`), and returns when it has played, the device
    /// awake and stopped. A step the device does not have fails with EINVAL naming it, and nothing plays.
    func playNative(_ sequence: String) throws(BackendFailure)
    /// Which stored effects play the feedback vocabulary's effect `effect` at `scale` (0…1] of its
    /// strength, in the text form ``playNative(_:)`` takes; nil when none fits (ABI 1.8's
    /// `native_feedback`: -ENOENT, and the host renders it with frames). Touches no hardware. The
    /// default: nil.
    func nativeFeedback(_ effect: String, scale: Double) -> String?
    /// Starts `sequence` (as ``playNative(_:)`` takes it) and returns without waiting for its end
    /// (ABI 1.8's `start_native`): it plays on through ``stop()`` and silent frames; a frame with
    /// any amplitude, another start and ``close()`` end it; ``sleep()`` lets it finish, then idles
    /// the device. The default refuses with EOPNOTSUPP.
    func startNative(_ sequence: String) throws(BackendFailure)
    /// Runs the calibration of a device with ``DeviceSpec/selfCalibration`` (ABI 1.7's
    /// `self_calibrate`), blocking until it ends, and returns what it measured by name; leaves the
    /// device idle and stopped. A failed calibration fails with EIO naming why.
    func selfCalibrate() throws(BackendFailure) -> [String: Double]
    /// Gives the device the results of an earlier ``selfCalibrate()`` (ABI 1.7's
    /// `restore_calibration`); a key or value it does not take fails with EINVAL naming it.
    func restoreCalibration(_ values: [String: Double]) throws(BackendFailure)
    /// Stops, sleeps and releases the device. Called exactly once.
    func close()
}

/// The text form a device's own calibration crosses the ABI in (1.7): one `key=value` line per
/// value, keys in order, each value a decimal number.
public enum DeviceCalibrationText {
    /// `values` as lines, keys sorted.
    public static func format(_ values: [String: Double]) -> String {
        values.sorted { $0.key < $1.key }.map { "\($0.key)=\(JSONValue.format($0.value))" }.joined(separator: "\n")
    }

    /// The values of `text`.
    /// - Throws: EINVAL naming a line that is not `key=number` or a key given twice.
    public static func parse(_ text: String) throws(BackendFailure) -> [String: Double] {
        var values: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.isEmpty {
            let parts = line.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, !parts[0].isEmpty, let value = Double(parts[1]), value.isFinite else {
                throw BackendFailure(code: EINVAL, "stored calibration line \"\(line)\" is not key=number")
            }
            guard values.updateValue(value, forKey: String(parts[0])) == nil else {
                throw BackendFailure(code: EINVAL, "stored calibration gives \"\(parts[0])\" twice")
            }
        }
        return values
    }
}

/// A drive frame as the host sent it.
public struct FrameView: Sendable {
    /// The C frame.
    public let raw: haptics_frame_v1

    /// Wraps a C frame.
    public init(_ raw: haptics_frame_v1) { self.raw = raw }

    /// CLOCK_MONOTONIC nanoseconds at which the host means the frame to take effect.
    public var timeNanoseconds: UInt64 { raw.time_ns }

    /// Whether the amplitudes are levels as they are (`HAPTICS_FRAME_LEVELS`): not to be lifted
    /// over the envelope's offset. Sent only to a device whose ``EnvelopeSpec/acceptsLevels`` is set.
    public var isLevels: Bool { raw.flags & HAPTICS_FRAME_LEVELS.rawValue != 0 }

    /// Number of channels in the frame.
    public var channelCount: Int { min(Int(raw.channel_count), Int(HAPTICS_MAX_CHANNELS)) }

    /// The drive of channel `index` (amplitude 0…1, frequency in Hz or 0 for the default).
    public subscript(index: Int) -> (amplitude: Float, frequency: Float) {
        precondition(index >= 0 && index < channelCount, "channel \(index) out of 0..<\(channelCount)")
        return withUnsafeBytes(of: raw.channels) { bytes in
            let drive = bytes.load(fromByteOffset: index * MemoryLayout<haptics_channel_drive_v1>.stride, as: haptics_channel_drive_v1.self)
            return (drive.amplitude, drive.frequency_hz)
        }
    }
}
