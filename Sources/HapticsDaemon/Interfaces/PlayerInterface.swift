import Haptics
import HapticsBus

/// `org.swifthaptics.Haptics1.Player` at `/org/swifthaptics/Haptics1/player/N`: one player, controlled
/// by the client that created it (Core Haptics' advanced player).
extension HapticsDaemon {
    func playerCall(_ call: BusMessage) throws(BusError) {
        let record = try players.record(at: call.path ?? "", for: call.sender)
        let arguments = call.reader
        let now = HapticInstant.monotonicNow().nanoseconds
        func player() throws(BusError) -> any HapticAdvancedPatternPlayer {
            guard let player = record.player else {
                throw DaemonError.invalidArgument("player", "\(record.path) waits for the overuse guard and starts by itself")
            }
            return player
        }
        func engineCall(_ body: () throws(HapticEngineError) -> Void) throws(BusError) {
            do { try body() } catch { throw DaemonError.deviceFailed(record.deviceID, "\(error)") }
        }
        switch call.member ?? "" {
        case "Start":
            let at = try Validation.time(arguments.uint64(), "at_usec", now: now)
            let player = try player()
            record.pendingReason = nil
            try engineCall { () throws(HapticEngineError) in try player.start(atTime: at) }
        case "Stop":
            let at = try Validation.time(arguments.uint64(), "at_usec", now: now)
            if at == 0 {
                players.stop(record, reason: "stopped")
            } else {
                let player = try player()
                record.pendingReason = "stopped"
                try engineCall { () throws(HapticEngineError) in try player.stop(atTime: at) }
            }
        case "Pause":
            let at = try Validation.time(arguments.uint64(), "at_usec", now: now)
            let player = try player()
            try engineCall { () throws(HapticEngineError) in try player.pause(atTime: at) }
        case "Resume":
            let at = try Validation.time(arguments.uint64(), "at_usec", now: now)
            let player = try player()
            try engineCall { () throws(HapticEngineError) in try player.resume(atTime: at) }
        case "Seek":
            let offset = try Validation.number(arguments.double(), "offset", in: 0...max(record.duration, 0))
            let player = try player()
            try engineCall { () throws(HapticEngineError) in try player.seek(toOffset: offset) }
        case "SendParameters":
            let raw = try arguments.array("(sdd)") { () throws(BusError) in
                try arguments.structure("sdd") { () throws(BusError) in (try arguments.string(), try arguments.double(), try arguments.double()) }
            }
            let at = try Validation.time(arguments.uint64(), "at_usec", now: now)
            var parameters: [HapticDynamicParameter] = []
            for (index, entry) in raw.enumerated() {
                let id = try Self.parameterID(entry.0, field: "parameters[\(index)].id")
                let value = try Validation.number(entry.1, "parameters[\(index)].value (\(id.rawValue))", in: id.range)
                let relative = try Validation.number(entry.2, "parameters[\(index)].relative_time", in: 0...3600)
                parameters.append(HapticDynamicParameter(parameterID: id, value: value, relativeTime: relative))
            }
            let player = try player()
            try engineCall { () throws(HapticEngineError) in try player.sendParameters(parameters, atTime: at) }
        case "ScheduleParameterCurve":
            let id = try Self.parameterID(arguments.string(), field: "parameter")
            let points = try arguments.array("(dd)") { () throws(BusError) in
                try arguments.structure("dd") { () throws(BusError) in (try arguments.double(), try arguments.double()) }
            }
            let at = try Validation.time(arguments.uint64(), "at_usec", now: now)
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
            let player = try player()
            let curve = HapticParameterCurve(parameterID: id, controlPoints: controlPoints)
            try engineCall { () throws(HapticEngineError) in try player.scheduleParameterCurve(curve, atTime: at) }
        case "Cancel":
            players.stop(record, reason: "stopped")
        case "Release":
            players.release(record)
        default:
            throw BusError(name: "org.freedesktop.DBus.Error.UnknownMethod", message: "no method \(call.member ?? "?")")
        }
        try reply(call)
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
