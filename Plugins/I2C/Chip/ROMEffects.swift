/// The DRV2605/DRV2605L ROM effect library: 123 effects, one list for every library (each library
/// tunes them for its motors), named as the datasheet's table names them (SLOS854 §11.2, as
/// Adafruit's example lists it): `strong-click-100`, `buzz-3-60`,
/// `transition-ramp-up-short-sharp-2-0-50`. The trailing number is the strength in percent.
public enum ROMEffects {
    /// Every effect's name, by id − 1 (ids are 1…123).
    public static let names: [String] = makeNames()

    /// The id of effect `name` (or of a number `1`…`123` given as text).
    public static func id(named name: String) -> UInt8? {
        if let number = Int(name), (1...names.count).contains(number) { return UInt8(number) }
        return names.firstIndex(of: name).map { UInt8($0 + 1) }
    }

    /// The name of effect `id` (1…123).
    public static func name(of id: UInt8) -> String? {
        (1...names.count).contains(Int(id)) ? names[Int(id) - 1] : nil
    }

    private static func makeNames() -> [String] {
        var names: [String] = []
        func add(_ base: String, _ strengths: [Int], numbered: Bool = true) {
            for (index, strength) in strengths.enumerated() {
                names.append(numbered ? "\(base)-\(index + 1)-\(strength)" : "\(base)-\(strength)")
            }
        }
        add("strong-click", [100, 60, 30], numbered: false)  // 1–3
        add("sharp-click", [100, 60, 30], numbered: false)  // 4–6
        add("soft-bump", [100, 60, 30], numbered: false)  // 7–9
        add("double-click", [100, 60], numbered: false)  // 10–11
        names += ["triple-click-100", "soft-fuzz-60", "strong-buzz-100", "alert-750ms-100", "alert-1000ms-100"]  // 12–16
        add("strong-click", [100, 80, 60, 30])  // 17–20
        add("medium-click", [100, 80, 60])  // 21–23
        add("sharp-tick", [100, 80, 60])  // 24–26
        add("short-double-click-strong", [100, 80, 60, 30])  // 27–30
        add("short-double-click-medium", [100, 80, 60])  // 31–33
        add("short-double-sharp-tick", [100, 80, 60])  // 34–36
        add("long-double-sharp-click-strong", [100, 80, 60, 30])  // 37–40
        add("long-double-sharp-click-medium", [100, 80, 60])  // 41–43
        add("long-double-sharp-tick", [100, 80, 60])  // 44–46
        add("buzz", [100, 80, 60, 40, 20])  // 47–51
        add("pulsing-strong", [100, 60])  // 52–53
        add("pulsing-medium", [100, 60])  // 54–55
        add("pulsing-sharp", [100, 60])  // 56–57
        add("transition-click", [100, 80, 60, 40, 20, 10])  // 58–63
        add("transition-hum", [100, 80, 60, 40, 20, 10])  // 64–69
        // 70–117: four ramp groups of twelve.
        let ramps = ["long-smooth", "medium-smooth", "short-smooth", "long-sharp", "medium-sharp", "short-sharp"]
        for (direction, span) in [("down", "100-0"), ("up", "0-100"), ("down", "50-0"), ("up", "0-50")] {
            for ramp in ramps {
                for number in 1...2 { names.append("transition-ramp-\(direction)-\(ramp)-\(number)-\(span)") }
            }
        }
        names.append("long-buzz-for-programmatic-stopping-100")  // 118
        add("smooth-hum", [50, 40, 30, 20, 10])  // 119–123 (no kick or brake pulse)
        precondition(names.count == 123, "the ROM library has 123 effects, the table \(names.count)")
        return names
    }
}

/// Up to eight ROM effects and waits, played by the chip from its waveform sequencer (WAVESEQ1…8).
///
/// Text form: steps separated by commas (or spaces), each an effect's name or id, or a wait
/// `wait:120ms` (10…1270 ms in 10 ms steps): `strong-click-100,wait:100ms,sharp-click-60`.
public struct ROMSequence: Sendable, Hashable, CustomStringConvertible {
    /// One slot.
    public enum Step: Sendable, Hashable {
        /// ROM effect `id` (1…123).
        case effect(UInt8)
        /// A pause of `tens` × 10 ms (1…127).
        case wait(tens: UInt8)

        /// The WAVESEQ byte: the id, or bit 7 and the pause in 10 ms.
        public var code: UInt8 {
            switch self {
            case .effect(let id): id
            case .wait(let tens): 0x80 | tens
            }
        }
    }

    /// The steps (1…8).
    public let steps: [Step]

    /// The longest sequence the chip holds.
    public static let capacity = 8

    /// A sequence of `steps`.
    /// - Throws: ``ROMSequenceError`` when there are none or more than eight.
    public init(steps: [Step]) throws(ROMSequenceError) {
        guard !steps.isEmpty else { throw ROMSequenceError("an effect sequence needs at least one effect") }
        guard steps.count <= Self.capacity else {
            throw ROMSequenceError("\(steps.count) steps is more than the chip's \(Self.capacity) sequence slots (waits count as steps)")
        }
        guard steps.contains(where: { if case .effect = $0 { true } else { false } }) else {
            throw ROMSequenceError("the sequence only waits: name at least one effect")
        }
        self.steps = steps
    }

    /// Parses the text form.
    /// - Throws: ``ROMSequenceError`` naming the step that is not an effect or a wait in range.
    public init(parsing text: String) throws(ROMSequenceError) {
        var steps: [Step] = []
        for part in text.split(whereSeparator: { $0 == "," || $0 == " " }).map(String.init) {
            if part.hasPrefix("wait:") {
                let value = part.dropFirst("wait:".count)
                guard value.hasSuffix("ms"), let milliseconds = Int(value.dropLast(2)), (10...1_270).contains(milliseconds),
                    milliseconds % 10 == 0
                else {
                    throw ROMSequenceError("\"\(part)\" is not a wait the chip can hold: wait:10ms ... wait:1270ms, in 10 ms steps")
                }
                steps.append(.wait(tens: UInt8(milliseconds / 10)))
            } else if let id = ROMEffects.id(named: part) {
                steps.append(.effect(id))
            } else {
                throw ROMSequenceError(
                    "\"\(part)\" is not a ROM effect: use a name such as strong-click-100 or sharp-tick-1-100, or an id 1...123 (`haptic-cal effects` lists them)")
            }
        }
        try self.init(steps: steps)
    }

    /// The text form, with effect names.
    public var description: String {
        steps.map { step in
            switch step {
            case .effect(let id): ROMEffects.name(of: id) ?? String(id)
            case .wait(let tens): "wait:\(Int(tens) * 10)ms"
            }
        }.joined(separator: ",")
    }
}

/// A ROM sequence that cannot be played, and why.
public struct ROMSequenceError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong, with the fix.
    public var description: String

    /// An error saying `description`.
    public init(_ description: String) { self.description = description }
}
