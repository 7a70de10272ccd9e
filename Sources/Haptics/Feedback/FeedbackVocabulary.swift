/// Every feedback effect, in one place. Times in seconds; intensity and sharpness 0 … 1.
///
/// The shapes follow what the platforms describe: iOS impacts differ in strength (light, medium,
/// heavy) and in feel (rigid is crisp, soft is round); a selection tick is light and crisp;
/// notifications are short rhythms (success rises, warning falls, error repeats). watchOS adds
/// directional pairs and start/stop cues; macOS's force-click trackpad has generic, alignment and
/// level-change taps; Android's composition primitives include rising, falling and spinning ramps.
/// Single impulses stay at or under 20 ms on fast actuators (the renderer's tap), so none feels buzzy.
extension FeedbackEffect {
    /// Every effect, iOS first, then watchOS, macOS and Android.
    public static let vocabulary: [FeedbackEffect] = [
        // iOS: UIImpactFeedbackGenerator, UISelectionFeedbackGenerator, UINotificationFeedbackGenerator.
        effect("impact.light", .iOS, "impact", [.tap(at: 0, intensity: 0.45, sharpness: 0.6)]),
        effect("impact.medium", .iOS, "impact", [.tap(at: 0, intensity: 0.7, sharpness: 0.5)]),
        effect("impact.heavy", .iOS, "impact", [.tap(at: 0, intensity: 1.0, sharpness: 0.35)]),
        effect("impact.rigid", .iOS, "impact", [.tap(at: 0, intensity: 0.8, sharpness: 1.0)]),
        effect("impact.soft", .iOS, "impact", [.tap(at: 0, intensity: 0.6, sharpness: 0.1)]),
        effect("selection", .iOS, "selection", [.tap(at: 0, intensity: 0.4, sharpness: 0.9)]),
        effect("notification.success", .iOS, "notification", [
            .tap(at: 0, intensity: 0.6, sharpness: 0.5), .tap(at: 0.1, intensity: 1.0, sharpness: 0.8),
        ]),
        effect("notification.warning", .iOS, "notification", [
            .tap(at: 0, intensity: 1.0, sharpness: 0.6), .tap(at: 0.15, intensity: 0.6, sharpness: 0.4),
        ]),
        effect("notification.error", .iOS, "notification", [
            .tap(at: 0, intensity: 0.8, sharpness: 0.8), .tap(at: 0.08, intensity: 0.8, sharpness: 0.8),
            .tap(at: 0.16, intensity: 1.0, sharpness: 0.8), .tap(at: 0.28, intensity: 0.6, sharpness: 0.4),
        ]),

        // watchOS: WKHapticType.
        effect("watch.notification", .watchOS, "notification", [
            .tap(at: 0, intensity: 0.9, sharpness: 0.5), .tap(at: 0.12, intensity: 0.9, sharpness: 0.5),
        ]),
        effect("watch.directionUp", .watchOS, "direction", [
            .tap(at: 0, intensity: 0.6, sharpness: 0.2), .tap(at: 0.1, intensity: 0.8, sharpness: 0.9),
        ]),
        effect("watch.directionDown", .watchOS, "direction", [
            .tap(at: 0, intensity: 0.8, sharpness: 0.9), .tap(at: 0.1, intensity: 0.6, sharpness: 0.2),
        ]),
        effect("watch.success", .watchOS, "notification", [
            .tap(at: 0, intensity: 0.5, sharpness: 0.4), .tap(at: 0.08, intensity: 0.7, sharpness: 0.6),
            .tap(at: 0.16, intensity: 1.0, sharpness: 0.8),
        ]),
        effect("watch.failure", .watchOS, "notification", [
            .tap(at: 0, intensity: 1.0, sharpness: 0.8), .tap(at: 0.08, intensity: 0.7, sharpness: 0.6),
            .tap(at: 0.16, intensity: 0.5, sharpness: 0.4),
        ]),
        effect("watch.retry", .watchOS, "notification", [
            .tap(at: 0, intensity: 0.8, sharpness: 0.7), .tap(at: 0.06, intensity: 0.8, sharpness: 0.7),
            .tap(at: 0.12, intensity: 0.8, sharpness: 0.7),
        ]),
        effect("watch.start", .watchOS, "cue", [.tap(at: 0, intensity: 1.0, sharpness: 0.6)]),
        effect("watch.stop", .watchOS, "cue", [
            .tap(at: 0, intensity: 1.0, sharpness: 0.6), .tap(at: 0.2, intensity: 1.0, sharpness: 0.6),
        ]),
        effect("watch.click", .watchOS, "selection", [.tap(at: 0, intensity: 0.5, sharpness: 1.0)]),

        // macOS: NSHapticFeedbackManager patterns.
        effect("mac.generic", .macOS, "impact", [.tap(at: 0, intensity: 0.6, sharpness: 0.5)]),
        effect("mac.alignment", .macOS, "alignment", [.tap(at: 0, intensity: 0.5, sharpness: 0.9)]),
        effect("mac.levelChange", .macOS, "levelChange", [.tap(at: 0, intensity: 0.8, sharpness: 0.7)]),

        // Android: VibrationEffect.Composition primitives.
        effect("android.click", .android, "impact", [.tap(at: 0, intensity: 0.7, sharpness: 0.8)]),
        effect("android.thud", .android, "impact", [.buzz(at: 0, duration: 0.03, intensity: 1.0, sharpness: 0.0, release: 0.5)]),
        effect("android.spin", .android, "ramp", [
            .ramp(at: 0, duration: 0.25, sharpness: 0.5, points: [(0, 0.2), (0.06, 0.8), (0.125, 0.4), (0.19, 0.8), (0.25, 0.2)]),
        ]),
        effect("android.quickRise", .android, "ramp", [.ramp(at: 0, duration: 0.1, sharpness: 0.6, points: [(0, 0), (0.1, 1)])]),
        effect("android.slowRise", .android, "ramp", [.ramp(at: 0, duration: 0.4, sharpness: 0.4, points: [(0, 0), (0.4, 1)])]),
        effect("android.quickFall", .android, "ramp", [.ramp(at: 0, duration: 0.1, sharpness: 0.6, points: [(0, 1), (0.1, 0)])]),
        effect("android.lightTick", .android, "selection", [.tap(at: 0, intensity: 0.3, sharpness: 1.0)]),
        effect("android.lowTick", .android, "selection", [.tap(at: 0, intensity: 0.5, sharpness: 0.0)]),
    ]

    private static func effect(_ name: String, _ family: Family, _ kind: String, _ shapes: [Shape]) -> FeedbackEffect {
        FeedbackEffect(name: name, family: family, kind: kind, pattern: Shape.pattern(shapes))
    }
}
