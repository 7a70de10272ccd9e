import Haptics
import HapticsBus

/// `org.swifthaptics.Haptics1.Player` at `/org/swifthaptics/Haptics1/player/N`: one player, controlled
/// by the client that created it (Core Haptics' advanced player).
extension HapticsDaemon {
    /// One call on a player: the caller's player at the call's path, the call's arguments, and
    /// what every method needs. Each method ends with an empty reply.
    struct PlayerCall {
        let call: BusMessage
        let record: PlayerRecord
        let arguments: BusReader
        /// When the call arrived, in monotonic nanoseconds.
        let now: UInt64

        /// The player, or the error for one still waiting on the overuse guard.
        func player() throws(BusError) -> any HapticAdvancedPatternPlayer { try record.started().player }

        /// Runs an engine call, its failure as the device's.
        func engine(_ body: () throws(HapticEngineError) -> Void) throws(BusError) {
            do { try body() } catch { throw DaemonError.deviceFailed(record.deviceID, "\(error)") }
        }

        /// The `at_usec` argument as an engine time (see ``Validation/time(_:_:now:)``; 0: now).
        func time() throws(BusError) -> Double { try Validation.time(arguments.uint64(), "at_usec", now: now) }
    }

    /// Runs `body` on the caller's player at the call's path, then replies.
    func onPlayer(_ call: BusMessage, _ body: (PlayerCall) throws(BusError) -> Void) throws(BusError) {
        let record = try players.record(at: call.path ?? "", for: call.sender)
        try body(PlayerCall(call: call, record: record, arguments: call.reader, now: HapticInstant.monotonicNow().nanoseconds))
        try reply(call)
    }

    /// `Start(t at_usec)`.
    func startPlayer(_ call: PlayerCall) throws(BusError) {
        let at = try call.time()
        let player = try call.player()
        call.record.pendingReason = nil
        try call.engine { () throws(HapticEngineError) in try player.start(atTime: at) }
    }

    /// `Stop(t at_usec)`: at 0 the player ends now (its `Ended` says "stopped").
    func stopPlayer(_ call: PlayerCall) throws(BusError) {
        let at = try call.time()
        if at == 0 {
            players.stop(call.record, reason: "stopped")
        } else {
            let player = try call.player()
            call.record.pendingReason = "stopped"
            try call.engine { () throws(HapticEngineError) in try player.stop(atTime: at) }
        }
    }

    /// `Pause(t at_usec)`.
    func pausePlayer(_ call: PlayerCall) throws(BusError) {
        let at = try call.time()
        let player = try call.player()
        try call.engine { () throws(HapticEngineError) in try player.pause(atTime: at) }
    }

    /// `Resume(t at_usec)`.
    func resumePlayer(_ call: PlayerCall) throws(BusError) {
        let at = try call.time()
        let player = try call.player()
        try call.engine { () throws(HapticEngineError) in try player.resume(atTime: at) }
    }

    /// `Seek(d offset)`, in seconds within the pattern.
    func seekPlayer(_ call: PlayerCall) throws(BusError) {
        let offset = try Validation.number(call.arguments.double(), "offset", in: 0...max(call.record.duration, 0))
        let player = try call.player()
        try call.engine { () throws(HapticEngineError) in try player.seek(toOffset: offset) }
    }

    /// `SendParameters(a(sdd) parameters, t at_usec)`: id, value, relative time (s).
    func sendParameters(_ call: PlayerCall) throws(BusError) {
        let arguments = call.arguments
        let raw = try arguments.array("(sdd)") { () throws(BusError) in
            try arguments.structure("sdd") { () throws(BusError) in (try arguments.string(), try arguments.double(), try arguments.double()) }
        }
        let at = try call.time()
        var parameters: [HapticDynamicParameter] = []
        for (index, entry) in raw.enumerated() {
            let id = try Self.parameterID(entry.0, field: "parameters[\(index)].id")
            let value = try Validation.number(entry.1, "parameters[\(index)].value (\(id.rawValue))", in: id.range)
            let relative = try Validation.number(entry.2, "parameters[\(index)].relative_time", in: 0...3600)
            parameters.append(HapticDynamicParameter(parameterID: id, value: value, relativeTime: relative))
        }
        let player = try call.player()
        try call.engine { () throws(HapticEngineError) in try player.sendParameters(parameters, atTime: at) }
    }

    /// `ScheduleParameterCurve(s parameter, a(dd) points, t at_usec)`: points are (time s, value).
    func scheduleParameterCurve(_ call: PlayerCall) throws(BusError) {
        let arguments = call.arguments
        let id = try Self.parameterID(arguments.string(), field: "parameter")
        let points = try arguments.array("(dd)") { () throws(BusError) in
            try arguments.structure("dd") { () throws(BusError) in (try arguments.double(), try arguments.double()) }
        }
        let at = try call.time()
        guard (1...HapticParameterCurve.maximumControlPoints).contains(points.count) else {
            throw DaemonError.invalidArgument("points", "\(points.count) control points; a curve has 1…\(HapticParameterCurve.maximumControlPoints)")
        }
        var controlPoints: [HapticParameterCurve.ControlPoint] = []
        var previous = -1.0
        for (index, point) in points.enumerated() {
            let time = try Validation.number(point.0, "points[\(index)].time", in: 0...3600)
            guard time >= previous else {
                throw DaemonError.invalidArgument("points[\(index)].time", "\(time) comes before the previous point's \(previous); times must not decrease")
            }
            previous = time
            controlPoints.append(.init(relativeTime: time, value: try Validation.number(point.1, "points[\(index)].value (\(id.rawValue))", in: id.range)))
        }
        let player = try call.player()
        let curve = HapticParameterCurve(parameterID: id, controlPoints: controlPoints)
        try call.engine { () throws(HapticEngineError) in try player.scheduleParameterCurve(curve, atTime: at) }
    }

    /// A dynamic parameter by its Core Haptics name (`HapticIntensityControl`, …).
    static func parameterID(_ name: String, field: String) throws(BusError) -> HapticDynamicParameter.ID {
        guard let id = HapticDynamicParameter.ID(rawValue: name) else {
            throw DaemonError.invalidArgument(
                field, "no parameter '\(name)'; parameters: \(HapticDynamicParameter.ID.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return id
    }
}
