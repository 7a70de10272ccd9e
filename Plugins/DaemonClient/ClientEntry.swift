#if canImport(Glibc)
import Glibc
#endif
import CHapticsABI
import HapticsBus
import HapticsPluginKit
import HapticsTriggers
import Synchronization

/// The client transport's entry point (`haptics_client.h`): fills the table with functions that
/// call hapticsd over D-Bus through one ``ServiceConnection``.
@_cdecl("haptics_client_fill_v1")
public func hapticsClientFill(_ host: UnsafePointer<haptics_client_host_v1>, _ out: UnsafeMutablePointer<haptics_client_v1>, _ size: Int) -> Int32 {
    guard size >= MemoryLayout<haptics_client_v1>.size else { return -EINVAL }
    guard host.pointee.abi_version == HAPTICS_CLIENT_ABI_VERSION else { return -EPROTO }
    let client: ClientInstance
    do {
        client = try ClientInstance(host: host.pointee)
    } catch {
        host.pointee.log?(host.pointee.context, Int32(HAPTICS_LOG_ERROR.rawValue), "hapticsd client: \(error)")
        return -EIO
    }
    var table = haptics_client_v1()
    table.abi_version = HAPTICS_CLIENT_ABI_VERSION
    table.struct_size = UInt32(MemoryLayout<haptics_client_v1>.size)
    table.instance = Unmanaged.passRetained(client).toOpaque()
    table.connect = { instance, daemon, error in
        ClientInstance.from(instance).run(error) { client throws(BusError) in
            let (name, pid, version) = try client.connection.connect()
            daemon.pointee.pid = pid
            copyCString(name, into: &daemon.pointee.unique_name)
            copyCString(version, into: &daemon.pointee.version)
            let bus: String
            switch client.connection.address {
            case .session: bus = "session"
            case .system: bus = "system"
            case .address(let text): bus = text
            }
            copyCString(bus, into: &daemon.pointee.bus)
        }
    }
    table.list_devices = { instance, devices, capacity, count, error in
        ClientInstance.from(instance).run(error) { client throws(BusError) in
            let listed = try client.connection.call(member: "ListDevices") { reader throws(BusError) in
                try reader.array("(sa{sv})") { () throws(BusError) in
                    try reader.structure("sa{sv}") { () throws(BusError) in (try reader.string(), try reader.dictionary()) }
                }
            }
            count.pointee = UInt32(listed.count)
            let specs = listed.map { DeviceListing.spec(id: $0.0, details: $0.1) }
            client.listed.withLock { $0 = Dictionary(specs.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first }) }
            guard let devices else { return }
            for (index, (spec, entry)) in zip(specs, listed).prefix(Int(capacity)).enumerated() {
                devices[index] = DeviceListing.device(spec, details: entry.1)
            }
        }
    }
    table.prepare = { instance, device, error in
        ClientInstance.from(instance).run(error) { client throws(BusError) in
            try client.connection.call(member: "Prepare") { writer throws(BusError) in
                try writer.string(client.connection.appID)
                try writer.string(String(cString: device))
            } read: { _ throws(BusError) in }
        }
    }
    table.play_effect = { instance, device, effect, intensity, player, disposition, error in
        ClientInstance.from(instance).run(error) { client throws(BusError) in
            let (path, word) = try client.connection.call(member: "PlayEffect") { writer throws(BusError) in
                try writer.string(client.connection.appID)
                try writer.string(String(cString: device))
                try writer.string(String(cString: effect))
                try writer.double(intensity)
            } read: { reader throws(BusError) in (try reader.objectPath(), try reader.string()) }
            player.pointee = HapticsServiceName.playerID(fromPath: path) ?? 0
            disposition.pointee =
                switch word {
                case "deferred": HAPTICS_CLIENT_DEFERRED.rawValue
                case "coalesced": HAPTICS_CLIENT_COALESCED.rawValue
                default: HAPTICS_CLIENT_PLAYED.rawValue
                }
        }
    }
    table.play_pattern = { instance, device, ahap, intensity, player, error in
        ClientInstance.from(instance).run(error) { client throws(BusError) in
            let path = try client.connection.call(member: "PlayPattern") { writer throws(BusError) in
                try writer.string(client.connection.appID)
                try writer.string(String(cString: device))
                try writer.string(String(cString: ahap))
                try writer.double(intensity)
                try writer.dictionary([])
            } read: { reader throws(BusError) in try reader.objectPath() }
            player.pointee = HapticsServiceName.playerID(fromPath: path) ?? 0
        }
    }
    table.create_player = { instance, device, ahap, player, error in
        ClientInstance.from(instance).run(error) { client throws(BusError) in
            let path = try client.connection.call(member: "CreatePlayer") { writer throws(BusError) in
                try writer.string(client.connection.appID)
                try writer.string(String(cString: device))
                try writer.string(String(cString: ahap))
            } read: { reader throws(BusError) in try reader.objectPath() }
            player.pointee = HapticsServiceName.playerID(fromPath: path) ?? 0
        }
    }
    table.player_command = { instance, player, command, at, error in
        ClientInstance.from(instance).run(error) { client throws(BusError) in
            let member: String
            switch command {
            case HAPTICS_CLIENT_START.rawValue: member = "Start"
            case HAPTICS_CLIENT_STOP.rawValue: member = "Stop"
            case HAPTICS_CLIENT_PAUSE.rawValue: member = "Pause"
            case HAPTICS_CLIENT_RESUME.rawValue: member = "Resume"
            case HAPTICS_CLIENT_CANCEL.rawValue: member = "Cancel"
            case HAPTICS_CLIENT_RELEASE.rawValue: member = "Release"
            default: throw BusError(name: StandardBusError.invalidArgs, message: "command \(command) is not a haptics_client_command")
            }
            let timed = command <= HAPTICS_CLIENT_RESUME.rawValue
            try client.connection.call(path: HapticsServiceName.playerPath(player), interface: HapticsServiceName.playerInterface, member: member) { writer throws(BusError) in
                if timed { try writer.uint64(at / 1000) }
            } read: { _ throws(BusError) in }
        }
    }
    table.player_set = { instance, player, property, value, error in
        ClientInstance.from(instance).run(error) { client throws(BusError) in
            if property == HAPTICS_CLIENT_POSITION.rawValue {
                try client.connection.call(path: HapticsServiceName.playerPath(player), interface: HapticsServiceName.playerInterface, member: "Seek") { writer throws(BusError) in
                    try writer.double(value)
                } read: { _ throws(BusError) in }
                return
            }
            let (name, typed) = try PlayerProperty.named(property, value: value)
            try client.connection.call(path: HapticsServiceName.playerPath(player), interface: "org.freedesktop.DBus.Properties", member: "Set") { writer throws(BusError) in
                try writer.string(HapticsServiceName.playerInterface)
                try writer.string(name)
                try writer.append(.variant(typed))
            } read: { _ throws(BusError) in }
        }
    }
    table.player_get = { instance, player, property, value, error in
        ClientInstance.from(instance).run(error) { client throws(BusError) in
            let (name, _) = try PlayerProperty.named(property, value: 0)
            let read = try client.connection.call(
                path: HapticsServiceName.playerPath(player), interface: "org.freedesktop.DBus.Properties", member: "Get"
            ) { writer throws(BusError) in
                try writer.string(HapticsServiceName.playerInterface)
                try writer.string(name)
            } read: { reader throws(BusError) in try reader.value().unwrapped }
            value.pointee = read.boolValue.map { $0 ? 1 : 0 } ?? read.doubleValue ?? 0
        }
    }
    table.send_parameters = { instance, player, parameters, count, at, error in
        ClientInstance.from(instance).run(error) { client throws(BusError) in
            let list = (0..<Int(count)).map { index -> BusValue in
                let parameter = parameters![index]
                return .structure([.string(String(cString: parameter.id)), .double(parameter.value), .double(parameter.relative_time)])
            }
            try client.connection.call(path: HapticsServiceName.playerPath(player), interface: HapticsServiceName.playerInterface, member: "SendParameters") {
                writer throws(BusError) in
                try writer.append(.array(element: "(sdd)", list))
                try writer.uint64(at / 1000)
            } read: { _ throws(BusError) in }
        }
    }
    table.schedule_curve = { instance, player, parameter, points, count, at, error in
        ClientInstance.from(instance).run(error) { client throws(BusError) in
            let list = (0..<Int(count)).map { index -> BusValue in .structure([.double(points![index].time), .double(points![index].value)]) }
            try client.connection.call(path: HapticsServiceName.playerPath(player), interface: HapticsServiceName.playerInterface, member: "ScheduleParameterCurve") {
                writer throws(BusError) in
                try writer.string(String(cString: parameter))
                try writer.append(.array(element: "(dd)", list))
                try writer.uint64(at / 1000)
            } read: { _ throws(BusError) in }
        }
    }
    table.stop_all = { instance, error in
        ClientInstance.from(instance).run(error) { client throws(BusError) in
            try client.connection.call(member: "StopAll") { _ throws(BusError) in } read: { _ throws(BusError) in }
        }
    }
    table.describe_device = { instance, device, info, error in
        ClientInstance.from(instance).run(error) { client throws(BusError) in
            let id = String(cString: device)
            // The listing just made carried the details already; a device it did not have is asked for.
            if let spec = client.listed.withLock({ $0[id] }) {
                spec.writeInfo(into: info)
                return
            }
            let details = try client.connection.call(member: "GetDevice") { writer throws(BusError) in
                try writer.string(id)
            } read: { reader throws(BusError) in try reader.dictionary() }
            DeviceListing.spec(id: id, details: details).writeInfo(into: info)
        }
    }
    table.register_audio = { instance, name, samples, frames, channels, rate, id, error in
        ClientInstance.from(instance).run(error) { client throws(BusError) in
            let count = Int(frames) * Int(channels)
            id.pointee = try client.connection.call(member: "RegisterAudio") { writer throws(BusError) in
                try writer.string(client.connection.appID)
                try writer.string(String(cString: name))
                try writer.uint32(rate)
                try writer.uint32(channels)
                // The service takes 32-bit little-endian floats.
                #if _endian(little)
                try writer.bytes(UnsafeRawBufferPointer(start: samples, count: count * MemoryLayout<Float>.size))
                #else
                let little = (0..<count).map { samples[$0].bitPattern.littleEndian }
                var failure: BusError?
                little.withUnsafeBytes { bytes in
                    do throws(BusError) { try writer.bytes(bytes) } catch { failure = error }
                }
                if let failure { throw failure }
                #endif
            } read: { reader throws(BusError) in try reader.uint64() }
        }
    }
    table.unregister_audio = { instance, id, error in
        ClientInstance.from(instance).run(error) { client throws(BusError) in
            try client.connection.call(member: "UnregisterAudio") { writer throws(BusError) in try writer.uint64(id) } read: { _ throws(BusError) in }
        }
    }
    table.set_triggers = { instance, device, right, left, error in
        ClientInstance.from(instance).run(error) { client throws(BusError) in
            /// The `a{sv}` of one trigger's effect (TriggerHolds reads it): empty leaves it as it is.
            func entries(_ raw: UnsafePointer<haptics_trigger_effect_v1>?) throws(BusError) -> [(key: String, value: BusValue)] {
                guard let raw else { return [] }
                let effect: AdaptiveTriggerEffect
                do throws(AdaptiveTriggerError) { effect = try AdaptiveTriggerEffect(raw.pointee) } catch {
                    throw BusError(name: "org.freedesktop.DBus.Error.InvalidArgs", message: "\(error)")
                }
                let keyed = effect.keyed
                return [("effect", .string(keyed.name))] + keyed.parameters.map { key, value in
                    switch value {
                    case .number(let number): (key, .double(number))
                    case .list(let numbers): (key, .array(element: "d", numbers.map { .double($0) }))
                    }
                }
            }
            let rightEntries = try entries(right), leftEntries = try entries(left)
            try client.connection.call(member: "SetTriggers") { writer throws(BusError) in
                try writer.string(client.connection.appID)
                try writer.string(String(cString: device))
                try writer.dictionary(rightEntries)
                try writer.dictionary(leftEntries)
            } read: { _ throws(BusError) in }
        }
    }
    table.destroy = { instance in
        guard let instance else { return }
        let client = Unmanaged<ClientInstance>.fromOpaque(instance).takeRetainedValue()
        client.connection.close()
    }
    withUnsafeBytes(of: &table) { bytes in
        UnsafeMutableRawPointer(out).copyMemory(from: bytes.baseAddress!, byteCount: min(size, bytes.count))
    }
    return 0
}

/// One client instance: the host's callbacks and the connection.
final class ClientInstance: @unchecked Sendable {
    // The host table is copied once and only read; the connection is thread-safe.
    let host: haptics_client_host_v1
    let connection: ServiceConnection
    /// The devices of the last `list_devices`, by id, as their details described them: what
    /// `describe_device` gives without a call of its own.
    let listed = Mutex<[String: DeviceSpec]>([:])

    init(host: haptics_client_host_v1) throws(BusError) {
        self.host = host
        func setting(_ key: String) -> String? {
            guard let get = host.get_config, let value = get(host.context, key) else { return nil }
            return String(cString: value)
        }
        let address = BusConnection.Address(setting("daemon.bus") ?? "session")
        let appID = setting("daemon.app-id") ?? "swift-haptics"
        let context = UncheckedHost(host: host)
        connection = try ServiceConnection(address: address, appID: appID) { events in
            for event in events {
                switch event {
                case .ended(let player, let reason): context.host.player_ended?(context.host.context, player, reason)
                case .device(let kind, let id): context.host.notify?(context.host.context, kind, id)
                }
            }
        }
    }

    static func from(_ instance: UnsafeMutableRawPointer?) -> ClientInstance {
        Unmanaged<ClientInstance>.fromOpaque(instance!).takeUnretainedValue()
    }

    /// Runs `body`; a thrown error fills `error` (when given) and becomes a negative errno.
    func run(_ error: UnsafeMutablePointer<haptics_client_error_v1>?, _ body: (ClientInstance) throws(BusError) -> Void) -> Int32 {
        do {
            try body(self)
            return 0
        } catch let failure {
            if let error {
                copyCString(failure.name, into: &error.pointee.name)
                copyCString(failure.message, into: &error.pointee.message)
            }
            if let code = failure.errno { return -code }
            switch failure.name {
            case StandardBusError.serviceUnknown, StandardBusError.nameHasNoOwner: return -ENOENT
            case StandardBusError.disconnected: return -ENOTCONN
            case StandardBusError.noReply: return -ETIMEDOUT
            case StandardBusError.invalidArgs: return -EINVAL
            default: return -EIO
            }
        }
    }
}

/// The host table, carried into the connection's delivery closure (its functions may be called from any thread).
struct UncheckedHost: @unchecked Sendable {
    let host: haptics_client_host_v1
}

/// Player properties by their `haptics_client_property` number.
enum PlayerProperty {
    static func named(_ property: UInt32, value: Double) throws(BusError) -> (String, BusValue) {
        switch property {
        case HAPTICS_CLIENT_LOOP.rawValue: ("Loop", .bool(value != 0))
        case HAPTICS_CLIENT_LOOP_END.rawValue: ("LoopEnd", .double(value))
        case HAPTICS_CLIENT_RATE.rawValue: ("Rate", .double(value))
        case HAPTICS_CLIENT_MUTED.rawValue: ("Muted", .bool(value != 0))
        case HAPTICS_CLIENT_INTENSITY.rawValue: ("Intensity", .double(value))
        case HAPTICS_CLIENT_POSITION.rawValue: ("Position", .double(value))
        default: throw BusError(name: StandardBusError.invalidArgs, message: "property \(property) is not a haptics_client_property")
        }
    }
}
