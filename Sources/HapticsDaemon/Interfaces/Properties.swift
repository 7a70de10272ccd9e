import Haptics
import HapticsBus

/// What the properties' handlers (Handlers.swift) read and write: the service's settings (which
/// belong to everyone: each write is authorized first) and each player's. Every write of a
/// property the interface table says emits changes is announced with `PropertiesChanged`.
extension HapticsDaemon {
    /// `MinimumIntervals`: every kind's effective interval, in seconds.
    func minimumIntervalsValue() -> BusValue {
        var intervals: [String: Double] = [:]
        for kind in Set(HapticPolicy.defaultMinimumIntervals.keys).union(policy.global.minimumIntervals.keys) {
            intervals[kind] = policy.global.minimumInterval(for: kind)
        }
        return PolicyStore.intervalsValue(intervals)
    }

    /// `AppPolicies`: each app's settings, by app id.
    func writeAppPolicies(_ writer: BusWriter) throws(BusError) {
        try writer.container("a", "{sa{sv}}") { () throws(BusError) in
            for (app, appPolicy) in policy.apps.sorted(by: { $0.key < $1.key }) {
                try writer.container("e", "sa{sv}") { () throws(BusError) in
                    try writer.string(app)
                    try writer.dictionary(PolicyStore.entries(of: appPolicy))
                }
            }
        }
    }

    /// Writes a setting of the service's (authorized for `sender` first), then announces `name`.
    func setSetting(_ name: String, sender: String?, _ body: () throws(BusError) -> Void) throws(BusError) {
        try authorizeSettings(sender)
        try body()
        emitPropertiesChanged([name])
    }

    /// `Enabled`: off mutes every player.
    func setEnabled(_ reader: BusReader) throws(BusError) {
        var global = policy.global
        global.isEnabled = try reader.bool()
        setGlobalPolicy(global)
        for app in Set(players.records.values.map(\.appID)) { applyAppPolicy(app) }
    }

    /// `IntensityScale`, 0…1.
    func setIntensityScale(_ reader: BusReader) throws(BusError) {
        var global = policy.global
        global.intensityScale = try Validation.number(reader.double(), "IntensityScale", in: 0...1)
        setGlobalPolicy(global)
    }

    /// `MinimumIntervals`: the kinds given replace their defaults.
    func setMinimumIntervals(_ reader: BusReader) throws(BusError) {
        let intervals = try PolicyStore.intervals(from: reader.value(), field: "MinimumIntervals")
        var global = policy.global
        global.minimumIntervals = HapticPolicy.defaultMinimumIntervals.merging(intervals) { _, new in new }
        setGlobalPolicy(global)
    }

    /// `DefaultDevice`: a device id, or empty for the first usable device.
    func setDefaultDevice(_ reader: BusReader) throws(BusError) {
        let id = try reader.string()
        if !id.isEmpty {
            guard devices.devices.contains(where: { $0.id == id }) else { throw DaemonError.unknownDevice(id, available: devices.devices.map(\.id)) }
        }
        devices.configuredDefault = id
    }

    /// feedbackd's `Profile`: full, quiet or silent (authorized as the service's settings are).
    func setProfile(_ reader: BusReader, sender: String?) throws(BusError) {
        try authorizeSettings(sender)
        let name = try reader.string()
        guard let profile = FeedbackProfile(name: name) else {
            // feedbackd's interface: its clients match on the freedesktop name.
            throw BusError(name: "org.freedesktop.DBus.Error.InvalidArgs", message: "Profile: '\(name)' is not a profile; use full, quiet or silent")
        }
        guard profile != policy.profile else { return }
        logger.info("feedback profile: \(policy.profile.name) → \(profile.name)")
        policy.profile = profile
        profileChanged()
    }

    /// A player's `State`: waiting (on the overuse guard), or the engine's status of it.
    func playerState(_ record: PlayerRecord) -> String {
        guard let player = record.player, let engine = record.engine else { return "waiting" }
        return engine.status(of: player)?.rawValue ?? "finished"
    }

    /// Writes a property of the player at `path`, which only its owner may.
    func setPlayerProperty(
        path: String, sender: String?, _ body: (PlayerRecord, any HapticAdvancedPatternPlayer, HapticEngine) throws(BusError) -> Void
    ) throws(BusError) {
        let record = try players.record(at: path, for: sender)
        let (player, engine) = try record.started()
        try body(record, player, engine)
    }
}
