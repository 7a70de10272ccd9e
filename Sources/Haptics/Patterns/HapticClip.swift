import HapticsSupport

#if canImport(Glibc)
import Glibc
#endif

/// A `.haptic` clip: the format Lofelt Studio and Meta Haptics Studio write and Nice Vibrations and
/// Meta's Haptics SDK play (version 1): an amplitude envelope whose breakpoints may carry an
/// *emphasis* (a short, sharp accent), and an optional frequency envelope. Times are seconds from
/// the clip's start; amplitude, frequency and emphasis values are 0 … 1; both envelopes are linear
/// between breakpoints. `Docs/HapticClips.md` describes the format and its sources.
///
/// ```swift
/// let clip = try HapticClip(contentsOfFile: "explosion.haptic")
/// try engine.makePlayer(with: clip.pattern).start(atTime: 0)
/// try HapticClip(pattern: HapticPattern(contentsOfFile: "tap.ahap")).writeHaptic(toFile: "tap.haptic")
/// ```
public struct HapticClip: Sendable, Hashable {
    /// The format version (`major` 1 is the one read and written).
    public struct Version: Sendable, Hashable {
        /// Major version: 1.
        public var major: Int
        /// Minor version.
        public var minor: Int
        /// Patch version.
        public var patch: Int

        /// A version.
        public init(major: Int, minor: Int = 0, patch: Int = 0) {
            self.major = major
            self.minor = minor
            self.patch = patch
        }
    }

    /// What the clip says about itself; every field may be empty.
    public struct Metadata: Sendable, Hashable {
        /// The tool that wrote it (`Lofelt Studio`, `swift-haptics`).
        public var editor = ""
        /// Who made it.
        public var author = ""
        /// The audio it was made from.
        public var source = ""
        /// The project it belongs to.
        public var project = ""
        /// Tags.
        public var tags: [String] = []
        /// A description.
        public var description = ""

        /// Metadata.
        public init(editor: String = "", author: String = "", source: String = "", project: String = "", tags: [String] = [], description: String = "") {
            self.editor = editor
            self.author = author
            self.source = source
            self.project = project
            self.tags = tags
            self.description = description
        }
    }

    /// A short accent on an amplitude breakpoint: at least as strong as the envelope there.
    public struct Emphasis: Sendable, Hashable {
        /// Its strength, 0 … 1.
        public var amplitude: Double
        /// Its frequency, 0 … 1 (its sharpness).
        public var frequency: Double

        /// An emphasis.
        public init(amplitude: Double, frequency: Double) {
            self.amplitude = amplitude
            self.frequency = frequency
        }
    }

    /// A breakpoint of the amplitude envelope.
    public struct AmplitudePoint: Sendable, Hashable {
        /// Seconds from the clip's start.
        public var time: Double
        /// Amplitude, 0 … 1 of the device's strongest output.
        public var amplitude: Double
        /// An accent here, if any.
        public var emphasis: Emphasis?

        /// A breakpoint.
        public init(time: Double, amplitude: Double, emphasis: Emphasis? = nil) {
            self.time = time
            self.amplitude = amplitude
            self.emphasis = emphasis
        }
    }

    /// A breakpoint of the frequency envelope.
    public struct FrequencyPoint: Sendable, Hashable {
        /// Seconds from the clip's start.
        public var time: Double
        /// Frequency, 0 … 1 of the device's range (sharpness).
        public var frequency: Double

        /// A breakpoint.
        public init(time: Double, frequency: Double) {
            self.time = time
            self.frequency = frequency
        }
    }

    /// The format version.
    public var version: Version
    /// The metadata.
    public var metadata: Metadata
    /// The amplitude envelope: at least one breakpoint, times never decreasing (equal times make a step).
    public let amplitude: [AmplitudePoint]
    /// The frequency envelope (nil: none; the clip plays at frequency 0.5).
    public let frequency: [FrequencyPoint]?

    /// What a clip without a frequency envelope plays at (Meta's renderer's default).
    public static let defaultFrequency = 0.5

    /// A clip, checked as Lofelt's validator checks one.
    /// - Throws: ``HapticClipError/invalid(_:file:)`` naming the breakpoint, the value and its range.
    public init(version: Version = Version(major: 1), metadata: Metadata = Metadata(), amplitude: [AmplitudePoint], frequency: [FrequencyPoint]? = nil)
        throws(HapticClipError)
    {
        do {
            try HapticClipReader.check(amplitude: amplitude, frequency: frequency)
        } catch {
            throw .invalid(error, file: nil)
        }
        self.version = version
        self.metadata = metadata
        self.amplitude = amplitude
        self.frequency = frequency
    }

    /// How long the clip lasts: its last amplitude breakpoint's time, in seconds.
    public var duration: Double { amplitude[amplitude.count - 1].time }

    /// The amplitude at `time` (linear between breakpoints; at a step, the value after it; rising
    /// from 0 at time 0 to a first breakpoint after 0, as Lofelt's player plays it; the last value
    /// at and after the last breakpoint).
    public func amplitude(at time: Double) -> Double {
        let first = amplitude[0]
        if time < first.time { return time <= 0 ? 0 : first.amplitude * time / first.time }
        return HapticClipReader.interpolate(amplitude.map { ($0.time, $0.amplitude) }, at: time)
    }

    /// The frequency at `time`, as ``amplitude(at:)``; ``defaultFrequency`` without an envelope.
    public func frequency(at time: Double) -> Double {
        guard let frequency, !frequency.isEmpty else { return Self.defaultFrequency }
        return HapticClipReader.interpolate(frequency.map { ($0.time, $0.frequency) }, at: time)
    }
}

/// Why a `.haptic` clip could not be read or written: where (a line and column for JSON syntax,
/// a JSON path such as `$.signals.continuous.envelopes.amplitude[3].time` for everything else) and
/// what is wrong.
public enum HapticClipError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The text is not JSON; `file` names the file when one was read.
    case syntax(JSONSyntaxError, file: String?)
    /// The JSON is not a `.haptic` clip, or a value has the wrong type or range.
    case invalid(JSONPathError, file: String?)
    /// The file could not be read or written.
    case file(FileError)

    public var description: String {
        switch self {
        case .syntax(let error, let file?): "\(file):\(error.line):\(error.column): not valid JSON: \(error.problem)"
        case .syntax(let error, nil): ".haptic clip is not valid JSON: \(error)"
        case .invalid(let error, let file?): "\(file): \(error)"
        case .invalid(let error, nil): "\(error)"
        case .file(let error): "\(error)"
        }
    }

    /// The same error naming `file`.
    func naming(_ file: String) -> HapticClipError {
        switch self {
        case .syntax(let inner, _): .syntax(inner, file: file)
        case .invalid(let inner, _): .invalid(inner, file: file)
        case .file: self
        }
    }
}

extension HapticClip {
    /// Reads a `.haptic` file.
    public init(contentsOfFile path: String) throws(HapticClipError) {
        let bytes: [UInt8]
        do { bytes = try readFile(atPath: path) } catch { throw .file(error) }
        do { try self.init(hapticBytes: bytes) } catch { throw error.naming(path) }
    }

    /// Reads `.haptic` text.
    public init(haptic text: String) throws(HapticClipError) {
        try self.init(hapticBytes: Array(text.utf8))
    }

    /// Reads a `.haptic` clip from UTF-8 bytes.
    ///
    /// Accepted as real files have them: trailing commas, integers where decimals are expected,
    /// `minor` and `patch` left out, no `metadata`, unknown keys (ignored), an empty or missing
    /// frequency envelope, equal times (a step), a first breakpoint after 0. Rejected with the
    /// JSON path: a version other than 1 (the older `.vij` layout, 0.2.0, is named), a missing
    /// `signals.continuous.envelopes.amplitude` or an empty one, values outside 0 … 1, times that
    /// decrease, are negative or pass ``HapticPattern/maximumTime``, and an emphasis weaker than
    /// the envelope at its breakpoint.
    public init(hapticBytes bytes: [UInt8]) throws(HapticClipError) {
        let root: JSONValue
        do { root = try JSONParser(allowTrailingCommas: true).parse(bytes) } catch { throw .syntax(error, file: nil) }
        try self.init(hapticRoot: root)
    }

    /// Reads a clip already parsed as JSON.
    init(hapticRoot root: JSONValue) throws(HapticClipError) {
        do {
            self = try HapticClipReader.clip(JSONCursor(root: root))
        } catch {
            throw .invalid(error, file: nil)
        }
    }

    /// The clip as `.haptic` JSON; reading it back gives an equal clip.
    public func hapticText(pretty: Bool = true) -> String {
        HapticClipReader.document(self).serialized(pretty: pretty) + (pretty ? "\n" : "")
    }

    /// Writes the clip as a `.haptic` file, atomically.
    public func writeHaptic(toFile path: String) throws(HapticClipError) {
        do { try writeFileAtomically(Array(hapticText().utf8), toPath: path) } catch { throw .file(error) }
    }
}

/// `.haptic` JSON ↔ clip, keeping the JSON path of everything read.
enum HapticClipReader {
    static let amplitudePath = "$.signals.continuous.envelopes.amplitude"
    static let frequencyPath = "$.signals.continuous.envelopes.frequency"

    static func clip(_ root: JSONCursor) throws(JSONPathError) -> HapticClip {
        let object = try root.object()
        guard let versionCursor = object.optional("version") else {
            throw root.error("no \"version\": a .haptic clip starts with {\"version\": {\"major\": 1, \"minor\": 0, \"patch\": 0}, …}")
        }
        let versionObject = try versionCursor.object()
        let version = HapticClip.Version(
            major: try versionObject.required("major").integer(in: 0...Int(Int32.max)),
            minor: try versionObject.optional("minor")?.integer(in: 0...Int(Int32.max)) ?? 0,
            patch: try versionObject.optional("patch")?.integer(in: 0...Int(Int32.max)) ?? 0)
        guard version.major == 1 else {
            let hint = version.major == 0 ? " (0.2.0 is Lofelt Studio Desktop's older .vij layout: export the clip again as .haptic v1)" : ""
            throw versionObject.error("version \(version.major).\(version.minor).\(version.patch) is not read: only version 1 is\(hint)")
        }
        var metadata = HapticClip.Metadata()
        if let cursor = object.optional("metadata"), cursor.value != .null {
            let fields = try cursor.object()
            metadata.editor = try fields.optional("editor")?.string() ?? ""
            metadata.author = try fields.optional("author")?.string() ?? ""
            metadata.source = try fields.optional("source")?.string() ?? ""
            metadata.project = try fields.optional("project")?.string() ?? ""
            metadata.description = try fields.optional("description")?.string() ?? ""
            metadata.tags = try fields.optional("tags")?.array().map { tag throws(JSONPathError) in try tag.string() } ?? []
        }
        let envelopes = try object.required("signals").object().required("continuous").object().required("envelopes").object()
        let amplitude = try envelopes.required("amplitude").array().map { entry throws(JSONPathError) -> HapticClip.AmplitudePoint in
            let point = try entry.object()
            var emphasis: HapticClip.Emphasis?
            if let cursor = point.optional("emphasis"), cursor.value != .null {
                let fields = try cursor.object()
                emphasis = HapticClip.Emphasis(
                    amplitude: try fields.required("amplitude").number(in: 0...1), frequency: try fields.required("frequency").number(in: 0...1))
            }
            return HapticClip.AmplitudePoint(
                time: try point.required("time").number(in: 0...HapticPattern.maximumTime), amplitude: try point.required("amplitude").number(in: 0...1),
                emphasis: emphasis)
        }
        var frequency: [HapticClip.FrequencyPoint]?
        if let cursor = envelopes.optional("frequency"), cursor.value != .null {
            frequency = try cursor.array().map { entry throws(JSONPathError) -> HapticClip.FrequencyPoint in
                let point = try entry.object()
                return HapticClip.FrequencyPoint(
                    time: try point.required("time").number(in: 0...HapticPattern.maximumTime), frequency: try point.required("frequency").number(in: 0...1))
            }
        }
        try check(amplitude: amplitude, frequency: frequency)
        return HapticClip(checked: version, metadata: metadata, amplitude: amplitude, frequency: frequency)
    }

    /// Lofelt's rules (and this project's time bound), each failure naming the breakpoint.
    static func check(amplitude: [HapticClip.AmplitudePoint], frequency: [HapticClip.FrequencyPoint]?) throws(JSONPathError) {
        guard !amplitude.isEmpty else { throw JSONPathError(path: amplitudePath, problem: "the amplitude envelope is empty: a clip needs at least one breakpoint") }
        func unit(_ value: Double, _ path: String) throws(JSONPathError) {
            guard value.isFinite, (0...1).contains(value) else { throw JSONPathError(path: path, problem: "\(value) is outside 0…1") }
        }
        func times(_ times: [Double], _ path: String) throws(JSONPathError) {
            var previous = 0.0
            for (index, time) in times.enumerated() {
                guard time.isFinite, time >= 0, time <= HapticPattern.maximumTime else {
                    throw JSONPathError(path: "\(path)[\(index)].time", problem: "\(time) s is outside 0…\(Int(HapticPattern.maximumTime)) s")
                }
                guard time >= previous else {
                    throw JSONPathError(path: "\(path)[\(index)].time", problem: "\(time) s is before the breakpoint ahead of it (\(previous) s): times must not decrease")
                }
                previous = time
            }
        }
        try times(amplitude.map(\.time), amplitudePath)
        for (index, point) in amplitude.enumerated() {
            try unit(point.amplitude, "\(amplitudePath)[\(index)].amplitude")
            guard let emphasis = point.emphasis else { continue }
            try unit(emphasis.amplitude, "\(amplitudePath)[\(index)].emphasis.amplitude")
            try unit(emphasis.frequency, "\(amplitudePath)[\(index)].emphasis.frequency")
            // Files hold 32-bit floats: a rounding's room.
            guard emphasis.amplitude >= point.amplitude - 1e-6 else {
                throw JSONPathError(
                    path: "\(amplitudePath)[\(index)].emphasis.amplitude",
                    problem: "\(emphasis.amplitude) is weaker than the envelope there (\(point.amplitude)): an emphasis stands out of the envelope")
            }
        }
        if let frequency {
            try times(frequency.map(\.time), frequencyPath)
            for (index, point) in frequency.enumerated() { try unit(point.frequency, "\(frequencyPath)[\(index)].frequency") }
        }
    }

    /// A piecewise-linear function of `points` (times never decreasing) at `time`.
    static func interpolate(_ points: [(time: Double, value: Double)], at time: Double) -> Double {
        guard let first = points.first, let last = points.last else { return 0 }
        if time < first.time { return first.value }
        if time >= last.time { return last.value }
        // The last point at or before `time`, and the first after it.
        let upper = points.partitionIndex { $0.time > time }
        let a = points[upper - 1], b = points[upper]
        return a.value + (b.value - a.value) * (time - a.time) / (b.time - a.time)
    }

    static func document(_ clip: HapticClip) -> JSONValue {
        let metadata = JSONObject([
            ("editor", .string(clip.metadata.editor)), ("author", .string(clip.metadata.author)), ("source", .string(clip.metadata.source)),
            ("project", .string(clip.metadata.project)), ("tags", .array(clip.metadata.tags.map { .string($0) })),
            ("description", .string(clip.metadata.description)),
        ])
        let amplitude: [JSONValue] = clip.amplitude.map { point in
            var fields: [(key: String, value: JSONValue)] = [("time", .number(point.time)), ("amplitude", .number(point.amplitude))]
            if let emphasis = point.emphasis {
                fields.append(("emphasis", .object(JSONObject([("amplitude", .number(emphasis.amplitude)), ("frequency", .number(emphasis.frequency))]))))
            }
            return .object(JSONObject(fields))
        }
        var envelopes: [(key: String, value: JSONValue)] = [("amplitude", .array(amplitude))]
        if let frequency = clip.frequency {
            envelopes.append(("frequency", .array(frequency.map { .object(JSONObject([("time", .number($0.time)), ("frequency", .number($0.frequency))])) })))
        }
        return .object(JSONObject([
            ("version", .object(JSONObject([
                ("major", .number(Double(clip.version.major))), ("minor", .number(Double(clip.version.minor))), ("patch", .number(Double(clip.version.patch))),
            ]))),
            ("metadata", .object(metadata)),
            ("signals", .object(JSONObject([("continuous", .object(JSONObject([("envelopes", .object(JSONObject(envelopes)))])))]))),
        ]))
    }
}

extension HapticClip {
    /// A clip whose envelopes ``HapticClipReader/check(amplitude:frequency:)`` has passed.
    init(checked version: Version, metadata: Metadata, amplitude: [AmplitudePoint], frequency: [FrequencyPoint]?) {
        self.version = version
        self.metadata = metadata
        self.amplitude = amplitude
        self.frequency = frequency
    }
}

/// Why a document that may be an AHAP pattern or a `.haptic` clip could not be read.
public enum PatternDocumentError: Error, Sendable, Hashable, CustomStringConvertible {
    /// It is not JSON.
    case syntax(JSONSyntaxError)
    /// It reads as an AHAP pattern (a `Pattern` key, or neither format's keys), and that failed.
    case ahap(AHAPError)
    /// It reads as a `.haptic` clip (a `signals` or lowercase `version` key), and that failed.
    case clip(HapticClipError)

    public var description: String {
        switch self {
        case .syntax(let error): "the document is not valid JSON: \(error)"
        case .ahap(let error): "\(error)"
        case .clip(let error): ".haptic clip: \(error)"
        }
    }
}

extension HapticPattern {
    /// Reads an AHAP document or a `.haptic` clip (as its ``HapticClip/pattern``), told apart by
    /// their top-level keys (AHAP's `Pattern`; a clip's `signals` and lowercase `version`), parsing
    /// the JSON once.
    public init(document bytes: [UInt8]) throws(PatternDocumentError) {
        let root: JSONValue
        do { root = try JSONParser(allowTrailingCommas: true).parse(bytes) } catch { throw .syntax(error) }
        if case .object(let object) = root, !object.keys.contains("Pattern"), object.keys.contains("signals") || object.keys.contains("version") {
            do { self = try HapticClip(hapticRoot: root).pattern } catch { throw .clip(error) }
        } else {
            do { try self.init(ahapRoot: root) } catch { throw .ahap(error) }
        }
    }

    /// Reads an AHAP document or a `.haptic` clip from text (``init(document:)``).
    public init(document text: String) throws(PatternDocumentError) {
        try self.init(document: Array(text.utf8))
    }
}
