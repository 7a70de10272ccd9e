/// Event and effect codes of `linux/input-event-codes.h` and `linux/input.h` the backend reads.
public enum FF {
    /// `EV_FF`: the event type of force feedback.
    public static let eventType = 0x15
    /// `FF_RUMBLE`: two motors, strong and weak magnitude.
    public static let rumble = 0x50
    /// `FF_PERIODIC`: a waveform with a period, magnitude, offset and phase.
    public static let periodic = 0x51
    /// `FF_CONSTANT`: a constant force level.
    public static let constant = 0x52
    /// `FF_SPRING`: a condition effect (joysticks, wheels).
    public static let spring = 0x53
    /// `FF_FRICTION`: a condition effect.
    public static let friction = 0x54
    /// `FF_DAMPER`: a condition effect.
    public static let damper = 0x55
    /// `FF_INERTIA`: a condition effect.
    public static let inertia = 0x56
    /// `FF_RAMP`: a force ramping between two levels.
    public static let ramp = 0x57
    /// `FF_SQUARE`: a periodic waveform.
    public static let square = 0x58
    /// `FF_TRIANGLE`: a periodic waveform.
    public static let triangle = 0x59
    /// `FF_SINE`: a periodic waveform.
    public static let sine = 0x5A
    /// `FF_SAW_UP`: a periodic waveform.
    public static let sawUp = 0x5B
    /// `FF_SAW_DOWN`: a periodic waveform.
    public static let sawDown = 0x5C
    /// `FF_CUSTOM`: a periodic effect whose waveform is the device's own (a stored pattern).
    public static let custom = 0x5D
    /// `FF_GAIN`: device-wide strength, 0…0xFFFF, outliving every client.
    public static let gain = 0x60
    /// `FF_AUTOCENTER`: device-wide centring force (wheels).
    public static let autocenter = 0x61

    /// The kernel's name for an FF code, for messages.
    public static func name(_ code: Int) -> String {
        let names: [Int: String] = [
            rumble: "FF_RUMBLE", periodic: "FF_PERIODIC", constant: "FF_CONSTANT", spring: "FF_SPRING", friction: "FF_FRICTION",
            damper: "FF_DAMPER", inertia: "FF_INERTIA", ramp: "FF_RAMP", square: "FF_SQUARE", triangle: "FF_TRIANGLE", sine: "FF_SINE",
            sawUp: "FF_SAW_UP", sawDown: "FF_SAW_DOWN", custom: "FF_CUSTOM", gain: "FF_GAIN", autocenter: "FF_AUTOCENTER",
        ]
        return names[code] ?? "FF_0x" + String(code, radix: 16)
    }
}

/// Key codes that mark a joystick or game pad: `BTN_JOYSTICK` (0x120) … `BTN_THUMBR` (0x13e), the
/// ranges `BTN_TRIGGER…BTN_DEAD` and `BTN_SOUTH…BTN_THUMBR` (udev's `input_id` builtin uses the same
/// ranges for `ID_INPUT_JOYSTICK`, which is absent without a udev daemon).
public enum GamepadKeys {
    /// `BTN_JOYSTICK` … the last game-pad button code.
    public static let range = 0x120...0x13F
}
