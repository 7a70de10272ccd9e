/// The drive state of one channel.
public struct ChannelDrive: Sendable, Hashable, Codable {
    /// Output level: 0 (off) … 1 (the channel's rated full scale).
    public var amplitude: Double
    /// Drive frequency in Hz for channels that control frequency; 0 means the channel's default.
    public var frequency: Double

    /// A channel drive; `frequency` 0 leaves the channel at its default frequency.
    public init(amplitude: Double, frequency: Double = 0) {
        self.amplitude = amplitude
        self.frequency = frequency
    }

    /// No output.
    public static let off = ChannelDrive(amplitude: 0)
}

/// What every channel of a device does from ``time`` until the next frame.
public struct DriveFrame: Sendable, Hashable, Codable {
    /// When the frame is meant to take effect.
    public var time: HapticInstant
    /// Per-channel drive, in the device's channel order.
    public var channels: [ChannelDrive]
    /// Whether the amplitudes are levels as they are, not to be lifted over the device's
    /// ``DriveEnvelope/amplitudeOffset`` (ABI 1.3 `HAPTICS_FRAME_LEVELS`). Only for a device whose
    /// envelope ``DriveEnvelope/acceptsLevels``; the engine sets it for a profile measured in levels.
    public var levels: Bool
    /// The clips sounding from ``time`` on a waveform device (AHAP `AudioCustom` events), mixed
    /// into its samples; empty for every other device. Like the channels, the whole state: a voice
    /// sent again continues (``ClipVoice/continues(_:)``), one left out stops. Not encoded: a
    /// recording keeps the drives.
    public var clips: [ClipVoice] = []

    private enum CodingKeys: String, CodingKey { case time, channels, levels }

    /// A frame for `time`.
    public init(time: HapticInstant, channels: [ChannelDrive], levels: Bool = false, clips: [ClipVoice] = []) {
        self.time = time
        self.channels = channels
        self.levels = levels
        self.clips = clips
    }

    /// A frame with every one of `channelCount` channels off.
    public static func silence(channelCount: Int, at time: HapticInstant) -> DriveFrame {
        DriveFrame(time: time, channels: Array(repeating: .off, count: channelCount))
    }

    /// Whether every channel is off.
    public var isSilent: Bool { channels.allSatisfy { $0.amplitude <= 0 } }
}

extension HapticInstant: Codable {
    public init(from decoder: any Decoder) throws {
        nanoseconds = try decoder.singleValueContainer().decode(UInt64.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(nanoseconds)
    }
}
