#if canImport(Glibc)
import Glibc
#endif
import CHapticsABI
import Logging
import Synchronization

/// A device event a backend reported through the host's `notify` callback.
public enum BackendEvent: Sendable, Hashable {
    /// The device appeared.
    case deviceAdded(id: String)
    /// The device disappeared; an open handle for it now fails as lost.
    case deviceRemoved(id: String)
}

/// The host side of one backend instance: the `haptics_host_v1` table the plugin calls back
/// through, its configuration strings, and where its log lines and device events go.
///
/// It owns the C strings it hands out (valid until the instance is destroyed, as the contract
/// promises) and outlives the backend instance: ``Backend`` destroys the instance first.
final class HostContext: @unchecked Sendable {
    // `table` is written once in init and only read afterwards; the rest is behind Mutexes.
    let table: UnsafeMutablePointer<haptics_host_v1>
    private let settings: [String: String]
    private let configStrings = Mutex<[String: UnsafeMutablePointer<CChar>?]>([:])
    private let capturedMessages = Mutex<[String]>([])
    private let eventHandler = Mutex<(@Sendable (BackendEvent) -> Void)?>(nil)
    let logger: Logger

    init(settings: [String: String], logger: Logger) {
        self.settings = settings
        self.logger = logger
        table = .allocate(capacity: 1)
        table.initialize(to: haptics_host_v1())
        table.pointee.abi_version = HAPTICS_ABI_VERSION
        table.pointee.struct_size = UInt32(MemoryLayout<haptics_host_v1>.size)
        table.pointee.context = Unmanaged.passUnretained(self).toOpaque()
        table.pointee.get_config = { context, key in
            HostContext.from(context).configuration(String(cString: key))
        }
        table.pointee.log = { context, level, message in
            HostContext.from(context).log(level: level, String(cString: message))
        }
        table.pointee.notify = { context, event, deviceID in
            let id = String(cString: deviceID)
            switch UInt32(event) {
            case HAPTICS_EVENT_DEVICE_ADDED.rawValue: HostContext.from(context).deliver(.deviceAdded(id: id))
            case HAPTICS_EVENT_DEVICE_REMOVED.rawValue: HostContext.from(context).deliver(.deviceRemoved(id: id))
            default: break
            }
        }
    }

    deinit {
        for case let pointer? in configStrings.withLock({ $0.values }) { free(pointer) }
        table.deallocate()
    }

    private static func from(_ context: UnsafeMutableRawPointer?) -> HostContext {
        Unmanaged<HostContext>.fromOpaque(context!).takeUnretainedValue()
    }

    /// The value for `key`: the explicit setting, else the environment variable named after it
    /// (`recording.output` → `HAPTICS_RECORDING_OUTPUT`).
    func value(for key: String) -> String? {
        settings[key] ?? Environment.value(HostContext.environmentName(for: key))
    }

    /// `recording.output` → `HAPTICS_RECORDING_OUTPUT`.
    static func environmentName(for key: String) -> String {
        "HAPTICS_" + String(key.uppercased().map { $0.isLetter || $0.isNumber ? $0 : "_" })
    }

    private func configuration(_ key: String) -> UnsafePointer<CChar>? {
        configStrings.withLock { cache in
            if let cached = cache[key] { return cached.map { UnsafePointer($0) } }
            let copy = value(for: key).map { strdup($0)! }
            cache[key] = copy
            return copy.map { UnsafePointer($0) }
        }.map { $0 }
    }

    private func log(level: Int32, _ message: String) {
        capturedMessages.withLock { messages in
            messages.append(message)
            if messages.count > 32 { messages.removeFirst() }
        }
        let swiftLevel: Logger.Level =
            switch UInt32(level) {
            case HAPTICS_LOG_DEBUG.rawValue: .debug
            case HAPTICS_LOG_INFO.rawValue: .info
            case HAPTICS_LOG_WARNING.rawValue: .warning
            default: .error
            }
        logger.log(level: swiftLevel, "\(message)")
    }

    /// Messages the plugin logged since the last call (the reason behind a failed initialisation).
    func takeMessages() -> [String] {
        capturedMessages.withLock { messages in
            defer { messages.removeAll() }
            return messages
        }
    }

    func setEventHandler(_ handler: (@Sendable (BackendEvent) -> Void)?) {
        eventHandler.withLock { $0 = handler }
    }

    private func deliver(_ event: BackendEvent) {
        eventHandler.withLock { $0 }?(event)
    }
}
