#if canImport(Glibc)
import Glibc
#endif

// `.haptic` clips ↔ patterns (`Docs/HapticClips.md` states the rules and the tolerances).
//
// A clip's amplitude is linear in output, as this engine's intensity is (reference units), so
// amplitude and intensity are the same number; its frequency (0 … 1 of the device's range) is
// sharpness. Lofelt's and Meta's AHAP converters take square roots instead, for Core Haptics,
// whose intensity is perceptual.

extension HapticClip {
    /// The longest piece of envelope one ramp event covers, in seconds: a continuous event's attack
    /// or release reaches at most 1 s (``HapticEventParameter/ID/attackTime`` at 1).
    static let longestRamp = 1.0
    /// How far the rendered sharpness may stray from the clip's linear frequency inside a piece
    /// before the piece is halved.
    static let sharpnessTolerance = 0.01

    /// The clip as a pattern that plays it: its envelope as ramps (each piece between two
    /// breakpoints is a continuous event fading out from the first breakpoint's amplitude and one
    /// fading in to the second's, which the engine sums to the straight line between them, with
    /// the sharpness of each end, so a step is a step), and each emphasis as a transient of its
    /// own amplitude and frequency. An emphasis is not scaled by the envelope, as it would be
    /// under an intensity curve; frequency breakpoints add breakpoints to the amplitude.
    public var pattern: HapticPattern {
        var knots = envelopeKnots()
        knots = refined(knots)
        var events: [HapticEvent] = []
        for index in knots.indices.dropLast() {
            let start = knots[index], end = knots[index + 1]
            let length = end.time - start.time
            guard length > 0 else { continue }
            let fromSharpness = frequency(at: start.time), toSharpness = frequency(at: end.time)
            if start.right == end.left, fromSharpness == toSharpness {
                if start.right > 0 { events.append(Self.ramp(at: start.time, length: length, intensity: start.right, sharpness: fromSharpness, attack: 0, release: 0)) }
                continue
            }
            if start.right > 0 { events.append(Self.ramp(at: start.time, length: length, intensity: start.right, sharpness: fromSharpness, attack: 0, release: length)) }
            if end.left > 0 { events.append(Self.ramp(at: start.time, length: length, intensity: end.left, sharpness: toSharpness, attack: length, release: 0)) }
        }
        for point in amplitude {
            guard let emphasis = point.emphasis else { continue }
            events.append(HapticEvent(
                eventType: .hapticTransient,
                parameters: [.init(parameterID: .hapticIntensity, value: emphasis.amplitude), .init(parameterID: .hapticSharpness, value: emphasis.frequency)],
                relativeTime: point.time))
        }
        do {
            var pattern = try HapticPattern(events: events)
            pattern.version = 1
            var fields: [(key: String, value: JSONValue)] = []
            for (key, value) in [
                ("Project", metadata.project), ("Created", metadata.author), ("Description", metadata.description), ("Editor", metadata.editor),
                ("Source", metadata.source),
            ] where !value.isEmpty {
                fields.append((key, .string(value)))
            }
            if !metadata.tags.isEmpty { fields.append(("Tags", .array(metadata.tags.map { .string($0) }))) }
            if !fields.isEmpty { pattern.metadata = JSONObject(fields) }
            return pattern
        } catch {
            // Times within the pattern's bound and values within 0 … 1: the reader checked them.
            preconditionFailure("a clip's pattern is invalid: \(error)")
        }
    }

    /// A continuous event of `length` seconds at `intensity` and `sharpness`, rising over `attack`
    /// and falling over `release` seconds (each at most ``longestRamp``).
    private static func ramp(at time: Double, length: Double, intensity: Double, sharpness: Double, attack: Double, release: Double) -> HapticEvent {
        var parameters: [HapticEventParameter] = [.init(parameterID: .hapticIntensity, value: intensity), .init(parameterID: .hapticSharpness, value: sharpness)]
        if attack > 0 { parameters.append(.init(parameterID: .attackTime, value: adjuster(seconds: attack))) }
        if release > 0 { parameters.append(.init(parameterID: .releaseTime, value: adjuster(seconds: release))) }
        return HapticEvent(eventType: .hapticContinuous, parameters: parameters, relativeTime: time, duration: length)
    }

    /// The attack or release adjuster (0 … 1) that lasts `seconds`: the inverse of the renderer's
    /// `(1001^x − 1) / 1000` seconds.
    static func adjuster(seconds: Double) -> Double {
        min(1, log(1 + 1000 * seconds) / log(1001))
    }

    /// The amplitude envelope's breakpoints as (time, value reached from the left, value leaving
    /// to the right): from amplitude 0 at 0 when the first breakpoint is later (as Lofelt's player
    /// starts), equal times merged into one step, the frequency envelope's times added.
    private func envelopeKnots() -> [(time: Double, left: Double, right: Double)] {
        var knots: [(time: Double, left: Double, right: Double)] = []
        if amplitude[0].time > 0 { knots.append((0, 0, 0)) }
        for point in amplitude {
            if let last = knots.last, last.time == point.time {
                knots[knots.count - 1].right = point.amplitude
            } else {
                knots.append((point.time, point.amplitude, point.amplitude))
            }
        }
        let end = duration
        for point in frequency ?? [] where point.time > knots[0].time && point.time < end && !knots.contains(where: { $0.time == point.time }) {
            let value = amplitude(at: point.time)
            knots.append((point.time, value, value))
        }
        knots.sort { $0.time < $1.time }
        return knots
    }

    /// `knots` with pieces longer than ``longestRamp`` cut, and pieces whose rendered sharpness
    /// (the two ramps' intensity-weighted mean) strays more than ``sharpnessTolerance`` from the
    /// straight line halved, down to a millisecond.
    private func refined(_ knots: [(time: Double, left: Double, right: Double)]) -> [(time: Double, left: Double, right: Double)] {
        var result: [(time: Double, left: Double, right: Double)] = []
        func add(from start: (time: Double, left: Double, right: Double), to end: (time: Double, left: Double, right: Double), depth: Int) {
            let length = end.time - start.time
            let f0 = frequency(at: start.time), f1 = frequency(at: end.time)
            var split = length > Self.longestRamp
            if !split, depth < 10, length > 0.002, f0 != f1, start.right + end.left > 0 {
                for u in [0.25, 0.5, 0.75] {
                    let w0 = (1 - u) * start.right, w1 = u * end.left
                    let rendered = (w0 * f0 + w1 * f1) / (w0 + w1)
                    if abs(rendered - ((1 - u) * f0 + u * f1)) > Self.sharpnessTolerance { split = true }
                }
            }
            guard split else {
                result.append(end)
                return
            }
            let middle = start.time + length / 2
            let value = start.right + (end.left - start.right) / 2
            let knot = (time: middle, left: value, right: value)
            add(from: start, to: knot, depth: depth + 1)
            add(from: knot, to: end, depth: depth + 1)
        }
        guard let first = knots.first else { return [] }
        result.append(first)
        for index in knots.indices.dropFirst() { add(from: knots[index - 1], to: knots[index], depth: 0) }
        return result
    }
}

extension HapticClip {
    /// How far a clip made from a pattern may stray from what the pattern renders, in amplitude or
    /// frequency (0 … 1): breakpoints the envelope can do without are dropped within it.
    public static let exportTolerance = 0.001

    /// A clip of what `pattern` plays: its continuous events' summed intensity as the amplitude
    /// envelope, their sharpness as the frequency envelope (where they sound), sampled at every
    /// change and every 5 ms while something ramps, then thinned to the breakpoints a line through
    /// them needs (within ``exportTolerance``); each transient an emphasis (at least as strong as
    /// the envelope there). Audio events are not haptics and are left out.
    public init(pattern: HapticPattern, metadata: Metadata? = nil) {
        let haptic = pattern.events.filter { $0.type == .hapticContinuous }
        let taps = pattern.events.filter { $0.type == .hapticTransient }.sorted { $0.relativeTime < $1.relativeTime }
        // Events, parameters and curves of a valid pattern: a pattern of a subset is valid too.
        let continuous = try! HapticPattern(events: haptic, parameters: pattern.parameters, parameterCurves: pattern.parameterCurves)
        let shape = CalibrationProfile.TransientShape(duration: 0.001)
        let timeline = PatternTimeline(pattern: continuous)

        func sample(_ time: Double) -> (intensity: Double, sharpness: Double?) {
            let voice = timeline.evaluate(at: max(time, 0), shape: shape, external: nil, step: 0.005).voices.first { !$0.audio }
            return (voice?.intensity ?? 0, voice.map(\.sharpness))
        }
        // Boundaries and ramps, each boundary also from the left (a step becomes two breakpoints).
        var amplitude: [(time: Double, value: Double, keep: Bool)] = []
        var frequency: [(time: Double, value: Double, keep: Bool)] = []
        var time = 0.0
        let end = continuous.duration
        while true {
            let (voices, next, _) = timeline.evaluate(at: time, shape: shape, external: nil, step: 0.005)
            let voice = voices.first { !$0.audio }
            let value = voice?.intensity ?? 0
            if time > 0 {
                // From the left: a step when it differs by more than the tolerance.
                let left = sample(time - 1e-7)
                if abs(left.intensity - value) > Self.exportTolerance { amplitude.append((time, left.intensity, false)) }
                if let sharpness = left.sharpness, left.intensity > 0, let now = voice?.sharpness, value > 0, abs(sharpness - now) > Self.exportTolerance {
                    frequency.append((time, sharpness, false))
                }
            }
            amplitude.append((time, value, false))
            if let voice, value > 0 { frequency.append((time, voice.sharpness, false)) }
            guard let next, time < end else { break }
            // A change due now (a fade starting at this instant) is looked at a microsecond on.
            time = min(next > time ? next : time + 1e-6, end)
        }
        // Each tap an emphasis on a breakpoint of its own, as it sounds under the pattern's controls.
        var emphases: [Double: Emphasis] = [:]
        for tap in taps {
            let single = try! HapticPattern(events: [tap], parameters: pattern.parameters, parameterCurves: pattern.parameterCurves)
            guard let voice = PatternTimeline(pattern: single).evaluate(at: tap.relativeTime, shape: shape, external: nil, step: 0.005).voices.first
            else { continue }
            let envelope = sample(tap.relativeTime).intensity
            let emphasis = Emphasis(amplitude: min(1, max(voice.intensity, envelope)), frequency: voice.sharpness)
            if let existing = emphases[tap.relativeTime], existing.amplitude >= emphasis.amplitude { continue }
            emphases[tap.relativeTime] = emphasis
            amplitude.append((tap.relativeTime, envelope, true))
        }
        // In time order; at one time, samples in the order taken (a step's left first), taps last.
        amplitude = amplitude.enumerated().sorted { a, b in
            (a.element.time, a.element.keep ? 1 : 0, a.offset) < (b.element.time, b.element.keep ? 1 : 0, b.offset)
        }.map(\.element)
        let thinnedAmplitude = Self.thinned(amplitude)
        var points = thinnedAmplitude.map { AmplitudePoint(time: $0.time, amplitude: min(1, max(0, $0.value))) }
        // Each emphasis on the last breakpoint at its time (after a step there).
        for (time, emphasis) in emphases {
            guard let index = points.lastIndex(where: { $0.time == time }) else { continue }
            points[index].emphasis = Emphasis(amplitude: max(emphasis.amplitude, points[index].amplitude), frequency: emphasis.frequency)
        }
        let thinnedFrequency = Self.thinned(frequency).map { FrequencyPoint(time: $0.time, frequency: min(1, max(0, $0.value))) }
        self.init(
            checked: Version(major: 1), metadata: metadata ?? Self.metadata(of: pattern), amplitude: points.isEmpty ? [AmplitudePoint(time: 0, amplitude: 0)] : points,
            frequency: thinnedFrequency.isEmpty ? nil : thinnedFrequency)
    }

    /// What a pattern's AHAP `Metadata` says, as a clip's (the keys ``pattern`` writes), the editor
    /// being this library.
    static func metadata(of pattern: HapticPattern) -> Metadata {
        var metadata = Metadata(editor: "swift-haptics")
        guard let fields = pattern.metadata else { return metadata }
        func text(_ key: String) -> String { fields[key]?.string ?? "" }
        metadata.project = text("Project")
        metadata.author = text("Created")
        metadata.description = text("Description")
        metadata.source = text("Source")
        if case .array(let tags)? = fields["Tags"] { metadata.tags = tags.compactMap(\.string) }
        return metadata
    }

    /// `points` (times never decreasing) without the points a straight line through their
    /// neighbours reproduces within `tolerance` (Ramer–Douglas–Peucker on the value): the
    /// breakpoints a person would draw. A step (two points at one time) and a point marked `keep`
    /// are always kept, and split the run.
    public static func thinned(
        _ points: [(time: Double, value: Double, keep: Bool)], tolerance: Double = exportTolerance
    ) -> [(time: Double, value: Double, keep: Bool)] {
        // Equal neighbours at one time are one point.
        var unique: [(time: Double, value: Double, keep: Bool)] = []
        for point in points {
            if let last = unique.last, last.time == point.time, abs(last.value - point.value) <= 1e-12 {
                unique[unique.count - 1].keep = last.keep || point.keep
                continue
            }
            unique.append(point)
        }
        guard unique.count > 2 else { return unique }
        var keep = [Bool](repeating: false, count: unique.count)
        keep[0] = true
        keep[unique.count - 1] = true
        for index in unique.indices {
            if unique[index].keep { keep[index] = true }
            if index > 0, unique[index].time == unique[index - 1].time {
                keep[index] = true
                keep[index - 1] = true
            }
        }
        // Each run between kept points, iteratively.
        var stack: [(Int, Int)] = []
        var start = 0
        for index in unique.indices.dropFirst() where keep[index] {
            stack.append((start, index))
            start = index
        }
        while let (low, high) = stack.popLast() {
            guard high - low > 1 else { continue }
            let a = unique[low], b = unique[high]
            var worst = 0.0, worstIndex = -1
            for index in (low + 1)..<high {
                let line = b.time > a.time ? a.value + (b.value - a.value) * (unique[index].time - a.time) / (b.time - a.time) : a.value
                let distance = abs(unique[index].value - line)
                if distance > worst { worst = distance; worstIndex = index }
            }
            if worst > tolerance, worstIndex > 0 {
                keep[worstIndex] = true
                stack.append((low, worstIndex))
                stack.append((worstIndex, high))
            }
        }
        return unique.indices.filter { keep[$0] }.map { unique[$0] }
    }
}
