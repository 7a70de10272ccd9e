/// The stream an audio capture delivers (ABI 1.9): what a backend's capture opened, and what the
/// host's `AudioCapture` reads. One type on both sides of the plugin contract.
public struct AudioCaptureFormat: Sendable, Hashable, CustomStringConvertible {
    /// Frames per second.
    public var rate: Int
    /// Samples per frame.
    public var channels: Int
    /// Frames the source delivers at a time (one ALSA period).
    public var periodFrames: Int
    /// Frames the source holds at most before it overruns (one ALSA buffer); 0 when not stated.
    public var bufferFrames: Int

    /// A format.
    public init(rate: Int, channels: Int, periodFrames: Int, bufferFrames: Int) {
        self.rate = rate
        self.channels = channels
        self.periodFrames = periodFrames
        self.bufferFrames = bufferFrames
    }

    /// One period, in seconds.
    public var period: Double { Double(periodFrames) / Double(rate) }

    public var description: String {
        "\(rate) Hz, \(channels) channel\(channels == 1 ? "" : "s"), period \(periodFrames) frames (\((period * 10_000).rounded() / 10) ms), buffer \(bufferFrames)"
    }
}
