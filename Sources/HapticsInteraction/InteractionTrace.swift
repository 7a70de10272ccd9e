import HapticsSupport

/// A recorded pointer or knob trace in a simple text format, for `haptic-cal replay`.
///
/// ```text
/// # a pointer crossing a toolbar
/// pointer
/// target back   10 10 44 30 style=highlight bar=toolbar
/// target share  60 10 44 30 style=highlight bar=toolbar
/// target canvas 0 60 400 300 style=hover bezel=no
/// target notes  20 380 360 120 style=beam:20 bezel=no
/// guide  middle x=200
/// at 0.000 5 200
/// at 0.016 40 120
/// ```
///
/// ```text
/// knob 0 270 width=15 strength=0.6 endstop=1 snap=0.55
/// at 0.00 0
/// at 0.05 17.5
/// ```
///
/// - `pointer` or `knob RANGE_MIN RANGE_MAX (width=W | positions=a,b,…) [strength=S] [endstop=E] [snap=P]` comes first.
/// - `target ID X Y WIDTH HEIGHT` (points) with `style=highlight|lift|hover|beam:LINE_HEIGHT`,
///   `shape=rect:RADIUS|circle`, `bezel=yes|no`, `padding=POINTS`, `bar=GROUP`.
/// - `guide NAME x=X` or `y=Y`: an alignment guide; the pointer's position is the dragged item's centre.
/// - `at TIME X Y` (pointer) or `at TIME POSITION` (knob): samples in seconds, in time order.
/// - `#` starts a comment.
///
/// Every number is range-checked as it is read (``Limits``); an error names the file, the line,
/// the value and the range.
public struct InteractionTrace: Sendable {
    /// The ranges a trace file's numbers must lie in.
    public enum Limits {
        /// Sample times, in seconds from any origin.
        public static let time = -1e9...1e9
        /// The longest trace, in seconds from its first sample to its last: a day (a replay plays in real time).
        public static let span = 86_400.0
        /// Positions: x and y of targets, samples and guides (points), a knob's range, positions and
        /// detent positions (its own unit).
        public static let position = -1e9...1e9
        /// Sizes: target width and height, padding, corner radius and line height (points), detent width.
        public static let size = 0.0...1e9
    }

    /// What the trace holds.
    public enum Content: Sendable {
        /// Pointer samples over targets (and optional alignment guides).
        case pointer(targets: [PointerTarget], guides: [AlignmentSnapper.Guide], samples: [PointerSample])
        /// Knob or slider positions over a detent configuration.
        case knob(DetentConfiguration, samples: [(time: Double, position: Double)])
    }

    /// The content.
    public let content: Content
    /// Where it was read from (for messages).
    public let source: String

    /// A trace.
    public init(content: Content, source: String) {
        self.content = content
        self.source = source
    }

    /// Reads a trace file.
    public init(contentsOfFile path: String) throws(InteractionError) {
        let bytes: [UInt8]
        do { bytes = try readFile(atPath: path) } catch { throw .trace(file: path, line: 0, problem: "\(error)") }
        try self.init(text: String(decoding: bytes, as: UTF8.self), source: path)
    }

    /// Parses trace text; `source` names it in errors.
    public init(text: String, source: String = "<trace>") throws(InteractionError) {
        self.source = source
        var mode: String?
        var targets: [PointerTarget] = []
        var guides: [AlignmentSnapper.Guide] = []
        var pointerSamples: [PointerSample] = []
        var knobSamples: [(time: Double, position: Double)] = []
        var detents: DetentConfiguration?
        for (offset, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let lineNumber = offset + 1
            func fail(_ problem: String) -> InteractionError { .trace(file: source, line: lineNumber, problem: problem) }
            let content = rawLine.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let words = content.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" }).map(String.init)
            guard let keyword = words.first else { continue }
            func number(_ word: String, _ what: String, in range: ClosedRange<Double>? = nil) throws(InteractionError) -> Double {
                guard let value = Double(word), value.isFinite else { throw fail("\(what) '\(word)' is not a number") }
                if let range, !range.contains(value) {
                    throw fail("\(what) \(word) is outside \(JSONValue.format(range.lowerBound))...\(JSONValue.format(range.upperBound))")
                }
                return value
            }
            func position(_ word: String, _ what: String) throws(InteractionError) -> Double { try number(word, what, in: Limits.position) }
            func size(_ word: String, _ what: String) throws(InteractionError) -> Double { try number(word, what, in: Limits.size) }
            func options(from index: Int) throws(InteractionError) -> [String: String] {
                var result: [String: String] = [:]
                for word in words.dropFirst(index) {
                    guard let equals = word.firstIndex(of: "="), equals != word.startIndex else {
                        throw fail("'\(word)' is not KEY=VALUE")
                    }
                    result[String(word[..<equals])] = String(word[word.index(after: equals)...])
                }
                return result
            }
            switch keyword {
            case "pointer", "knob":
                guard mode == nil else { throw fail("'\(keyword)' after the trace's kind was already set to '\(mode!)'") }
                mode = keyword
                if keyword == "knob" {
                    guard words.count >= 3 else { throw fail("knob needs RANGE_MIN RANGE_MAX, e.g. knob 0 270 width=15") }
                    let low = try position(words[1], "range minimum"), high = try position(words[2], "range maximum")
                    let option = try options(from: 3)
                    let unknown = Set(option.keys).subtracting(["width", "positions", "strength", "endstop", "snap"])
                    if let key = unknown.first { throw fail("unknown knob option '\(key)'; options: width, positions, strength, endstop, snap") }
                    let spacing: DetentConfiguration.Spacing
                    if let width = option["width"] {
                        spacing = .uniform(width: try size(width, "width"))
                    } else if let list = option["positions"] {
                        var positions: [Double] = []
                        for item in list.split(separator: ",") { positions.append(try position(String(item), "detent position")) }
                        spacing = .positions(positions)
                    } else {
                        throw fail("knob needs width=W or positions=a,b,…")
                    }
                    guard high > low else { throw fail("knob range \(low)...\(high) is empty") }
                    do {
                        detents = try DetentConfiguration(
                            range: low...high, spacing: spacing,
                            detentStrength: try option["strength"].map { s throws(InteractionError) in try number(s, "strength") } ?? 0.6,
                            endStopStrength: try option["endstop"].map { s throws(InteractionError) in try number(s, "endstop") } ?? 1,
                            snapPoint: try option["snap"].map { s throws(InteractionError) in try number(s, "snap") } ?? 0.55)
                    } catch {
                        if case .invalid(let problem) = error { throw fail(problem) }
                        throw error
                    }
                }
            case "target":
                guard mode == "pointer" else { throw fail("'target' belongs to a pointer trace; start the file with 'pointer'") }
                guard words.count >= 6 else { throw fail("target needs ID X Y WIDTH HEIGHT") }
                guard !targets.contains(where: { $0.id == words[1] }) else { throw fail("target '\(words[1])' is defined twice") }
                let frame = Rect(
                    x: try position(words[2], "x"), y: try position(words[3], "y"), width: try size(words[4], "width"),
                    height: try size(words[5], "height"))
                var target = PointerTarget(id: words[1], frame: frame)
                for (key, value) in try options(from: 6) {
                    switch key {
                    case "style":
                        switch value {
                        case "highlight": target.effect = .highlight
                        case "lift": target.effect = .lift
                        case "hover": target.effect = .hover
                        case _ where value.hasPrefix("beam:"): target.effect = .beam(lineHeight: try size(String(value.dropFirst(5)), "line height"))
                        default: throw fail("style '\(value)' is not highlight, lift, hover or beam:LINE_HEIGHT")
                        }
                    case "shape":
                        if value == "circle" {
                            target.shape = .circle
                        } else if value.hasPrefix("rect:") {
                            target.shape = .roundedRectangle(cornerRadius: try size(String(value.dropFirst(5)), "corner radius"))
                        } else {
                            throw fail("shape '\(value)' is not circle or rect:RADIUS")
                        }
                    case "bezel":
                        guard value == "yes" || value == "no" else { throw fail("bezel '\(value)' is not yes or no") }
                        target.hasBezel = value == "yes"
                    case "padding": target.padding = try size(value, "padding")
                    case "bar": target.barGroup = value
                    default: throw fail("unknown target option '\(key)'; options: style, shape, bezel, padding, bar")
                    }
                }
                targets.append(target)
            case "guide":
                guard mode == "pointer" else { throw fail("'guide' belongs to a pointer trace") }
                guard words.count == 3, let equals = words[2].firstIndex(of: "="), ["x", "y"].contains(String(words[2][..<equals])) else {
                    throw fail("guide needs NAME x=X or NAME y=Y")
                }
                let axis = String(words[2][..<equals])
                guides.append(.init(name: words[1], position: try position(String(words[2][words[2].index(after: equals)...]), "guide position"), vertical: axis == "x"))
            case "at":
                guard let mode else { throw fail("a sample before the trace's kind; start the file with 'pointer' or 'knob'") }
                let time = try number(words.count > 1 ? words[1] : "", "time", in: Limits.time)
                let previous = mode == "pointer" ? pointerSamples.last?.time : knobSamples.last?.time
                if let previous, time < previous { throw fail("time \(time) is earlier than the previous sample's \(previous)") }
                if let first = mode == "pointer" ? pointerSamples.first?.time : knobSamples.first?.time, time - first > Limits.span {
                    throw fail(
                        "time \(words[1]) is \(JSONValue.format(time - first)) s after the first sample's; "
                            + "a trace may span at most \(JSONValue.format(Limits.span)) s")
                }
                if mode == "pointer" {
                    guard words.count == 4 else { throw fail("a pointer sample is 'at TIME X Y'") }
                    pointerSamples.append(PointerSample(time: time, position: Point(x: try position(words[2], "x"), y: try position(words[3], "y"))))
                } else {
                    guard words.count == 3 else { throw fail("a knob sample is 'at TIME POSITION'") }
                    knobSamples.append((time, try position(words[2], "position")))
                }
            default:
                throw fail("unknown line '\(keyword)'; expected pointer, knob, target, guide or at")
            }
        }
        switch mode {
        case "pointer": content = .pointer(targets: targets, guides: guides, samples: pointerSamples)
        case "knob": content = .knob(detents!, samples: knobSamples)
        default: throw .trace(file: source, line: 1, problem: "empty trace; start it with 'pointer' or 'knob'")
        }
    }

    /// Every event of the trace, with its time (seconds from the trace's clock).
    public func events(parameters: InteractionParameters = InteractionParameters()) -> [(time: Double, event: InteractionEvent)] {
        switch content {
        case .pointer(let targets, let guides, let samples):
            var events = PointerModel.process(samples, targets: targets, parameters: parameters).events
            if !guides.isEmpty {
                var snapper = AlignmentSnapper(guides: guides)
                for sample in samples {
                    let frame = Rect(x: sample.position.x - 1, y: sample.position.y - 1, width: 2, height: 2)
                    events += snapper.update(frame: frame).1.map { (sample.time, $0) }
                }
                events.sort { $0.time < $1.time }
            }
            return events
        case .knob(let configuration, let samples):
            guard let first = samples.first else { return [] }
            var tracker = DetentTracker(configuration: configuration, position: first.position)
            return samples.flatMap { sample in tracker.update(position: sample.position).map { (sample.time, $0) } }
        }
    }

    /// The detent and end-stop strengths feedback uses (a knob's; 1 for pointer traces).
    public var strengths: (detent: Double, endStop: Double) {
        if case .knob(let configuration, _) = content { return (configuration.detentStrength, configuration.endStopStrength) }
        return (1, 1)
    }
}
