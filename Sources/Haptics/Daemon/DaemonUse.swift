/// Whether a ``HapticSystem`` plays through hapticsd, the haptics service, or owns the devices itself.
public enum DaemonUse: Sendable, Hashable {
    /// Through hapticsd when it runs on the bus (or D-Bus activation can start it), else in-process.
    /// `HAPTICS_DAEMON` decides instead when set: `0`/`off`/`never` in-process, `1`/`on`/`required`
    /// only through the service.
    case automatic
    /// In-process: load the backend plugins and own the devices (hapticsd itself, calibration, tests).
    case never
    /// Only through hapticsd: without it, no devices (``HapticSystem/deviceListing()`` says why).
    case required

    /// What `HAPTICS_DAEMON` asks for, if it is set to something known.
    static func fromEnvironment() -> DaemonUse? {
        guard let value = Environment.value("HAPTICS_DAEMON")?.lowercased(), !value.isEmpty else { return nil }
        switch value {
        case "0", "off", "no", "never", "false": return .never
        case "1", "on", "yes", "required", "true": return .required
        case "auto", "automatic": return .automatic
        default: return nil
        }
    }
}

extension HapticSystem {
    /// How the system reaches its devices.
    public enum Mode: Sendable, Hashable, CustomStringConvertible {
        /// This process loads the backends and opens the devices itself; why it is not using hapticsd.
        case inProcess(reason: String)
        /// hapticsd owns the devices; this process plays through it.
        case daemon(DaemonInfo)

        public var description: String {
            switch self {
            case .inProcess(let reason): "in-process (\(reason))"
            case .daemon(let info): "through hapticsd (pid \(info.processID), \(info.uniqueName) on the \(info.bus) bus, API \(info.version))"
            }
        }
    }

    /// The hapticsd instance a system plays through.
    public struct DaemonInfo: Sendable, Hashable {
        /// Its process id: the process that owns every device.
        public var processID: Int
        /// Its unique bus name (`:1.42`).
        public var uniqueName: String
        /// `session`, `system`, or the bus address.
        public var bus: String
        /// The interface version it reports.
        public var version: String

        /// A description of a service.
        public init(processID: Int, uniqueName: String, bus: String, version: String) {
            self.processID = processID
            self.uniqueName = uniqueName
            self.bus = bus
            self.version = version
        }
    }
}
