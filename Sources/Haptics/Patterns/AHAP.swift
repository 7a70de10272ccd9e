import HapticsSupport

/// Why an AHAP document could not be read: where (a line and column for JSON syntax, a JSON path
/// such as `$.Pattern[3].Event.Time` for everything else) and what is wrong.
public enum AHAPError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The text is not JSON; `file` names the file when one was read.
    case syntax(JSONSyntaxError, file: String?)
    /// The JSON is not an AHAP pattern, or a value has the wrong type or is not allowed.
    case invalid(JSONPathError, file: String?)
    /// The file could not be read or written.
    case file(FileError)

    public var description: String {
        switch self {
        case .syntax(let error, let file?): "\(file):\(error.line):\(error.column): not valid JSON: \(error.problem)"
        case .syntax(let error, nil): "AHAP is not valid JSON: \(error)"
        case .invalid(let error, let file?): "\(file): \(error)"
        case .invalid(let error, nil): "\(error)"
        case .file(let error): "\(error)"
        }
    }
}

extension HapticPattern {
    /// Reads an AHAP file.
    public init(contentsOfFile path: String) throws(AHAPError) {
        let bytes: [UInt8]
        do { bytes = try readFile(atPath: path) } catch { throw .file(error) }
        do {
            try self.init(ahapBytes: bytes)
        } catch {
            switch error {
            case .syntax(let inner, _): throw .syntax(inner, file: path)
            case .invalid(let inner, _): throw .invalid(inner, file: path)
            case .file: throw error
            }
        }
    }

    /// Reads AHAP text.
    public init(ahap text: String) throws(AHAPError) {
        try self.init(ahapBytes: Array(text.utf8))
    }

    /// Reads AHAP from UTF-8 bytes.
    ///
    /// Accepted as real files have them: trailing commas, no `Version`, integers where floats are
    /// expected, events out of time order, curves before events, audio events (kept; played on waveform devices),
    /// negative control values (clamped), unknown `Metadata` and other unknown keys (kept or ignored).
    /// Rejected with the JSON path: a document that is not a pattern (a lone `Event` object or
    /// `EventParameters` array), unknown pattern item kinds (`ParameterCurves`), unknown parameter
    /// ids, values of the wrong type, NaN-like and negative times, and times or ends past
    /// ``HapticPattern/maximumTime`` (3600 s).
    public init(ahapBytes bytes: [UInt8]) throws(AHAPError) {
        let root: JSONValue
        do { root = try JSONParser(allowTrailingCommas: true).parse(bytes) } catch { throw .syntax(error, file: nil) }
        try self.init(ahapRoot: root)
    }

    /// Reads an AHAP document already parsed as JSON.
    init(ahapRoot root: JSONValue) throws(AHAPError) {
        do {
            self = try AHAPReader.pattern(JSONCursor(root: root))
        } catch let error as JSONPathError {
            throw .invalid(error, file: nil)
        } catch {
            throw .invalid(JSONPathError(path: "$", problem: "\(error)"), file: nil)
        }
    }

    /// The pattern as an AHAP document; reading it back gives an equal pattern.
    public func ahapText(pretty: Bool = true) -> String {
        AHAPWriter.document(self).serialized(pretty: pretty) + (pretty ? "\n" : "")
    }

    /// Writes the pattern as an AHAP file, atomically.
    public func writeAHAP(toFile path: String) throws(AHAPError) {
        do { try writeFileAtomically(Array(ahapText().utf8), toPath: path) } catch { throw .file(error) }
    }
}

/// AHAP document → pattern, keeping the JSON path of everything it reads.
private enum AHAPReader {
    static func pattern(_ root: JSONCursor) throws -> HapticPattern {
        guard case .object = root.value else {
            if root.value.array?.first?.object?["ParameterID"] != nil {
                throw root.error("this is a lone EventParameters array, not a pattern; an AHAP document is an object with a \"Pattern\" array")
            }
            throw root.error("expected an AHAP document (an object with a \"Pattern\" array), found \(root.value.typeName)")
        }
        let document = try root.object()
        guard let items = document.optional("Pattern") else {
            if document.optional("Event") != nil || document.optional("EventType") != nil {
                throw root.error("this is a lone Event, not a pattern; wrap it as {\"Pattern\": [{\"Event\": …}]}")
            }
            throw JSONPathError(path: "$.Pattern", problem: "required key is missing; an AHAP document holds its events in a \"Pattern\" array")
        }
        var events: [HapticEvent] = [], eventPaths: [String] = []
        var parameters: [HapticDynamicParameter] = [], parameterPaths: [String] = []
        var curves: [HapticParameterCurve] = [], curvePaths: [String] = []
        for item in try items.array() {
            let object = try item.object()
            let kinds = object.keys.filter { ["Event", "Parameter", "ParameterCurve"].contains($0) }
            guard kinds.count == 1 else {
                if kinds.count > 1 { throw item.error("holds \(kinds.joined(separator: " and ")); each pattern item holds exactly one") }
                let found = object.keys.isEmpty ? "an empty object" : "\"\(object.keys.joined(separator: "\", \""))\""
                throw item.error("unknown pattern item \(found); expected Event, Parameter or ParameterCurve")
            }
            let body = try object.required(kinds[0])
            switch kinds[0] {
            case "Event":
                events.append(try event(body.object()))
                eventPaths.append(body.path)
            case "Parameter":
                parameters.append(try parameter(body.object()))
                parameterPaths.append(body.path)
            default:
                curves.append(try curve(body.object()))
                curvePaths.append(body.path)
            }
        }
        do {
            var pattern = try HapticPattern(events: events, parameters: parameters, parameterCurves: curves)
            pattern.version = try document.optional("Version")?.number()
            pattern.metadata = try document.optional("Metadata")?.object().object
            return pattern
        } catch let error as PatternError {
            throw JSONPathError(path: path(of: error.location, events: eventPaths, parameters: parameterPaths, curves: curvePaths), problem: error.problem)
        }
    }

    static func path(of location: PatternError.Location, events: [String], parameters: [String], curves: [String]) -> String {
        switch location {
        case .event(let index, let field): "\(events[index]).\(field)"
        case .parameter(let index, let field): "\(parameters[index]).\(field)"
        case .curve(let index, let field): "\(curves[index]).\(field)"
        case .controlPoint(let curve, let point, let field): "\(curves[curve]).ParameterCurveControlPoints[\(point)].\(field)"
        }
    }

    static func identifier<ID: RawRepresentable & CaseIterable>(_ cursor: JSONCursor, _: ID.Type) throws -> ID where ID.RawValue == String {
        let text = try cursor.string()
        guard let id = ID(rawValue: text) else {
            let near = [text + "Control", String(text.dropLast("Control".count))].first { ID(rawValue: $0) != nil && $0 != text }
            let hint = near.map { "did you mean \"\($0)\"? " } ?? ""
            throw cursor.error("unknown parameter \"\(text)\"; \(hint)expected one of: \(ID.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return id
    }

    static func event(_ object: JSONObjectCursor) throws -> HapticEvent {
        let typeCursor = try object.required("EventType")
        let typeName = try typeCursor.string()
        guard let type = HapticEvent.EventType(rawValue: typeName) else {
            throw typeCursor.error("unknown event type \"\(typeName)\"; expected one of: \(HapticEvent.EventType.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        let parameters = try object.optional("EventParameters")?.array().map { entry in
            let parameter = try entry.object()
            return HapticEventParameter(
                parameterID: try identifier(parameter.required("ParameterID"), HapticEventParameter.ID.self),
                value: try parameter.required("ParameterValue").number())
        }
        return HapticEvent(
            eventType: type, parameters: parameters ?? [], relativeTime: try object.optional("Time")?.number() ?? 0,
            duration: try object.optional("EventDuration")?.number() ?? 0,
            waveformPath: try object.optional("EventWaveformPath")?.string(),
            waveformUsesVolumeEnvelope: try object.optional("EventWaveformUseVolumeEnvelope")?.bool(),
            waveformLoopEnabled: try object.optional("EventWaveformLoopEnabled")?.bool())
    }

    static func parameter(_ object: JSONObjectCursor) throws -> HapticDynamicParameter {
        HapticDynamicParameter(
            parameterID: try identifier(object.required("ParameterID"), HapticDynamicParameter.ID.self),
            value: try object.required("ParameterValue").number(), relativeTime: try object.optional("Time")?.number() ?? 0)
    }

    static func curve(_ object: JSONObjectCursor) throws -> HapticParameterCurve {
        let points = try object.required("ParameterCurveControlPoints").array().map { entry in
            let point = try entry.object()
            return HapticParameterCurve.ControlPoint(
                relativeTime: try point.optional("Time")?.number() ?? 0, value: try point.required("ParameterValue").number())
        }
        return HapticParameterCurve(
            parameterID: try identifier(object.required("ParameterID"), HapticDynamicParameter.ID.self), controlPoints: points,
            relativeTime: try object.optional("Time")?.number() ?? 0)
    }
}

/// Pattern → AHAP document.
private enum AHAPWriter {
    static func document(_ pattern: HapticPattern) -> JSONValue {
        var members: [(key: String, value: JSONValue)] = []
        if let version = pattern.version { members.append(("Version", .number(version))) }
        if let metadata = pattern.metadata { members.append(("Metadata", .object(metadata))) }
        var items: [JSONValue] = pattern.events.map { .object(["Event": event($0)]) }
        items += pattern.parameters.map { parameter in
            .object([
                "Parameter": .object([
                    "ParameterID": .string(parameter.id.rawValue), "ParameterValue": .number(parameter.value),
                    "Time": .number(parameter.relativeTime),
                ])
            ])
        }
        items += pattern.parameterCurves.map { curve in
            .object([
                "ParameterCurve": .object([
                    "ParameterID": .string(curve.id.rawValue), "Time": .number(curve.relativeTime),
                    "ParameterCurveControlPoints": .array(
                        curve.controlPoints.map { .object(["Time": .number($0.relativeTime), "ParameterValue": .number($0.value)]) }),
                ])
            ])
        }
        members.append(("Pattern", .array(items)))
        return .object(JSONObject(members))
    }

    static func event(_ event: HapticEvent) -> JSONValue {
        var members: [(key: String, value: JSONValue)] = [("Time", .number(event.relativeTime)), ("EventType", .string(event.type.rawValue))]
        if event.type != .hapticTransient || event.duration != 0 { members.append(("EventDuration", .number(event.duration))) }
        if let path = event.waveformPath { members.append(("EventWaveformPath", .string(path))) }
        if let flag = event.waveformUsesVolumeEnvelope { members.append(("EventWaveformUseVolumeEnvelope", .bool(flag))) }
        if let flag = event.waveformLoopEnabled { members.append(("EventWaveformLoopEnabled", .bool(flag))) }
        members.append((
            "EventParameters",
            .array(event.parameters.map { .object(["ParameterID": .string($0.id.rawValue), "ParameterValue": .number($0.value)]) })
        ))
        return .object(JSONObject(members))
    }
}
