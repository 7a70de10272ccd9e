import HapticsSupport

/// The calibration-profile file format, version 5 (versions 1 to 4 are still read): one JSON object per device.
///
/// ```json
/// {
///   "format_version": 1,
///   "device_id": "recording:lra",
///   "device_name": "Simulated 175 Hz LRA",
///   "source": "simulated",
///   "channels": [
///     {
///       "name": "main",
///       "dead_zone": 0.08,
///       "response_exponent": 1,
///       "full_scale_output": 2.01,
///       "resonant_frequency_hz": 175.1,
///       "q_factor": 12.2,
///       "frequency_response": [[150, 0.27], [175, 1], [200, 0.34]],
///       "usable_band_hz": [168, 183]
///     }
///   ],
///   "sharpness": { "mapping": "frequency" },
///   "transient": { "duration_s": 0.02, "overdrive_gain": 1, "overdrive_duration_s": 0 },
///   "limits": { "rated_level": 1, "overdrive_level": 1 }
/// }
/// ```
///
/// Keys (units in the name; unknown keys are errors, so a typo never passes silently):
/// - `format_version` (required): whole number; this build reads `1` to `5`. A newer version
///   (any larger whole number, however large) is refused with a message saying so, never half-read.
///   Version 2 adds the keys marked (2) and negative dead zones; versions 3, 4 and 5 add those marked
///   (3), (4) and (5). A profile is written with the oldest version that holds it, so older builds keep
///   reading it.
/// - (3) `drive`: `"amplitude"` (default) or `"level"`. Drives (`dead_zone`, `start_drive`,
///   `stop_drive`, `limits`) are the amplitudes a frame asks for, which a backend with a drive
///   envelope lifts over its board's offset; or, `"level"`, levels of the hardware's full scale from
///   0, as measured from zero on a device that takes frames of levels (`HAPTICS_FRAME_LEVELS`).
///   Such a profile replaces the board's offset for its device.
/// - (5) `device_calibration`: what the device's own calibration measured, by name (1…16 names of
///   lowercase letters, digits and `_`; each a number within ±1e9): a DRV2605L's
///   `{"a_cal_comp": 13, "a_cal_bemf": 122, "bemf_gain": 2, "lra_period": 57}`. Given back to the
///   device at each open. Source `"device"` when nothing else was measured.
/// - `device_id`: the stable id the profile was made for (`recording:lra`, `hid:054c:0ce6:…`,
///   `gpio:BOARD:ACTUATOR`), or a shorter `:`-prefix of ids (`hid:054c:0ce6`) for a model-wide
///   default. `device_name`: the name when measured (informational).
/// - `source` (required): `uncalibrated`, `shipped`, `simulated`, `interactive` or `accelerometer`.
/// - `channels` (required): 1…4 objects in the device's channel order (matched by position; `name`
///   is informational). Output at drive `d` (0…1) and frequency `f` is
///   `full_scale_output × response(f) × ((d − dead_zone) / (1 − dead_zone))^response_exponent`.
///   - `name` (required): non-empty string.
///   - `dead_zone`: where the output curve starts, 0…0.9 (default 0); (2) down to −1: negative when
///     every non-zero drive gives output.
///   - `response_exponent`: the curve above the dead zone, 0.2…5 (default 1, linear).
///   - `full_scale_output`: output at full drive and the best frequency, in reference units (g of
///     peak acceleration when measured with an accelerometer), 0.001…100 (default 1).
///   - `resonant_frequency_hz`: 1…20000; `q_factor`: resonance quality factor, 0.5…1000 (both optional).
///   - `frequency_response`: `[frequency_hz, relative_output]` pairs, frequencies strictly
///     increasing in 1…20000 Hz, outputs 0…1 relative to the best frequency, as Android's
///     frequency-to-output-acceleration map (optional; empty or absent means flat).
///   - (4) `frequency_response_by_output`: 2…8 objects `{"output": o, "frequency_response": [[f, r], …]}`,
///     outputs strictly increasing in 0.001…100 reference units: the map measured again at the
///     steady output `o` (measured where `frequency_response` is 1, and 1 there), relative outputs
///     0…4, every map spanning the same frequencies. For an actuator whose resonance moves with
///     amplitude; within their span a drive for output `o` reads between the two maps nearest `o`
///     (optional).
///   - `usable_band_hz`: `[low, high]`, 1 ≤ low < high ≤ 20000: the frequencies sharpness 0…1 spans
///     (optional; only for channels whose frequency can be chosen).
///   - (2) `saturation_output`: the output the curve levels off at, reference units, 0.001…100:
///     output becomes `x / √(1 + (x / saturation_output)²)` of the curve's `x` (optional).
///   - (2) `start_drive`: the smallest drive that starts the actuator from rest, 0…1; (2)
///     `stop_drive`: the smallest that keeps it running, 0…`start_drive` (both optional).
///   - (2) `rise_time_s`, `fall_time_s`: seconds to 90 % of the steady vibration after a drive
///     starts, and to 10 % after it ends, 0…10 (optional, measured).
/// - `sharpness` (required): `{"mapping": "none"}` (one feel), `{"mapping": "frequency"}` (needs a
///   channel with `usable_band_hz`), or `{"mapping": "motor_mix", "low_channel": 0, "high_channel": 1}`
///   (two different channel indices).
/// - `transient` (required): `duration_s` 0.001…0.5; `overdrive_gain` 1…4 (default 1);
///   `overdrive_duration_s` 0…`duration_s` (default 0); (2) `intensity_exponent` 0.5…2 (default
///   1): a tap of intensity `i` plays as intensity `i^intensity_exponent`; (2) `level` 0.5…2
///   (default 1): and that intensity times `level`; (3) `sharpness_trim`: 2…11 numbers 0.5…2,
///   further multipliers of `level` at sharpnesses spread evenly from 0 to 1, interpolated
///   linearly (optional; absent means 1 everywhere).
/// - `limits`: `rated_level` 0.05…1 and `overdrive_level` `rated_level`…1 (both default 1).
public enum ProfileFormat {
    /// The format version this build writes and reads.
    public static let version = CalibrationProfile.formatVersion

    /// Valid ranges, named once so the decoder and the documentation agree.
    public enum Range {
        /// Channels per profile.
        public static let channels = 1...4
        /// Dead zone, 0…1 of drive.
        public static let deadZone = 0.0...0.9
        /// Response exponent.
        public static let responseExponent = 0.2...5.0
        /// Full-scale output, reference units.
        public static let fullScaleOutput = 0.001...100.0
        /// Frequencies, Hz.
        public static let frequency = 1.0...20_000.0
        /// Q factor.
        public static let qFactor = 0.5...1000.0
        /// Relative output in a frequency map.
        public static let relativeOutput = 0.0...1.0
        /// Relative output in a map of `frequency_response_by_output` (above 1 where the
        /// resonance has moved towards a frequency).
        public static let relativeOutputByOutput = 0.0...4.0
        /// How many maps `frequency_response_by_output` holds.
        public static let mapsByOutput = 2...8
        /// Tap duration, seconds.
        public static let transientDuration = 0.001...0.5
        /// Kick gain.
        public static let overdriveGain = 1.0...4.0
        /// A tap's intensity exponent.
        public static let intensityExponent = 0.5...2.0
        /// `transient.level`.
        public static let transientLevel = 0.5...2.0
        /// Each of `transient.sharpness_trim`.
        public static let sharpnessTrim = 0.5...2.0
        /// How many `transient.sharpness_trim` values a profile may hold.
        public static let sharpnessTrimCount = 2...11
        /// Rated level, 0…1 of full scale.
        public static let ratedLevel = 0.05...1.0
        /// Dead zone in version 2, where it may be negative.
        public static let deadZoneVersion2 = -1.0...0.9
        /// Start and stop drives, 0…1.
        public static let drive = 0.0...1.0
        /// Rise and fall times, seconds.
        public static let time = 0.0...10.0
    }

    static let topKeys = [
        "format_version", "device_id", "device_name", "source", "drive", "channels", "sharpness", "transient", "limits", "device_calibration",
    ]
    /// How many values `device_calibration` may hold.
    public static let deviceCalibrationCount = 1...16
    static let channelKeys = [
        "name", "dead_zone", "response_exponent", "full_scale_output", "resonant_frequency_hz", "q_factor", "frequency_response", "usable_band_hz",
    ]
    static let channelKeysVersion2 = ["saturation_output", "start_drive", "stop_drive", "rise_time_s", "fall_time_s"]
    static let channelKeysVersion4 = ["frequency_response_by_output"]

    // MARK: - Decoding

    /// Reads the profile file at `path`.
    /// - Throws: ``ProfileError`` naming the file and, for content errors, the key path and the expected range.
    public static func read(path: String) throws(ProfileError) -> CalibrationProfile {
        let bytes: [UInt8]
        do { bytes = try readFile(atPath: path, limit: 1 << 20) } catch {
            throw ProfileError(file: path, location: nil, problem: "cannot read: \(error)")
        }
        return try decode(bytes, file: path)
    }

    /// Decodes profile JSON; `file` only names the source in errors.
    public static func decode(_ bytes: some Collection<UInt8>, file: String = "<profile>") throws(ProfileError) -> CalibrationProfile {
        let root: JSONValue
        do { root = try JSONParser(allowTrailingCommas: false).parse(bytes) } catch {
            throw ProfileError(file: file, location: "line \(error.line), column \(error.column)", problem: error.problem)
        }
        do {
            return try decode(JSONCursor(root: root))
        } catch {
            throw ProfileError(file: file, location: error.path, problem: error.problem)
        }
    }

    static func decode(_ root: JSONCursor) throws(JSONPathError) -> CalibrationProfile {
        let object = try root.object()
        let versionCursor = try object.required("format_version")
        let version = try versionCursor.number()
        guard version == version.rounded(), version >= 1 else {
            throw versionCursor.error("expected a whole number ≥ 1, found \(JSONValue.format(version))")
        }
        // Compared as a Double: any whole number may be written here, and one beyond `Int`'s range
        // must be refused like any other newer version, not converted.
        guard version <= Double(Self.version) else {
            throw versionCursor.error(
                "format version \(JSONValue.format(version)) is newer than this build reads (\(Self.version)); update swift-haptics")
        }
        if version < 3, let cursor = object.optional("drive") { throw cursor.error("drive needs \"format_version\": 3 (this file says \(Int(version)))") }
        if version < 5, let cursor = object.optional("device_calibration") {
            throw cursor.error("device_calibration needs \"format_version\": 5 (this file says \(Int(version)))")
        }
        if version < 5, object.optional("source")?.value == .string(CalibrationProfile.Source.device.rawValue) {
            throw try object.required("source").error("source \"device\" needs \"format_version\": 5 (this file says \(Int(version)))")
        }
        try object.rejectUnknownKeys(allowed: topKeys)
        let deviceID = try object.optional("device_id")?.string()
        if let deviceID, deviceID.isEmpty { throw try object.required("device_id").error("expected a non-empty device id") }
        let deviceName = try object.optional("device_name")?.string()
        let sourceName = try object.required("source").string(oneOf: CalibrationProfile.Source.allCases.map(\.rawValue))
        let drive = try object.optional("drive")?.string(oneOf: CalibrationProfile.DriveScale.allCases.map(\.rawValue)) ?? "amplitude"
        let channelCursors = try object.required("channels").array()
        guard Range.channels.contains(channelCursors.count) else {
            throw try object.required("channels").error(
                "expected \(Range.channels.lowerBound)...\(Range.channels.upperBound) channels, found \(channelCursors.count)")
        }
        var channels: [ChannelCalibration] = []
        for cursor in channelCursors { channels.append(try channel(cursor.object(), version: Int(version))) }
        let sharpness = try sharpnessMapping(object.required("sharpness"), channels: channels)
        let transient = try transientShape(object.required("transient").object(), version: Int(version))
        let limits = try object.optional("limits").map { cursor throws(JSONPathError) in try driveLimits(cursor.object()) } ?? CalibrationProfile.DriveLimits()
        let deviceCalibration = try object.optional("device_calibration").map { cursor throws(JSONPathError) in try self.deviceCalibration(cursor) } ?? [:]
        return CalibrationProfile(
            deviceID: deviceID, deviceName: deviceName, source: CalibrationProfile.Source(rawValue: sourceName)!, channels: channels,
            sharpness: sharpness, transient: transient, limits: limits, drive: CalibrationProfile.DriveScale(rawValue: drive)!,
            deviceCalibration: deviceCalibration)
    }

    static func deviceCalibration(_ cursor: JSONCursor) throws(JSONPathError) -> [String: Double] {
        let object = try cursor.object()
        guard deviceCalibrationCount.contains(object.keys.count) else {
            throw cursor.error("expected \(deviceCalibrationCount.lowerBound)...\(deviceCalibrationCount.upperBound) values, found \(object.keys.count)")
        }
        var values: [String: Double] = [:]
        for (key, value) in object.members {
            let valid = (1...32).contains(key.count) && key.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" }
            guard valid else { throw value.error("\"\(key)\" is not a calibration name (lowercase letters, digits and _, 1...32 characters)") }
            values[key] = try value.number(in: -1e9...1e9)
        }
        return values
    }

    static func channel(_ object: JSONObjectCursor, version: Int) throws(JSONPathError) -> ChannelCalibration {
        if version < 2, let key = channelKeysVersion2.first(where: { object.optional($0) != nil }) {
            throw try object.required(key).error("\(key) needs \"format_version\": 2 (this file says 1)")
        }
        if version < 4, let cursor = object.optional("frequency_response_by_output") {
            throw cursor.error("frequency_response_by_output needs \"format_version\": 4 (this file says \(version))")
        }
        try object.rejectUnknownKeys(allowed: channelKeys + (version >= 2 ? channelKeysVersion2 : []) + (version >= 4 ? channelKeysVersion4 : []))
        let name = try object.required("name").string()
        if name.isEmpty { throw try object.required("name").error("expected a non-empty channel name") }
        var channel = ChannelCalibration(name: name)
        if let cursor = object.optional("dead_zone") { channel.deadZone = try cursor.number(in: version >= 2 ? Range.deadZoneVersion2 : Range.deadZone) }
        channel.saturationOutput = try object.optional("saturation_output")?.number(in: Range.fullScaleOutput)
        channel.startDrive = try object.optional("start_drive")?.number(in: Range.drive)
        if let cursor = object.optional("stop_drive") { channel.stopDrive = try cursor.number(in: 0...(channel.startDrive ?? 1)) }
        channel.riseTime = try object.optional("rise_time_s")?.number(in: Range.time)
        channel.fallTime = try object.optional("fall_time_s")?.number(in: Range.time)
        if let cursor = object.optional("response_exponent") { channel.responseExponent = try cursor.number(in: Range.responseExponent) }
        if let cursor = object.optional("full_scale_output") { channel.fullScaleOutput = try cursor.number(in: Range.fullScaleOutput) }
        channel.resonantFrequency = try object.optional("resonant_frequency_hz")?.number(in: Range.frequency)
        channel.qFactor = try object.optional("q_factor")?.number(in: Range.qFactor)
        if let map = object.optional("frequency_response") {
            channel.frequencyResponse = try frequencyPoints(map, range: Range.relativeOutput)
        }
        if let maps = object.optional("frequency_response_by_output") {
            channel.frequencyResponseByOutput = try outputMaps(maps)
        }
        if let band = object.optional("usable_band_hz") {
            let values = try band.array()
            guard values.count == 2 else { throw band.error("expected [low_hz, high_hz], found \(values.count) values") }
            let low = try values[0].number(in: Range.frequency)
            let high = try values[1].number(in: Range.frequency)
            guard low < high else {
                throw band.error("expected low < high in 1...20000 Hz, found [\(JSONValue.format(low)), \(JSONValue.format(high))]")
            }
            channel.usableBand = low...high
        }
        return channel
    }

    /// `[frequency_hz, relative_output]` pairs: frequencies strictly increasing, outputs in `range`, not all 0.
    static func frequencyPoints(_ map: JSONCursor, range: ClosedRange<Double>) throws(JSONPathError) -> [ChannelCalibration.FrequencyPoint] {
        var points: [ChannelCalibration.FrequencyPoint] = []
        for pair in try map.array() {
            let values = try pair.array()
            guard values.count == 2 else {
                throw pair.error("expected a [frequency_hz, relative_output] pair, found \(values.count) values")
            }
            let frequency = try values[0].number(in: Range.frequency)
            if let previous = points.last, frequency <= previous.frequency {
                throw values[0].error(
                    "frequencies must increase strictly; \(JSONValue.format(frequency)) Hz follows \(JSONValue.format(previous.frequency)) Hz")
            }
            points.append(.init(frequency: frequency, relativeOutput: try values[1].number(in: range)))
        }
        if !points.isEmpty, !points.contains(where: { $0.relativeOutput > 0 }) {
            throw map.error("every relative_output is 0; expected at least one point above 0 (the best frequency is 1)")
        }
        return points
    }

    /// `frequency_response_by_output`: 2…8 maps, outputs strictly increasing, each of at least two
    /// points and all spanning the same frequencies.
    static func outputMaps(_ cursor: JSONCursor) throws(JSONPathError) -> [ChannelCalibration.OutputFrequencyMap] {
        let elements = try cursor.array()
        guard Range.mapsByOutput.contains(elements.count) else {
            throw cursor.error("expected \(Range.mapsByOutput.lowerBound)…\(Range.mapsByOutput.upperBound) maps, found \(elements.count)")
        }
        var maps: [ChannelCalibration.OutputFrequencyMap] = []
        for element in elements {
            let object = try element.object()
            try object.rejectUnknownKeys(allowed: ["output", "frequency_response"])
            let outputCursor = try object.required("output")
            let output = try outputCursor.number(in: Range.fullScaleOutput)
            if let previous = maps.last, output <= previous.output {
                throw outputCursor.error("outputs must increase strictly; \(JSONValue.format(output)) follows \(JSONValue.format(previous.output))")
            }
            let pointsCursor = try object.required("frequency_response")
            let points = try frequencyPoints(pointsCursor, range: Range.relativeOutputByOutput)
            guard points.count >= 2 else { throw pointsCursor.error("expected at least 2 [frequency_hz, relative_output] pairs, found \(points.count)") }
            if let first = maps.first?.points, first.first!.frequency != points.first!.frequency || first.last!.frequency != points.last!.frequency {
                throw pointsCursor.error(
                    "every map must span the same frequencies: this one spans \(JSONValue.format(points.first!.frequency))–\(JSONValue.format(points.last!.frequency)) Hz, "
                        + "the first \(JSONValue.format(first.first!.frequency))–\(JSONValue.format(first.last!.frequency)) Hz")
            }
            maps.append(.init(output: output, points: points))
        }
        return maps
    }

    static func sharpnessMapping(_ cursor: JSONCursor, channels: [ChannelCalibration]) throws(JSONPathError) -> CalibrationProfile.SharpnessMapping {
        let object = try cursor.object()
        let mappingCursor = try object.required("mapping")
        switch try mappingCursor.string(oneOf: ["none", "frequency", "motor_mix"]) {
        case "none":
            try object.rejectUnknownKeys(allowed: ["mapping"])
            return .none
        case "frequency":
            try object.rejectUnknownKeys(allowed: ["mapping"])
            guard channels.contains(where: { $0.usableBand != nil }) else {
                throw mappingCursor.error("\"frequency\" needs at least one channel with usable_band_hz")
            }
            return .frequency
        default:
            try object.rejectUnknownKeys(allowed: ["mapping", "low_channel", "high_channel"])
            let last = channels.count - 1
            let low = try object.required("low_channel").integer(in: 0...last)
            let highCursor = try object.required("high_channel")
            let high = try highCursor.integer(in: 0...last)
            guard low != high else { throw highCursor.error("expected a channel other than low_channel (\(low)) in 0...\(last)") }
            return .motorMix(low: low, high: high)
        }
    }

    static func transientShape(_ object: JSONObjectCursor, version: Int) throws(JSONPathError) -> CalibrationProfile.TransientShape {
        for key in ["intensity_exponent", "level"] where version < 2 {
            if let cursor = object.optional(key) { throw cursor.error("\(key) needs \"format_version\": 2 (this file says 1)") }
        }
        if version < 3, let cursor = object.optional("sharpness_trim") { throw cursor.error("sharpness_trim needs \"format_version\": 3 (this file says \(version))") }
        try object.rejectUnknownKeys(
            allowed: ["duration_s", "overdrive_gain", "overdrive_duration_s"] + (version >= 2 ? ["intensity_exponent", "level"] : []) + (version >= 3 ? ["sharpness_trim"] : []))
        let duration = try object.required("duration_s").number(in: Range.transientDuration)
        let gain = try object.optional("overdrive_gain")?.number(in: Range.overdriveGain) ?? 1
        let kick = try object.optional("overdrive_duration_s")?.number(in: 0...duration) ?? 0
        let exponent = try object.optional("intensity_exponent")?.number(in: Range.intensityExponent) ?? 1
        let level = try object.optional("level")?.number(in: Range.transientLevel) ?? 1
        var trim: [Double] = []
        if let cursor = object.optional("sharpness_trim") {
            let items = try cursor.array()
            guard Range.sharpnessTrimCount.contains(items.count) else {
                throw cursor.error("expected \(Range.sharpnessTrimCount.lowerBound) to \(Range.sharpnessTrimCount.upperBound) trims (at sharpnesses spread evenly from 0 to 1), found \(items.count)")
            }
            for item in items { trim.append(try item.number(in: Range.sharpnessTrim)) }
        }
        return CalibrationProfile.TransientShape(
            duration: duration, overdriveGain: gain, overdriveDuration: kick, intensityExponent: exponent, level: level, sharpnessTrim: trim)
    }

    static func driveLimits(_ object: JSONObjectCursor) throws(JSONPathError) -> CalibrationProfile.DriveLimits {
        try object.rejectUnknownKeys(allowed: ["rated_level", "overdrive_level"])
        let rated = try object.optional("rated_level")?.number(in: Range.ratedLevel) ?? 1
        let overdrive = try object.optional("overdrive_level")?.number(in: rated...1) ?? 1
        return CalibrationProfile.DriveLimits(ratedLevel: rated, overdriveLevel: overdrive)
    }

    // MARK: - Encoding

    /// The profile as a JSON value, keys in the documented order; optional keys at their default are left out.
    public static func jsonValue(_ profile: CalibrationProfile) -> JSONValue {
        var top: [(key: String, value: JSONValue)] = [("format_version", .number(Double(version(for: profile))))]
        if let id = profile.deviceID { top.append(("device_id", .string(id))) }
        if let name = profile.deviceName { top.append(("device_name", .string(name))) }
        top.append(("source", .string(profile.source.rawValue)))
        if profile.drive != .amplitude { top.append(("drive", .string(profile.drive.rawValue))) }
        top.append(("channels", .array(profile.channels.map(channelValue))))
        let sharpness: JSONObject
        switch profile.sharpness {
        case .none: sharpness = ["mapping": .string("none")]
        case .frequency: sharpness = ["mapping": .string("frequency")]
        case .motorMix(let low, let high):
            sharpness = ["mapping": .string("motor_mix"), "low_channel": .number(Double(low)), "high_channel": .number(Double(high))]
        }
        top.append(("sharpness", .object(sharpness)))
        var transient: [(key: String, value: JSONValue)] = [
            ("duration_s", .number(profile.transient.duration)), ("overdrive_gain", .number(profile.transient.overdriveGain)),
            ("overdrive_duration_s", .number(profile.transient.overdriveDuration)),
        ]
        if profile.transient.intensityExponent != 1 { transient.append(("intensity_exponent", .number(profile.transient.intensityExponent))) }
        if profile.transient.level != 1 { transient.append(("level", .number(profile.transient.level))) }
        if !profile.transient.sharpnessTrim.isEmpty { transient.append(("sharpness_trim", .array(profile.transient.sharpnessTrim.map { .number($0) }))) }
        top.append(("transient", .object(JSONObject(transient))))
        top.append(("limits", .object([
            "rated_level": .number(profile.limits.ratedLevel), "overdrive_level": .number(profile.limits.overdriveLevel),
        ])))
        if !profile.deviceCalibration.isEmpty {
            top.append(("device_calibration", .object(JSONObject(profile.deviceCalibration.sorted { $0.key < $1.key }.map { ($0.key, JSONValue.number($0.value)) }))))
        }
        return .object(JSONObject(top))
    }

    static func channelValue(_ channel: ChannelCalibration) -> JSONValue {
        var members: [(key: String, value: JSONValue)] = [
            ("name", .string(channel.name)), ("dead_zone", .number(channel.deadZone)),
            ("response_exponent", .number(channel.responseExponent)), ("full_scale_output", .number(channel.fullScaleOutput)),
        ]
        if let f0 = channel.resonantFrequency { members.append(("resonant_frequency_hz", .number(f0))) }
        if let q = channel.qFactor { members.append(("q_factor", .number(q))) }
        if !channel.frequencyResponse.isEmpty {
            members.append(("frequency_response", .array(channel.frequencyResponse.map { .array([.number($0.frequency), .number($0.relativeOutput)]) })))
        }
        if !channel.frequencyResponseByOutput.isEmpty {
            members.append(("frequency_response_by_output", .array(channel.frequencyResponseByOutput.map { map in
                .object(JSONObject([
                    ("output", .number(map.output)),
                    ("frequency_response", .array(map.points.map { .array([.number($0.frequency), .number($0.relativeOutput)]) })),
                ]))
            })))
        }
        if let band = channel.usableBand { members.append(("usable_band_hz", .array([.number(band.lowerBound), .number(band.upperBound)]))) }
        if let saturation = channel.saturationOutput { members.append(("saturation_output", .number(saturation))) }
        if let start = channel.startDrive { members.append(("start_drive", .number(start))) }
        if let stop = channel.stopDrive { members.append(("stop_drive", .number(stop))) }
        if let rise = channel.riseTime { members.append(("rise_time_s", .number(rise))) }
        if let fall = channel.fallTime { members.append(("fall_time_s", .number(fall))) }
        return .object(JSONObject(members))
    }

    /// The oldest format version that holds `profile`: 1 unless it uses what version 2, 3 or 4
    /// added, so older builds keep reading the profiles they can.
    public static func version(for profile: CalibrationProfile) -> Int {
        if !profile.deviceCalibration.isEmpty || profile.source == .device { return 5 }
        if profile.channels.contains(where: { !$0.frequencyResponseByOutput.isEmpty }) { return 4 }
        let needsVersion2 = profile.channels.contains { channel in
            channel.deadZone < 0 || channel.saturationOutput != nil || channel.startDrive != nil || channel.stopDrive != nil
                || channel.riseTime != nil || channel.fallTime != nil
        }
        if profile.drive != .amplitude || !profile.transient.sharpnessTrim.isEmpty { return 3 }
        return needsVersion2 || profile.transient.intensityExponent != 1 || profile.transient.level != 1 ? 2 : 1
    }

    /// The profile as the text of a profile file: indented by two spaces, arrays of numbers on one
    /// line, ending with a newline.
    public static func encode(_ profile: CalibrationProfile) -> String {
        var output = ""
        write(jsonValue(profile), into: &output, indent: 0)
        return output + "\n"
    }

    private static func write(_ value: JSONValue, into output: inout String, indent: Int) {
        switch value {
        case .object(let object) where !object.members.isEmpty:
            output += "{"
            for (offset, member) in object.members.enumerated() {
                output += offset == 0 ? "\n" : ",\n"
                output += String(repeating: "  ", count: indent + 1)
                JSONValue.quote(member.key, into: &output)
                output += ": "
                write(member.value, into: &output, indent: indent + 1)
            }
            output += "\n" + String(repeating: "  ", count: indent) + "}"
        case .array(let elements) where elements.contains(where: { $0.array != nil || $0.object != nil }):
            // Arrays of containers: one element per line (numbers-only arrays stay inline).
            output += "["
            for (offset, element) in elements.enumerated() {
                output += offset == 0 ? "\n" : ",\n"
                output += String(repeating: "  ", count: indent + 1)
                if element.object != nil {
                    write(element, into: &output, indent: indent + 1)
                } else {
                    output += element.serialized().replacingCommas()
                }
            }
            output += "\n" + String(repeating: "  ", count: indent) + "]"
        case .array:
            output += value.serialized().replacingCommas()
        default:
            output += value.serialized()
        }
    }
}

extension String {
    /// `[1,2]` → `[1, 2]`: numbers-only arrays read better with a space after each comma.
    fileprivate func replacingCommas() -> String {
        var result = ""
        for character in self {
            result.append(character)
            if character == "," { result.append(" ") }
        }
        return result
    }
}

extension CalibrationProfile {
    /// Reads a profile file (see ``ProfileFormat``).
    public init(contentsOfFile path: String) throws(ProfileError) {
        self = try ProfileFormat.read(path: path)
    }

    /// The profile as profile-file text (see ``ProfileFormat``).
    public func encodedJSON() -> String { ProfileFormat.encode(self) }
}

/// A profile file that cannot be used: the file, where in it (a JSON path such as
/// `$.channels[0].dead_zone`, or `line 3, column 7` for a syntax error), and what is wrong,
/// with the value found and the range expected.
public struct ProfileError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The profile file (or `<profile>` for text not read from a file).
    public var file: String
    /// The key path or text position of the problem, if it is at one.
    public var location: String?
    /// What is wrong and what was expected.
    public var problem: String

    /// An error about `file`.
    public init(file: String, location: String?, problem: String) {
        self.file = file
        self.location = location
        self.problem = problem
    }

    public var description: String {
        location.map { "\(file): \($0): \(problem)" } ?? "\(file): \(problem)"
    }
}
