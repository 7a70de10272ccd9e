/// Every feedback effect, in one place. Times in seconds; intensity and sharpness 0 … 1.
///
/// The shapes follow what the platforms describe: iOS impacts differ in strength (light, medium,
/// heavy) and in feel (rigid is crisp, soft is round); a selection tick is light and crisp;
/// notifications are short rhythms (success rises, warning falls, error repeats). watchOS adds
/// directional pairs and start/stop cues; macOS's force-click trackpad has generic, alignment and
/// level-change taps; SwiftUI's `SensoryFeedback` names the same feedback again (with weights and
/// flexibilities for impacts, and a path completion); Android's composition primitives include
/// rising, falling and spinning ramps, its predefined effects a click, a double click, a tick and a
/// heavy click, and its `HapticFeedbackConstants` play those as AOSP does on a vibrator without
/// primitives. Single impulses stay at or under 20 ms on fast actuators (the renderer's tap), so
/// none feels buzzy. `Docs/Vocabulary.md` lists every effect with its source.
extension FeedbackEffect {
    /// Every effect: iOS, watchOS, macOS, SwiftUI, then Android.
    public static let vocabulary: [FeedbackEffect] = Vocabulary.effects

    /// The effects of `family`, each with the version that introduced it, in the table's order.
    public static func effects(of family: Family) -> [FeedbackEffect] {
        vocabulary.filter { $0.family == family }
    }
}

/// The table behind ``FeedbackEffect/vocabulary``.
enum Vocabulary {
    // Shapes several names share.
    static let successShape: [Shape] = [.tap(at: 0, intensity: 0.6, sharpness: 0.5), .tap(at: 0.1, intensity: 1.0, sharpness: 0.8)]
    static let warningShape: [Shape] = [.tap(at: 0, intensity: 1.0, sharpness: 0.6), .tap(at: 0.15, intensity: 0.6, sharpness: 0.4)]
    static let errorShape: [Shape] = [
        .tap(at: 0, intensity: 0.8, sharpness: 0.8), .tap(at: 0.08, intensity: 0.8, sharpness: 0.8),
        .tap(at: 0.16, intensity: 1.0, sharpness: 0.8), .tap(at: 0.28, intensity: 0.6, sharpness: 0.4),
    ]
    static let selectionShape: [Shape] = [.tap(at: 0, intensity: 0.4, sharpness: 0.9)]
    static let upShape: [Shape] = [.tap(at: 0, intensity: 0.6, sharpness: 0.2), .tap(at: 0.1, intensity: 0.8, sharpness: 0.9)]
    static let downShape: [Shape] = [.tap(at: 0, intensity: 0.8, sharpness: 0.9), .tap(at: 0.1, intensity: 0.6, sharpness: 0.2)]
    static let startShape: [Shape] = [.tap(at: 0, intensity: 1.0, sharpness: 0.6)]
    static let stopShape: [Shape] = [.tap(at: 0, intensity: 1.0, sharpness: 0.6), .tap(at: 0.2, intensity: 1.0, sharpness: 0.6)]
    static let alignmentShape: [Shape] = [.tap(at: 0, intensity: 0.5, sharpness: 0.9)]
    static let levelChangeShape: [Shape] = [.tap(at: 0, intensity: 0.8, sharpness: 0.7)]
    /// A path completed: a light touch, then a crisp confirmation.
    static let pathShape: [Shape] = [.tap(at: 0, intensity: 0.5, sharpness: 0.6), .tap(at: 0.07, intensity: 0.8, sharpness: 0.9)]
    static func impact(_ intensity: Double, _ sharpness: Double) -> [Shape] { [.tap(at: 0, intensity: intensity, sharpness: sharpness)] }
    static let light = impact(0.45, 0.6), medium = impact(0.7, 0.5), heavy = impact(1.0, 0.35)
    static let rigid = impact(0.8, 1.0), solid = impact(0.75, 0.7), soft = impact(0.6, 0.1)
    // Android's predefined effects, timed as AOSP's fallback waveforms (on/off in ms): CLICK 20 on,
    // DOUBLE_CLICK 30 on, 100 off, 30 on, TICK 10 on, HEAVY_CLICK 30 on; TICK is documented as
    // less strong than CLICK and HEAVY_CLICK as stronger. TEXTURE_TICK (hidden) is the softest.
    static let click = impact(0.7, 0.7), tick = impact(0.45, 0.9), heavyClick = impact(1.0, 0.5), textureTick = impact(0.2, 1.0)
    static let doubleClick: [Shape] = [.tap(at: 0, intensity: 0.7, sharpness: 0.7), .tap(at: 0.13, intensity: 0.7, sharpness: 0.7)]

    static let effects: [FeedbackEffect] = [
        // iOS: UIImpactFeedbackGenerator, UISelectionFeedbackGenerator, UINotificationFeedbackGenerator.
        effect("impact.light", .iOS, "iOS 10", "impact", "a collision between small, light user-interface elements", light),
        effect("impact.medium", .iOS, "iOS 10", "impact", "a collision between moderately sized user-interface elements", medium),
        effect("impact.heavy", .iOS, "iOS 10", "impact", "a collision between large, heavy user-interface elements", heavy),
        effect("impact.rigid", .iOS, "iOS 13", "impact", "a collision between rigid elements, with little compression or elasticity", rigid),
        effect("impact.soft", .iOS, "iOS 13", "impact", "a collision between soft elements, with much compression or elasticity", soft),
        effect("selection", .iOS, "iOS 10", "selection", "the selection changed (a picker, a detent)", selectionShape),
        effect("notification.success", .iOS, "iOS 10", "notification", "a task or action completed", successShape),
        effect("notification.warning", .iOS, "iOS 10", "notification", "a task or action produced a warning", warningShape),
        effect("notification.error", .iOS, "iOS 10", "notification", "a task or action failed", errorShape),
        // UICanvasFeedbackGenerator (iOS 17.5): on a drawing canvas, felt through Apple Pencil Pro.
        effect("canvas.alignment", .iOS, "iOS 17.5", "alignment", "an element on a canvas snapped to a guide or ruler", alignmentShape),
        effect("canvas.pathCompleted", .iOS, "iOS 17.5", "notification", "a drawn path was completed, or a shape recognized", pathShape),

        // watchOS: WKHapticType.
        effect("watch.notification", .watchOS, "watchOS 2", "notification", "a notification arrived", [
            .tap(at: 0, intensity: 0.9, sharpness: 0.5), .tap(at: 0.12, intensity: 0.9, sharpness: 0.5),
        ]),
        effect("watch.directionUp", .watchOS, "watchOS 2", "direction", "a value rose above a significant threshold", upShape),
        effect("watch.directionDown", .watchOS, "watchOS 2", "direction", "a value fell below a significant threshold", downShape),
        effect("watch.success", .watchOS, "watchOS 2", "notification", "an action completed successfully", [
            .tap(at: 0, intensity: 0.5, sharpness: 0.4), .tap(at: 0.08, intensity: 0.7, sharpness: 0.6),
            .tap(at: 0.16, intensity: 1.0, sharpness: 0.8),
        ]),
        effect("watch.failure", .watchOS, "watchOS 2", "notification", "an action failed", [
            .tap(at: 0, intensity: 1.0, sharpness: 0.8), .tap(at: 0.08, intensity: 0.7, sharpness: 0.6),
            .tap(at: 0.16, intensity: 0.5, sharpness: 0.4),
        ]),
        effect("watch.retry", .watchOS, "watchOS 2", "notification", "an action failed and may be retried", [
            .tap(at: 0, intensity: 0.8, sharpness: 0.7), .tap(at: 0.06, intensity: 0.8, sharpness: 0.7),
            .tap(at: 0.12, intensity: 0.8, sharpness: 0.7),
        ]),
        effect("watch.start", .watchOS, "watchOS 2", "cue", "an activity started", startShape),
        effect("watch.stop", .watchOS, "watchOS 2", "cue", "an activity stopped", stopShape),
        effect("watch.click", .watchOS, "watchOS 2", "selection", "a very light tap: a dial's detent", [.tap(at: 0, intensity: 0.5, sharpness: 1.0)]),

        // macOS: NSHapticFeedbackManager patterns.
        effect("mac.generic", .macOS, "macOS 10.11", "impact", "general feedback, when no other pattern fits", impact(0.6, 0.5)),
        effect("mac.alignment", .macOS, "macOS 10.11", "alignment", "something was aligned: a guide snapped", alignmentShape),
        effect("mac.levelChange", .macOS, "macOS 10.11", "levelChange", "a change between discrete levels of force-click pressure", levelChangeShape),

        // SwiftUI: SensoryFeedback (iOS 17, macOS 14, watchOS 10); pathComplete iOS 17.5.
        effect("sensory.success", .swiftUI, "iOS 17", "notification", "a task completed successfully", successShape),
        effect("sensory.warning", .swiftUI, "iOS 17", "notification", "a task produced a warning", warningShape),
        effect("sensory.error", .swiftUI, "iOS 17", "notification", "an error occurred", errorShape),
        effect("sensory.selection", .swiftUI, "iOS 17", "selection", "the selection changed", selectionShape),
        effect("sensory.increase", .swiftUI, "iOS 17", "direction", "a value increased", upShape),
        effect("sensory.decrease", .swiftUI, "iOS 17", "direction", "a value decreased", downShape),
        effect("sensory.start", .swiftUI, "iOS 17", "cue", "an activity started", startShape),
        effect("sensory.stop", .swiftUI, "iOS 17", "cue", "an activity stopped", stopShape),
        effect("sensory.alignment", .swiftUI, "iOS 17", "alignment", "an item aligned with another", alignmentShape),
        effect("sensory.levelChange", .swiftUI, "iOS 17", "levelChange", "the pressure moved to another discrete level", levelChangeShape),
        effect("sensory.pathComplete", .swiftUI, "iOS 17.5", "notification", "a drawn path was completed", pathShape),
        effect("sensory.impact", .swiftUI, "iOS 17", "impact", "a physical impact, medium weight (the default)", medium),
        effect("sensory.impact.light", .swiftUI, "iOS 17", "impact", "an impact of a light object", light),
        effect("sensory.impact.heavy", .swiftUI, "iOS 17", "impact", "an impact of a heavy object", heavy),
        effect("sensory.impact.rigid", .swiftUI, "iOS 17", "impact", "an impact of a rigid object, which does not flex", rigid),
        effect("sensory.impact.solid", .swiftUI, "iOS 17", "impact", "an impact of a solid object, which flexes a little", solid),
        effect("sensory.impact.soft", .swiftUI, "iOS 17", "impact", "an impact of a soft object, which flexes a lot", soft),

        // Android: VibrationEffect.Composition primitives.
        effect("android.click", .android, "API 30", "impact", "PRIMITIVE_CLICK: a click", impact(0.7, 0.8)),
        effect("android.thud", .android, "API 31", "impact", "PRIMITIVE_THUD: a downward movement with gravity, heavy and dull", [
            .buzz(at: 0, duration: 0.03, intensity: 1.0, sharpness: 0.0, release: 0.5),
        ]),
        effect("android.spin", .android, "API 31", "ramp", "PRIMITIVE_SPIN: a spinning momentum", [
            .ramp(at: 0, duration: 0.25, sharpness: 0.5, points: [(0, 0.2), (0.06, 0.8), (0.125, 0.4), (0.19, 0.8), (0.25, 0.2)]),
        ]),
        effect("android.quickRise", .android, "API 30", "ramp", "PRIMITIVE_QUICK_RISE: a quick upward movement against gravity", [
            .ramp(at: 0, duration: 0.1, sharpness: 0.6, points: [(0, 0), (0.1, 1)]),
        ]),
        effect("android.slowRise", .android, "API 30", "ramp", "PRIMITIVE_SLOW_RISE: a slow upward movement against gravity", [
            .ramp(at: 0, duration: 0.4, sharpness: 0.4, points: [(0, 0), (0.4, 1)]),
        ]),
        effect("android.quickFall", .android, "API 30", "ramp", "PRIMITIVE_QUICK_FALL: a quick downward movement with gravity", [
            .ramp(at: 0, duration: 0.1, sharpness: 0.6, points: [(0, 1), (0.1, 0)]),
        ]),
        effect("android.lightTick", .android, "API 30", "selection", "PRIMITIVE_TICK: a tiny, crisp tick", [.tap(at: 0, intensity: 0.3, sharpness: 1.0)]),
        effect("android.lowTick", .android, "API 31", "selection", "PRIMITIVE_LOW_TICK: a tiny, low tick", [.tap(at: 0, intensity: 0.5, sharpness: 0.0)]),
        // VibrationEffect predefined effects.
        effect("android.effect.click", .android, "API 29", "impact", "EFFECT_CLICK: the baseline, most common click", click),
        effect("android.effect.doubleClick", .android, "API 29", "notification", "EFFECT_DOUBLE_CLICK: a double click", doubleClick),
        effect("android.effect.tick", .android, "API 29", "selection", "EFFECT_TICK: a tick, less strong than a click", tick),
        effect("android.effect.heavyClick", .android, "API 29", "impact", "EFFECT_HEAVY_CLICK: a click stronger than EFFECT_CLICK", heavyClick),
        // HapticFeedbackConstants, as AOSP plays them where the vibrator has no primitives.
        effect("android.feedback.longPress", .android, "API 3", "impact", "LONG_PRESS: a long press triggered an action (heavy click)", heavyClick),
        effect("android.feedback.virtualKey", .android, "API 5", "impact", "VIRTUAL_KEY: an on-screen key was pressed (click)", click),
        effect("android.feedback.keyboardPress", .android, "API 27", "impact", "KEYBOARD_PRESS: a software keyboard key was pressed (click)", click),
        effect("android.feedback.keyboardRelease", .android, "API 27", "selection", "KEYBOARD_RELEASE: a keyboard key was released (tick)", tick),
        effect("android.feedback.virtualKeyRelease", .android, "API 27", "selection", "VIRTUAL_KEY_RELEASE: a virtual key was released (tick)", tick),
        effect("android.feedback.clockTick", .android, "API 21", "selection", "CLOCK_TICK: an hour or minute tick of a clock was pressed (texture tick)", textureTick),
        effect("android.feedback.contextClick", .android, "API 23", "selection", "CONTEXT_CLICK: a context click on an object (tick)", tick),
        effect("android.feedback.textHandleMove", .android, "API 27", "selection", "TEXT_HANDLE_MOVE: a text selection handle moved (texture tick)", textureTick),
        effect("android.feedback.gestureStart", .android, "API 30", "impact", "GESTURE_START: a gesture started (click)", click),
        effect("android.feedback.gestureEnd", .android, "API 30", "selection", "GESTURE_END: a gesture finished (tick)", tick),
        effect("android.feedback.confirm", .android, "API 30", "notification", "CONFIRM: an interaction was confirmed or completed (click)", click),
        effect("android.feedback.reject", .android, "API 30", "notification", "REJECT: an interaction was rejected or failed (double click)", doubleClick),
        effect("android.feedback.toggleOn", .android, "API 34", "selection", "TOGGLE_ON: a switch was turned on (tick)", tick),
        effect("android.feedback.toggleOff", .android, "API 34", "selection", "TOGGLE_OFF: a switch was turned off (texture tick)", textureTick),
        effect("android.feedback.gestureThresholdActivate", .android, "API 34", "selection", "GESTURE_THRESHOLD_ACTIVATE: a gesture passed the point where releasing acts (tick)", tick),
        effect("android.feedback.gestureThresholdDeactivate", .android, "API 34", "selection", "GESTURE_THRESHOLD_DEACTIVATE: a gesture went back under that point (texture tick)", textureTick),
        effect("android.feedback.dragStart", .android, "API 34", "impact", "DRAG_START: a drag-and-drop target was picked up (heavy click)", heavyClick),
        effect("android.feedback.segmentTick", .android, "API 34", "selection", "SEGMENT_TICK: stepped between a few choices, a slider's stops (tick)", tick),
        effect("android.feedback.segmentFrequentTick", .android, "API 34", "selection", "SEGMENT_FREQUENT_TICK: stepped between many choices, very soft (texture tick)", textureTick),
    ]

    private static func effect(_ name: String, _ family: FeedbackEffect.Family, _ introduced: String, _ kind: String, _ meaning: String, _ shapes: [Shape]) -> FeedbackEffect {
        FeedbackEffect(name: name, family: family, kind: kind, pattern: Shape.pattern(shapes), introduced: introduced, meaning: meaning)
    }
}
