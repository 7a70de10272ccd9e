#if canImport(Glibc)
import Glibc
#endif
import CHapticsABI
import Logging
import Synchronization

/// The core's side of hapticsd: the client transport plugin (`libhapticsd-client.so`, found on the
/// plugin search path and loaded with the same checks as a backend) and its one connection.
///
/// The core links no D-Bus library: the plugin does (sd-bus). The table it fills works at the level
/// of the service's API (devices, effects, AHAP patterns, players); drive frames never cross it.
final class ServiceLink: @unchecked Sendable {
    // `table` is written once by the plugin's fill and only read afterwards; `host` is thread-safe.
    private let table: haptics_client_v1
    private let host: ServiceLinkHost
    /// The service this client is connected to.
    let info: HapticSystem.DaemonInfo
    /// The plugin file.
    let path: String

    private init(table: haptics_client_v1, host: ServiceLinkHost, info: HapticSystem.DaemonInfo, path: String) {
        self.table = table
        self.host = host
        self.info = info
        self.path = path
    }

    deinit {
        table.destroy?(table.instance)
    }

    /// Loads the client plugin from `searchPath` and connects; the failure says why hapticsd is not used.
    static func connect(searchPath: PluginSearchPath, settings: [String: String], logger: Logger) -> Result<ServiceLink, DaemonUnavailable> {
        let name = HAPTICS_CLIENT_PLUGIN_NAME
        guard let path = searchPath.directories.map({ $0 + "/" + name }).first(where: { access($0, F_OK) == 0 }) else {
            return .failure(DaemonUnavailable(reason: "the client plugin \(name) is not on the plugin search path"))
        }
        let symbol: UnsafeMutableRawPointer
        do {
            symbol = try PluginImages.load(path, entry: HAPTICS_CLIENT_ENTRY).symbol
        } catch {
            return .failure(DaemonUnavailable(reason: "\(error)"))
        }
        let fill = unsafeBitCast(symbol, to: haptics_client_fill_v1_fn.self)
        let host = ServiceLinkHost(settings: settings, logger: logger)
        var table = haptics_client_v1()
        let rc = fill(host.table, &table, MemoryLayout<haptics_client_v1>.size)
        guard rc == 0 else { return .failure(DaemonUnavailable(reason: "\(path): the client plugin failed to start (\(describeErrno(-rc)))")) }
        guard table.abi_version == HAPTICS_CLIENT_ABI_VERSION, table.struct_size >= UInt32(MemoryLayout<haptics_client_v1>.size) else {
            return .failure(DaemonUnavailable(reason: "\(path): client ABI \(table.abi_version) (size \(table.struct_size)); this host speaks \(HAPTICS_CLIENT_ABI_VERSION)"))
        }
        let functions: [(String, Bool)] = [
            ("connect", table.connect != nil), ("list_devices", table.list_devices != nil), ("prepare", table.prepare != nil),
            ("play_effect", table.play_effect != nil), ("play_pattern", table.play_pattern != nil), ("create_player", table.create_player != nil),
            ("player_command", table.player_command != nil), ("player_set", table.player_set != nil), ("player_get", table.player_get != nil),
            ("send_parameters", table.send_parameters != nil), ("schedule_curve", table.schedule_curve != nil), ("stop_all", table.stop_all != nil),
            ("destroy", table.destroy != nil), ("describe_device", table.describe_device != nil), ("register_audio", table.register_audio != nil),
            ("unregister_audio", table.unregister_audio != nil), ("set_triggers", table.set_triggers != nil),
        ]
        if let missing = functions.first(where: { !$0.1 }) {
            table.destroy?(table.instance)
            return .failure(DaemonUnavailable(reason: "\(path): the client plugin has no \(missing.0)"))
        }
        var daemon = haptics_client_daemon_v1()
        daemon.struct_size = UInt32(MemoryLayout<haptics_client_daemon_v1>.size)
        var error = haptics_client_error_v1()
        let connected = table.connect!(table.instance, &daemon, &error)
        guard connected == 0 else {
            table.destroy!(table.instance)
            let message = cString(error.message)
            return .failure(DaemonUnavailable(reason: message.isEmpty ? "hapticsd: \(describeErrno(-connected))" : message))
        }
        let info = HapticSystem.DaemonInfo(
            processID: Int(daemon.pid), uniqueName: cString(daemon.unique_name), bus: cString(daemon.bus), version: cString(daemon.version))
        return .success(ServiceLink(table: table, host: host, info: info, path: path))
    }

    // MARK: - Calls

    private func perform(_ call: (UnsafeMutablePointer<haptics_client_error_v1>) -> Int32) throws(HapticEngineError) {
        var error = haptics_client_error_v1()
        let rc = call(&error)
        guard rc == 0 else { throw .serviceFailure(name: cString(error.name), message: cString(error.message)) }
    }

    /// The service's devices (its listing: one entry per physical device).
    func devices() throws(DeviceError) -> [DeviceDescription] {
        var capacity: UInt32 = 16
        while true {
            var raw = [haptics_client_device_v1](repeating: haptics_client_device_v1(), count: Int(capacity))
            var count: UInt32 = 0
            var error = haptics_client_error_v1()
            let rc = raw.withUnsafeMutableBufferPointer { table.list_devices!(table.instance, $0.baseAddress, capacity, &count, &error) }
            guard rc == 0 else {
                throw .backendFailure(deviceID: nil, backend: "hapticsd", operation: .enumerate, errno: -rc, message: cString(error.message))
            }
            if count > capacity {
                capacity = count
                continue
            }
            return raw.prefix(Int(count)).compactMap { entry in
                guard var description = try? DeviceDescription(entry.device, backend: cString(entry.backend)) else { return nil }
                let physical = cString(entry.physical_id)
                description.physicalID = physical.isEmpty ? nil : physical
                if entry.flags & HAPTICS_DEVICE_UNAVAILABLE.rawValue != 0 { description.unavailableReason = cString(entry.unavailable_reason) }
                // The rest, as its backend told the service (a sample stream, an envelope): a device
                // gone since the listing keeps what the listing said.
                var info = haptics_device_info_v1()
                info.struct_size = UInt32(MemoryLayout<haptics_device_info_v1>.size)
                if table.describe_device!(table.instance, description.id, &info, nil) == 0 {
                    description.apply(info, takesSamples: true, setsTriggers: true)
                }
                return description
            }
        }
    }

    /// Sets the adaptive triggers of `deviceID` through the service (`SetTriggers`); nil leaves one as it is.
    func setTriggers(deviceID: String, right: AdaptiveTriggerEffect?, left: AdaptiveTriggerEffect?) throws(HapticEngineError) {
        var rightRaw = right?.cValue ?? haptics_trigger_effect_v1()
        var leftRaw = left?.cValue ?? haptics_trigger_effect_v1()
        try perform { error in
            withUnsafePointer(to: &rightRaw) { rightPointer in
                withUnsafePointer(to: &leftRaw) { leftPointer in
                    table.set_triggers!(table.instance, deviceID, right == nil ? nil : rightPointer, left == nil ? nil : leftPointer, error)
                }
            }
        }
    }

    func prepare(deviceID: String) throws(HapticEngineError) {
        try perform { table.prepare!(table.instance, deviceID, $0) }
    }

    /// Plays a vocabulary effect; returns the player (0: none) and what the service's overuse guard did.
    func playEffect(deviceID: String, effect: String, intensity: Double) throws(HapticEngineError) -> (player: UInt64, disposition: UInt32) {
        var player: UInt64 = 0
        var disposition: UInt32 = 0
        try perform { table.play_effect!(table.instance, deviceID, effect, intensity, &player, &disposition, $0) }
        return (player, disposition)
    }

    func playPattern(deviceID: String, ahap: String, intensity: Double) throws(HapticEngineError) -> UInt64 {
        var player: UInt64 = 0
        try perform { table.play_pattern!(table.instance, deviceID, ahap, intensity, &player, $0) }
        return player
    }

    /// Registers `clip` as this connection's `name` with the service; its id there.
    func registerAudio(_ clip: AudioClip, named name: String) throws(HapticEngineError) -> UInt64 {
        var id: UInt64 = 0
        let frames = UInt64(clip.frameCount), channels = UInt32(clip.channelCount), rate = UInt32(clip.sampleRate.rounded())
        try clip.samples.withUnsafeBufferPointer { (samples) throws(HapticEngineError) in
            try perform { table.register_audio!(table.instance, name, samples.baseAddress!, frames, channels, rate, &id, $0) }
        }
        return id
    }

    /// Forgets this connection's clip `id` on the service.
    func unregisterAudio(_ id: UInt64) throws(HapticEngineError) {
        try perform { table.unregister_audio!(table.instance, id, $0) }
    }

    func createPlayer(deviceID: String, ahap: String) throws(HapticEngineError) -> UInt64 {
        var player: UInt64 = 0
        try perform { table.create_player!(table.instance, deviceID, ahap, &player, $0) }
        return player
    }

    /// A command at engine time `time` (seconds of `CLOCK_MONOTONIC`; 0 or past: now).
    func command(_ command: haptics_client_command, player: UInt64, at time: Double) throws(HapticEngineError) {
        let nanoseconds: UInt64 = time > 0 ? UInt64(time * 1e9) : 0
        try perform { table.player_command!(table.instance, player, command.rawValue, nanoseconds, $0) }
    }

    func set(_ property: haptics_client_property, of player: UInt64, to value: Double) throws(HapticEngineError) {
        try perform { table.player_set!(table.instance, player, property.rawValue, value, $0) }
    }

    func get(_ property: haptics_client_property, of player: UInt64) throws(HapticEngineError) -> Double {
        var value = 0.0
        try perform { table.player_get!(table.instance, player, property.rawValue, &value, $0) }
        return value
    }

    func sendParameters(_ parameters: [HapticDynamicParameter], player: UInt64, at time: Double) throws(HapticEngineError) {
        let nanoseconds: UInt64 = time > 0 ? UInt64(time * 1e9) : 0
        let names = parameters.map { strdup($0.id.rawValue)! }
        defer { names.forEach { free($0) } }
        let raw = zip(parameters, names).map { haptics_client_parameter_v1(id: $1, value: $0.value, relative_time: $0.relativeTime) }
        try perform { error in raw.withUnsafeBufferPointer { table.send_parameters!(table.instance, player, $0.baseAddress, UInt32(raw.count), nanoseconds, error) } }
    }

    func scheduleCurve(_ curve: HapticParameterCurve, player: UInt64, at time: Double) throws(HapticEngineError) {
        let nanoseconds: UInt64 = time > 0 ? UInt64(time * 1e9) : 0
        let points = curve.controlPoints.map { haptics_client_point_v1(time: curve.relativeTime + $0.relativeTime, value: $0.value) }
        try perform { error in
            points.withUnsafeBufferPointer { table.schedule_curve!(table.instance, player, curve.id.rawValue, $0.baseAddress, UInt32(points.count), nanoseconds, error) }
        }
    }

    func stopAll() throws(HapticEngineError) {
        try perform { table.stop_all!(table.instance, $0) }
    }

    /// A line for the log of the process using the service.
    func warn(_ message: String) {
        host.logger.warning("\(message)")
    }

    // MARK: - What the service says

    /// Calls `handler` once when player `id` ends, with the service's reason.
    func onEnded(_ id: UInt64, _ handler: @escaping @Sendable (String) -> Void) {
        host.endedHandlers.withLock { $0[id] = handler }
    }

    /// Forgets the handler of player `id`.
    func forgetEnded(_ id: UInt64) {
        _ = host.endedHandlers.withLock { $0.removeValue(forKey: id) }
    }

    /// Calls `handler` for every device event (and with `.disconnected` when the service leaves).
    func onEvent(_ handler: @escaping @Sendable (DaemonEvent) -> Void) {
        host.eventHandlers.withLock { $0.append(handler) }
    }
}

/// Why hapticsd is not used: shown by `haptic-cal list` and ``HapticSystem/mode``.
struct DaemonUnavailable: Error, Sendable {
    var reason: String
}

/// A device event from the service.
enum DaemonEvent: Sendable {
    case deviceAdded(String)
    case deviceRemoved(String)
    /// The service left the bus: every device it owned is gone.
    case disconnected
}

/// The host side of the client plugin: the `haptics_client_host_v1` it calls back through, its
/// configuration strings and where its callbacks go.
final class ServiceLinkHost: @unchecked Sendable {
    // `table` is written once in init; the rest is behind Mutexes.
    let table: UnsafeMutablePointer<haptics_client_host_v1>
    private let settings: [String: String]
    private let strings = Mutex<[String: UnsafeMutablePointer<CChar>?]>([:])
    let endedHandlers = Mutex<[UInt64: @Sendable (String) -> Void]>([:])
    let eventHandlers = Mutex<[@Sendable (DaemonEvent) -> Void]>([])
    let logger: Logger

    init(settings: [String: String], logger: Logger) {
        self.settings = settings
        self.logger = logger
        table = .allocate(capacity: 1)
        table.initialize(to: haptics_client_host_v1())
        table.pointee.abi_version = HAPTICS_CLIENT_ABI_VERSION
        table.pointee.struct_size = UInt32(MemoryLayout<haptics_client_host_v1>.size)
        table.pointee.context = Unmanaged.passUnretained(self).toOpaque()
        table.pointee.get_config = { context, key in ServiceLinkHost.from(context).configuration(String(cString: key)) }
        table.pointee.log = { context, level, message in
            let host = ServiceLinkHost.from(context)
            let text = String(cString: message)
            if level >= Int32(HAPTICS_LOG_WARNING.rawValue) { host.logger.warning("\(text)") } else { host.logger.debug("\(text)") }
        }
        table.pointee.player_ended = { context, player, reason in
            let host = ServiceLinkHost.from(context)
            let handler = host.endedHandlers.withLock { $0.removeValue(forKey: player) }
            handler?(String(cString: reason))
        }
        table.pointee.notify = { context, event, deviceID in
            let host = ServiceLinkHost.from(context)
            let id = String(cString: deviceID)
            let translated: DaemonEvent? =
                switch UInt32(event) {
                case HAPTICS_CLIENT_DEVICE_ADDED.rawValue: .deviceAdded(id)
                case HAPTICS_CLIENT_DEVICE_REMOVED.rawValue: .deviceRemoved(id)
                case HAPTICS_CLIENT_DISCONNECTED.rawValue: .disconnected
                default: nil
                }
            guard let translated else { return }
            if case .disconnected = translated {
                // Every player the service ran is gone with it.
                let handlers = host.endedHandlers.withLock { handlers in
                    defer { handlers.removeAll() }
                    return Array(handlers.values)
                }
                for handler in handlers { handler("disconnected") }
            }
            for handler in host.eventHandlers.withLock({ $0 }) { handler(translated) }
        }
    }

    deinit {
        for case let pointer? in strings.withLock({ $0.values }) { free(pointer) }
        table.deallocate()
    }

    private static func from(_ context: UnsafeMutableRawPointer?) -> ServiceLinkHost {
        Unmanaged<ServiceLinkHost>.fromOpaque(context!).takeUnretainedValue()
    }

    /// `daemon.bus` (`HAPTICS_DAEMON_BUS`: session, system or an address) and `daemon.app-id`
    /// (`HAPTICS_APP_ID`, else the executable's name).
    private func configuration(_ key: String) -> UnsafePointer<CChar>? {
        strings.withLock { cache in
            if let cached = cache[key] { return cached.map { UnsafePointer($0) } }
            var value = settings[key]
            if key == "daemon.app-id" {
                value = value ?? Environment.value("HAPTICS_APP_ID") ?? Self.defaultAppID()
            } else {
                value = value ?? Environment.value(HostContext.environmentName(for: key))
            }
            let copy = value.map { strdup($0)! }
            cache[key] = copy
            return copy.map { UnsafePointer($0) }
        }
    }

    /// The executable's name, kept to the characters an app id allows (`haptic-cal`, `my-game`).
    static func defaultAppID() -> String {
        let name = ProcessPaths.executablePath()?.split(separator: "/").last.map(String.init) ?? "swift-haptics"
        var id = String(name.unicodeScalars.map { scalar -> Character in
            scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(Character(scalar)) || scalar == "-" || scalar == "_" || scalar == ".")
                ? Character(scalar) : "-"
        })
        while let first = id.first, first == "." || first == "-" || first.isNumber { id.removeFirst() }
        return id.isEmpty ? "swift-haptics" : String(id.prefix(255))
    }
}
