import CHapticsdInterfaces
import Haptics
import HapticsBus

/// Every property of every interface: reads and writes, each write announced with
/// `PropertiesChanged` when the interface table says it emits changes.
extension HapticsDaemon {
    func getProperty(path: String, interface: String, name: String, into writer: BusWriter) throws(BusError) {
        switch (interface, name) {
        case (HAPTICSD_INTERFACE, "Version"): try writer.string(Self.version)
        case (HAPTICSD_INTERFACE, "Enabled"): try writer.bool(policy.global.isEnabled)
        case (HAPTICSD_INTERFACE, "IntensityScale"): try writer.double(policy.global.intensityScale)
        case (HAPTICSD_INTERFACE, "MinimumIntervals"):
            var intervals: [String: Double] = [:]
            for kind in Set(HapticPolicy.defaultMinimumIntervals.keys).union(policy.global.minimumIntervals.keys) {
                intervals[kind] = policy.global.minimumInterval(for: kind)
            }
            try writer.append(PolicyStore.intervalsValue(intervals))
        case (HAPTICSD_INTERFACE, "DefaultDevice"): try writer.string(devices.defaultDevice?.id ?? "")
        case (HAPTICSD_INTERFACE, "Devices"): try writer.append(.strings(devices.devices.map(\.id)))
        case (HAPTICSD_INTERFACE, "AppPolicies"):
            try writer.container("a", "{sa{sv}}") { () throws(BusError) in
                for (app, appPolicy) in policy.apps.sorted(by: { $0.key < $1.key }) {
                    try writer.container("e", "sa{sv}") { () throws(BusError) in
                        try writer.string(app)
                        try writer.dictionary(PolicyStore.entries(of: appPolicy))
                    }
                }
            }
        case (HAPTICSD_FEEDBACK_INTERFACE, "Profile"): try writer.string(policy.profile.name)
        case (HAPTICSD_PLAYER_INTERFACE, _):
            try getPlayerProperty(path: path, name: name, into: writer)
        default:
            throw BusError(name: "org.freedesktop.DBus.Error.UnknownProperty", message: "no property \(interface).\(name)")
        }
    }

    private func getPlayerProperty(path: String, name: String, into writer: BusWriter) throws(BusError) {
        guard let id = PlayerRegistry.id(fromPath: path), let record = players.records[id], !record.released else {
            throw DaemonError.unknownPlayer(path)
        }
        let player = record.player
        switch name {
        case "Device": try writer.string(record.deviceID)
        case "AppId": try writer.string(record.appID)
        case "OneShot": try writer.bool(record.oneShot)
        case "Duration": try writer.double(record.duration)
        case "State":
            if let player, let engine = record.engine {
                try writer.string(engine.status(of: player)?.rawValue ?? "finished")
            } else {
                try writer.string("waiting")
            }
        case "Position": try writer.double(player?.currentTime ?? 0)
        case "Loop": try writer.bool(player?.loopEnabled ?? false)
        case "LoopEnd": try writer.double(player?.loopEnd ?? 0)
        case "Rate": try writer.double(player?.playbackRate ?? 1)
        case "Muted": try writer.bool(record.clientMuted)
        case "Intensity": try writer.double(record.intensity)
        default: throw BusError(name: "org.freedesktop.DBus.Error.UnknownProperty", message: "no property \(HAPTICSD_PLAYER_INTERFACE).\(name)")
        }
    }

    func setProperty(path: String, interface: String, name: String, from reader: BusReader, sender: String?) throws(BusError) {
        // The service's and feedbackd's settings belong to everyone; a player's to its owner.
        if interface == HAPTICSD_INTERFACE || interface == HAPTICSD_FEEDBACK_INTERFACE { try authorizeSettings(sender) }
        switch (interface, name) {
        case (HAPTICSD_INTERFACE, "Enabled"):
            var global = policy.global
            global.isEnabled = try reader.bool()
            setGlobalPolicy(global)
            for app in Set(players.records.values.map(\.appID)) { applyAppPolicy(app) }
            emitPropertiesChanged(["Enabled"])
        case (HAPTICSD_INTERFACE, "IntensityScale"):
            var global = policy.global
            global.intensityScale = try Validation.number(reader.double(), "IntensityScale", in: 0...1)
            setGlobalPolicy(global)
            emitPropertiesChanged(["IntensityScale"])
        case (HAPTICSD_INTERFACE, "MinimumIntervals"):
            let intervals = try PolicyStore.intervals(from: reader.value(), field: "MinimumIntervals")
            var global = policy.global
            global.minimumIntervals = HapticPolicy.defaultMinimumIntervals.merging(intervals) { _, new in new }
            setGlobalPolicy(global)
            emitPropertiesChanged(["MinimumIntervals"])
        case (HAPTICSD_INTERFACE, "DefaultDevice"):
            let id = try reader.string()
            if !id.isEmpty {
                guard devices.devices.contains(where: { $0.id == id }) else { throw DaemonError.unknownDevice(id, available: devices.devices.map(\.id)) }
            }
            devices.configuredDefault = id
            emitPropertiesChanged(["DefaultDevice"])
        case (HAPTICSD_FEEDBACK_INTERFACE, "Profile"):
            let name = try reader.string()
            guard let profile = FeedbackProfile(name: name) else {
                // feedbackd's interface: its clients match on the freedesktop name.
                throw BusError(name: "org.freedesktop.DBus.Error.InvalidArgs", message: "Profile: '\(name)' is not a profile; use full, quiet or silent")
            }
            guard profile != policy.profile else { return }
            logger.info("feedback profile: \(policy.profile.name) → \(profile.name)")
            policy.profile = profile
            profileChanged()
        case (HAPTICSD_PLAYER_INTERFACE, _):
            let record = try players.record(at: path, for: sender)
            try setPlayerProperty(record, name: name, from: reader)
        default:
            throw BusError(name: "org.freedesktop.DBus.Error.PropertyReadOnly", message: "\(interface).\(name) cannot be written")
        }
    }

    private func setPlayerProperty(_ record: PlayerRecord, name: String, from reader: BusReader) throws(BusError) {
        guard let player = record.player, let engine = record.engine else {
            throw DaemonError.invalidArgument("player", "\(record.path) waits for the overuse guard and starts by itself")
        }
        switch name {
        case "Loop": player.loopEnabled = try reader.bool()
        case "LoopEnd": player.loopEnd = try Validation.number(reader.double(), "LoopEnd", in: 0...3600)
        case "Rate": player.playbackRate = try Validation.number(reader.double(), "Rate", in: 0.01...100)
        case "Muted":
            record.clientMuted = try reader.bool()
            player.isMuted = record.clientMuted || !policy.isEnabled(app: record.appID)
        case "Intensity":
            record.intensity = try Validation.number(reader.double(), "Intensity", in: 0...1)
            engine.setIntensityScale(record.intensity * policy.appScale(app: record.appID), of: player)
        default:
            throw BusError(name: "org.freedesktop.DBus.Error.PropertyReadOnly", message: "\(HAPTICSD_PLAYER_INTERFACE).\(name) cannot be written")
        }
    }
}
