#if canImport(Glibc)
import Glibc
#endif

/// The project's feedback vocabulary on the ROM library: which effects the chip plays from its own
/// waveforms, and at which strength.
///
/// A single tap maps onto the click, tick or bump whose feel it names. TI tuned those waveforms per
/// library for its actuators, with overdrive and braking timed inside the chip, so the chip's
/// click is crisper than a tap drawn in 4 ms RTP frames over I²C. Rhythms (two taps or more) and
/// ramps are not mapped: their timing is the effect, SLOS854 publishes no durations for the ROM
/// waveforms, so a wait between two of them cannot keep a pattern's gaps, and the ROM's ramps
/// have no stated length. They render through RTP, which follows the pattern's times exactly.
///
/// Strength: each mapping names a family of the same waveform at several strengths
/// (`strong-click-100`, `-60`, `-30`) and the strength the effect plays at full intensity (its
/// *nominal*, in percent). An effect played at `scale` plays the family member nearest to
/// `nominal × scale` (nearest by ratio). A target below ``weakestFraction`` of the family's
/// weakest member has no fitting waveform: the effect then renders through RTP, which goes lower.
public enum FeedbackROM {
    /// One vocabulary effect played from the ROM.
    public struct Mapping: Sendable {
        /// The vocabulary effect's name (`impact.heavy`).
        public let effect: String
        /// The family's members as (strength in percent, ROM effect id), strongest first.
        public let family: [(percent: Int, id: UInt8)]
        /// The strength it plays at full intensity, in percent (one of the family's).
        public let nominal: Int
        /// Why this waveform fits.
        public let why: String
    }

    /// How far below the weakest member a target may be and still play it (as a fraction of it).
    public static let weakestFraction = 0.75

    /// The members of family `base`: `base-P` (`strong-click-60`), or numbered `base-N-P`
    /// (`medium-click-2-80`).
    private static func family(_ base: String, numbered: Bool = false) -> [(percent: Int, id: UInt8)] {
        ROMEffects.names.enumerated().compactMap { index, name in
            guard name.hasPrefix(base + "-") else { return nil }
            let parts = name.dropFirst(base.count + 1).split(separator: "-")
            guard parts.count == (numbered ? 2 : 1), let percent = Int(parts[parts.count - 1]) else { return nil }
            return (percent, UInt8(index + 1))
        }
    }

    // The families used: ids 1–3, 4–6, 7–9, 21–23 and 24–26.
    private static let strongClick = family("strong-click")
    private static let sharpClick = family("sharp-click")
    private static let softBump = family("soft-bump")
    private static let mediumClick = family("medium-click", numbered: true)
    private static let sharpTick = family("sharp-tick", numbered: true)

    /// Every mapped effect. The rest of the vocabulary renders through RTP (see the type's comment).
    public static let mappings: [Mapping] = mappingsBeforeAliases
        // The same feedback under other names: SwiftUI's and the canvas generator's, and Android's
        // constants, which play the predefined effects (texture ticks are softer than any ROM tick).
        + same(as: "selection", "sensory.selection") + same(as: "watch.start", "sensory.start")
        + same(as: "mac.alignment", "sensory.alignment", "canvas.alignment") + same(as: "mac.levelChange", "sensory.levelChange")
        + same(as: "impact.medium", "sensory.impact") + same(as: "impact.light", "sensory.impact.light")
        + same(as: "impact.heavy", "sensory.impact.heavy") + same(as: "impact.rigid", "sensory.impact.rigid")
        + same(as: "impact.soft", "sensory.impact.soft")
        + [Mapping(effect: "sensory.impact.solid", family: sharpClick, nominal: 60, why: "solid flexes a little: crisp, less than rigid's full sharp click")]
        + same(as: "android.effect.click", "android.feedback.virtualKey", "android.feedback.keyboardPress", "android.feedback.gestureStart", "android.feedback.confirm")
        + same(
            as: "android.effect.tick", "android.feedback.keyboardRelease", "android.feedback.virtualKeyRelease", "android.feedback.contextClick",
            "android.feedback.gestureEnd", "android.feedback.toggleOn", "android.feedback.gestureThresholdActivate", "android.feedback.segmentTick")
        + same(as: "android.effect.heavyClick", "android.feedback.longPress", "android.feedback.dragStart")

    /// The mappings made for their own effect, each with its reason.
    private static let mappingsBeforeAliases: [Mapping] = [
        Mapping(effect: "impact.heavy", family: strongClick, nominal: 100, why: "the heaviest impact: TI's strongest click"),
        Mapping(effect: "impact.medium", family: mediumClick, nominal: 100, why: "a medium impact: the medium click, between strong and sharp"),
        Mapping(effect: "impact.light", family: mediumClick, nominal: 60, why: "a light impact: the medium click at its weakest"),
        Mapping(effect: "impact.rigid", family: sharpClick, nominal: 100, why: "rigid is crisp: the sharp click"),
        Mapping(effect: "impact.soft", family: softBump, nominal: 60, why: "soft is round: the soft bump, which has no sharp edge"),
        Mapping(effect: "selection", family: sharpTick, nominal: 60, why: "a selection tick is light and crisp: the sharp tick at its weakest"),
        Mapping(effect: "watch.click", family: sharpTick, nominal: 80, why: "the watch's click: a sharp tick"),
        Mapping(effect: "watch.start", family: strongClick, nominal: 100, why: "one strong cue: the strong click"),
        Mapping(effect: "mac.generic", family: mediumClick, nominal: 80, why: "the trackpad's generic tap: a medium click"),
        Mapping(effect: "mac.alignment", family: sharpTick, nominal: 80, why: "an alignment snap is a crisp tick"),
        Mapping(effect: "mac.levelChange", family: mediumClick, nominal: 100, why: "a level change is a firmer click than a generic tap"),
        Mapping(effect: "android.click", family: sharpClick, nominal: 60, why: "Android's CLICK primitive: a crisp click of medium strength"),
        Mapping(effect: "android.lightTick", family: sharpTick, nominal: 60, why: "Android's LIGHT_TICK: the weakest sharp tick"),
        Mapping(effect: "android.lowTick", family: softBump, nominal: 30, why: "Android's LOW_TICK is a dull, low tick: the weakest soft bump"),
        Mapping(effect: "android.thud", family: softBump, nominal: 100, why: "Android's THUD is heavy and dull: the strongest soft bump"),
        Mapping(effect: "android.effect.click", family: sharpClick, nominal: 60, why: "Android's EFFECT_CLICK, the baseline click: as its CLICK primitive"),
        Mapping(effect: "android.effect.tick", family: sharpTick, nominal: 60, why: "Android's EFFECT_TICK, weaker than a click: the weakest sharp tick"),
        Mapping(effect: "android.effect.heavyClick", family: strongClick, nominal: 100, why: "Android's EFFECT_HEAVY_CLICK, stronger than a click: the strong click"),
    ]

    /// Mappings of `names` as `base` is mapped (the same feedback under other names).
    private static func same(as base: String, _ names: String...) -> [Mapping] {
        let original = mappingsBeforeAliases.first { $0.effect == base }!
        return names.map { Mapping(effect: $0, family: original.family, nominal: original.nominal, why: "as \(base): the same feedback") }
    }

    /// The mapping of vocabulary effect `effect`, if it has one.
    public static func mapping(for effect: String) -> Mapping? {
        mappings.first { $0.effect == effect }
    }

    /// What the chip plays for vocabulary effect `effect` at `scale` (0…1] of its strength, or nil
    /// when no ROM waveform fits (an unmapped effect, or a target weaker than the family has): the
    /// effect then renders through RTP.
    public static func sequence(for effect: String, scale: Double) -> ROMSequence? {
        guard let mapping = mapping(for: effect), scale.isFinite, scale > 0 else { return nil }
        let target = Double(mapping.nominal) * min(scale, 1)
        guard let weakest = mapping.family.last, target >= Double(weakest.percent) * weakestFraction else { return nil }
        // Nearest by ratio: a 45 % target plays 60 % of {100, 60, 30}, not 30 %.
        let nearest = mapping.family.min { abs(log(Double($0.percent) / target)) < abs(log(Double($1.percent) / target)) }!
        return try? ROMSequence(steps: [.effect(nearest.id)])
    }
}
