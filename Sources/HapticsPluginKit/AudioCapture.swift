import CHapticsABI
import HapticsSupport

/// What the host asks of an audio capture (ABI 1.9): each value nil when the host leaves it to the
/// source.
public struct CaptureRequest: Sendable, Hashable {
    /// Frames per second, or nil for the source's own rate.
    public var rate: Int?
    /// Channels, or nil for the source's own count.
    public var channels: Int?
    /// Frames the host reads at a time, or nil for the backend's choice.
    public var periodFrames: Int?

    /// Reads a C request (zero is "not asked").
    public init(_ raw: haptics_capture_format_v1) {
        rate = raw.rate_hz > 0 ? Int(raw.rate_hz) : nil
        channels = raw.channel_count > 0 ? Int(raw.channel_count) : nil
        periodFrames = raw.period_frames > 0 ? Int(raw.period_frames) : nil
    }

    /// A request.
    public init(rate: Int? = nil, channels: Int? = nil, periodFrames: Int? = nil) {
        self.rate = rate
        self.channels = channels
        self.periodFrames = periodFrames
    }
}

/// What one read from a capture gave.
public struct CaptureRead: Sendable, Hashable {
    /// Frames read (0: the timeout passed first).
    public var frames: Int
    /// CLOCK_MONOTONIC nanoseconds at which the first frame read entered the source.
    public var timeNanoseconds: UInt64
    /// Overruns recovered from since the last read.
    public var overruns: Int

    /// A result.
    public init(frames: Int, timeNanoseconds: UInt64, overruns: Int) {
        self.frames = frames
        self.timeNanoseconds = timeNanoseconds
        self.overruns = overruns
    }
}

/// One open audio capture of a Swift backend (ABI 1.9); the host reads it from one thread at a time.
public protocol CaptureDriver: AnyObject, Sendable {
    /// The stream as opened.
    var format: AudioCaptureFormat { get }
    /// Waits until a period is there or `timeoutNanoseconds` pass, then reads what is there, at most
    /// `samples.count / format.channels` frames of interleaved floats.
    func read(into samples: UnsafeMutableBufferPointer<Float>, timeoutNanoseconds: UInt64) throws(BackendFailure) -> CaptureRead
    /// Stops the capture and releases it; called once.
    func close()
}

/// A backend that also captures audio (ABI 1.9): ``fillBackendTable(name:host:table:size:make:)``
/// fills `capture_open`, `capture_read` and `capture_close` only for such a backend.
public protocol AudioCaptureBackend: BackendDriver {
    /// Opens `source`, in the backend's naming, as near `request` as the source allows.
    func openCapture(source: String, request: CaptureRequest) throws(BackendFailure) -> any CaptureDriver
}
