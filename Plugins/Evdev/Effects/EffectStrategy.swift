/// How the backend renders drive frames on one force-feedback device: which effect type it uploads
/// and which channels it describes. Chosen from the capability bits alone, once, at listing, so
/// nothing is probed at play time.
///
/// The capability bits (`EVIOCGBIT(EV_FF)`, the same set sysfs prints in `capabilities/ff`) are the
/// device's, after the input core added what it emulates:
/// - `ff-memless` drivers (every vibrator and pad driver in the kernel) declare `FF_RUMBLE` and get
///   `FF_PERIODIC` with `FF_SINE`, `FF_TRIANGLE`, `FF_SQUARE` and `FF_GAIN` added; the periodic effect
///   is then played as rumble of the same magnitude: its period is ignored.
/// - drivers with a native `FF_PERIODIC` get `FF_RUMBLE` added; the core turns a rumble effect into a
///   sine of period 50 ms (`compat_effect` in ff-core.c) before the driver sees it.
///
/// So a device showing both rumble and periodic bits is either kind, and the rules are:
/// 1. A game pad (it has joystick or game-pad buttons) with usable rumble: **dual rumble**, `strong`
///    and `weak` channels (`FF_RUMBLE`'s two magnitudes).
/// 2. Another device with a native sine (`FF_PERIODIC` and `FF_SINE`, and not exactly the set
///    ff-memless adds): **periodic**, one `main` channel whose frame frequency becomes the period.
/// 3. Else usable rumble: **single rumble**, one `main` channel on the strong magnitude (the one every
///    vibrator driver reads first; feedbackd does the same).
/// 4. Else `FF_CONSTANT` on a device that is not a joystick: **constant**, one `main` channel (a
///    joystick's or wheel's constant force turns the stick; it is not a vibration).
/// 5. Else **unusable**, with the reason (listed unavailable: a user sees why their device does
///    nothing).
///
/// Rumble counts as usable unless it can only be the core's emulation through a sine the driver
/// does not have (`FF_PERIODIC` without `FF_SINE`, as on da7280, whose periodic effects must be
/// `FF_CUSTOM`): the upload would reach the driver as a sine it refuses.
public enum EffectStrategy: Sendable, Hashable {
    /// `FF_RUMBLE` with both magnitudes: channels `strong`, `weak`.
    case dualRumble
    /// `FF_RUMBLE`, strong magnitude only: channel `main`.
    case singleRumble
    /// `FF_PERIODIC`, waveform `FF_SINE`, period from the frame's frequency: channel `main`.
    case periodic
    /// `FF_CONSTANT`: channel `main`.
    case constant
    /// Nothing the backend can render; the reason names what the device offers.
    case unusable(reason: String)

    /// The waveform bits ff-memless adds to a rumble device (Linux 6.1 `input_ff_create_memless`).
    static let memlessWaveforms: Set<Int> = [FF.sine, FF.triangle, FF.square]

    /// The strategy for a device with force-feedback bits `ff` and key bits `keys`.
    public static func choose(ff: InputBitmap, keys: InputBitmap) -> EffectStrategy {
        let isJoystick = keys.containsAny(in: GamepadKeys.range)
        let hasSine = ff.contains(FF.periodic) && ff.contains(FF.sine)
        let rumbleUsable = ff.contains(FF.rumble) && (!ff.contains(FF.periodic) || ff.contains(FF.sine))
        let waveforms = Set(ff.codes.filter { (FF.square...FF.custom).contains($0) })
        let looksMemless = ff.contains(FF.rumble) && waveforms == memlessWaveforms && ff.contains(FF.gain)
        if isJoystick, rumbleUsable { return .dualRumble }
        if !isJoystick, hasSine, !looksMemless { return .periodic }
        if rumbleUsable { return .singleRumble }
        if !isJoystick, ff.contains(FF.constant) { return .constant }
        let offered = ff.codes.filter { $0 != FF.gain && $0 != FF.autocenter }.map(FF.name)
        if isJoystick {
            return .unusable(
                reason: "a joystick or wheel without rumble (it offers \(offered.isEmpty ? "no effect" : offered.joined(separator: ", "))): "
                    + "its force effects move the stick or wheel, they are not vibration")
        }
        return .unusable(
            reason: "no effect swift-haptics can render: it offers \(offered.isEmpty ? "no effect" : offered.joined(separator: ", ")); "
                + "it needs FF_RUMBLE, FF_PERIODIC with FF_SINE, or FF_CONSTANT (FF_CUSTOM waveforms are the device's own stored patterns)")
    }

    /// The effect type uploaded (`FF_RUMBLE`, `FF_PERIODIC`, `FF_CONSTANT`), nil when unusable.
    public var effectType: Int? {
        switch self {
        case .dualRumble, .singleRumble: FF.rumble
        case .periodic: FF.periodic
        case .constant: FF.constant
        case .unusable: nil
        }
    }

    /// The channel names, in frame order.
    public var channelNames: [String] {
        switch self {
        case .dualRumble: ["strong", "weak"]
        default: ["main"]
        }
    }

    /// A short description for logs and messages: `FF_RUMBLE (strong, weak)`.
    public var summary: String {
        switch self {
        case .dualRumble: "FF_RUMBLE (strong and weak motors)"
        case .singleRumble: "FF_RUMBLE (strong magnitude)"
        case .periodic: "FF_PERIODIC sine (period from the frame's frequency)"
        case .constant: "FF_CONSTANT"
        case .unusable(let reason): "unusable: \(reason)"
        }
    }
}
