/// Why an engine or player call failed.
public enum HapticEngineError: Error, Sendable, Hashable, CustomStringConvertible {
    /// An engine needs at least one device.
    case noDevices
    /// Every device of the engine was lost.
    case allDevicesLost
    /// A time that is NaN or infinite.
    case invalidTime(Double)
    /// A value outside its range: which, the value, and the range.
    case invalidValue(name: String, value: Double, expected: String)
    /// The player was stopped before it finished (given to its completion handler).
    case playerStopped
    /// The engine was stopped before the player finished (given to its completion handler).
    case engineStopped
    /// The player's engine no longer knows it.
    case playerReleased
    /// hapticsd refused or failed a request: the D-Bus error name and its message.
    case serviceFailure(name: String, message: String)
    /// An engine's devices must all be hapticsd's or all this process's.
    case mixedDevices
    /// No audio resource has this id (never registered, or unregistered).
    case unknownAudioResource(AudioResourceID)

    public var description: String {
        switch self {
        case .noDevices: "an engine needs at least one device"
        case .allDevicesLost: "every device of the engine was lost; open a device again"
        case .invalidTime(let time): "time \(time) is not a finite number of seconds"
        case .invalidValue(let name, let value, let expected): "\(name) \(value) is outside \(expected)"
        case .playerStopped: "the player was stopped before it finished"
        case .engineStopped: "the engine was stopped before the player finished"
        case .playerReleased: "the player was released"
        case .serviceFailure(let name, let message): "hapticsd: \(message) [\(name)]"
        case .mixedDevices: "an engine cannot mix devices hapticsd owns with devices this process opened; open them all through one HapticSystem"
        case .unknownAudioResource(let id): "no audio resource \(id.rawValue) is registered with this engine"
        }
    }
}
