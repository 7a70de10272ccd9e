import HapticsBus

/// What the service did since it started, for `GetStatistics` (and haptics-bench's accounting):
/// every play call is counted once as played, deferred, coalesced or refused with its reason.
struct Statistics {
    var calls = 0
    /// Plays started at once.
    var played = 0
    /// Effects the overuse guard deferred (each plays later, standing for the calls coalesced into it).
    var deferred = 0
    /// Effects absorbed into a deferred play.
    var coalesced = 0
    /// Calls refused, by error name (the part after `Error.`).
    var refused: [String: Int] = [:]
    /// Players ended, by reason.
    var ended: [String: Int] = [:]
    var feedbackEvents = 0

    mutating func refuse(_ error: BusError) {
        let reason = error.name.hasPrefix(DaemonError.prefix) ? String(error.name.dropFirst(DaemonError.prefix.count)) : error.name
        refused[reason, default: 0] += 1
    }

    func entries(players: Int, clients: Int, guards: Int, devices: Int, uptime: Double) -> [(key: String, value: BusValue)] {
        var entries: [(key: String, value: BusValue)] = [
            ("calls", .uint64(UInt64(calls))), ("played", .uint64(UInt64(played))), ("deferred", .uint64(UInt64(deferred))),
            ("coalesced", .uint64(UInt64(coalesced))), ("refused", .uint64(UInt64(refused.values.reduce(0, +)))),
            ("feedback-events", .uint64(UInt64(feedbackEvents))), ("players", .uint32(UInt32(players))),
            ("clients", .uint32(UInt32(clients))), ("guards", .uint32(UInt32(guards))), ("devices", .uint32(UInt32(devices))),
            ("uptime-s", .double(uptime)),
        ]
        for (reason, count) in refused.sorted(by: { $0.key < $1.key }) { entries.append(("refused." + reason, .uint64(UInt64(count)))) }
        for (reason, count) in ended.sorted(by: { $0.key < $1.key }) { entries.append(("ended." + reason, .uint64(UInt64(count)))) }
        return entries
    }
}
