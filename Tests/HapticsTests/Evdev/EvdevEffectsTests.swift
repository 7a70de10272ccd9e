import EvdevEffects
import Testing

/// The evdev backend's pure parts: sysfs bitmaps, the choice of effect from the capability bits,
/// frames to effect parameters, and device ids. The kernel side is in the guest suites.
@Suite("evdev: capabilities, effect choice, rendering and ids")
struct EvdevEffectsTests {
    /// What ff-memless devices show on x86_64 (FF_RUMBLE, then the core adds FF_PERIODIC with
    /// FF_SQUARE, FF_TRIANGLE, FF_SINE and FF_GAIN): `cat /sys/class/input/inputN/capabilities/ff`.
    static let memless = "107030000 0\n"

    @Test("sysfs bitmaps: 64-bit words most significant first, 32-bit words, leading zero words left out, garbage refused")
    func bitmaps() {
        let ff = InputBitmap(sysfs: Self.memless)
        #expect(ff?.codes == [FF.rumble, FF.periodic, FF.square, FF.triangle, FF.sine, FF.gain])
        #expect(InputBitmap(sysfs: "1 7030000 0 0", wordBits: 32)?.codes == ff?.codes)
        // A game pad's keys: BTN_SOUTH (0x130) is bit 48 of the fifth 64-bit word.
        let keys = InputBitmap(sysfs: "1000000000000 0 0 0 0")
        #expect(keys?.codes == [0x130])
        #expect(keys?.containsAny(in: GamepadKeys.range) == true)
        #expect(InputBitmap(sysfs: "0")?.isEmpty == true)
        #expect(InputBitmap(sysfs: "")?.isEmpty == true)
        #expect(InputBitmap(sysfs: "12g4 0") == nil)
        #expect(InputBitmap(sysfs: "11112222333344445 0") == nil, "17 hex digits do not fit a 64-bit word")
        // EVIOCGBIT answers in bytes, bit n of the set in bit n % 8 of byte n / 8.
        var bytes = [UInt8](repeating: 0, count: 16)
        bytes[10] = 0b0000_0011  // 0x50, 0x51
        bytes[12] = 0b0000_0001  // 0x60
        #expect(InputBitmap(bytes: bytes).codes == [FF.rumble, FF.periodic, FF.gain])
    }

    static func bits(_ codes: Int...) -> InputBitmap { InputBitmap(codes: codes) }
    static let padKeys = InputBitmap(codes: [0x130, 0x131, 0x133, 0x134])

    @Test("effect choice: pads rumble on two motors, vibrators on the strong one, native sines and constant forces get theirs, the rest is refused with a reason")
    func strategies() throws {
        let memless = try #require(InputBitmap(sysfs: Self.memless))
        // hid-playstation, xpad, hid-nintendo: ff-memless with buttons.
        #expect(EffectStrategy.choose(ff: memless, keys: Self.padKeys) == .dualRumble)
        // pwm-vibrator, gpio-vibrator, drv260x: the same bits, no buttons; the periodic bits are emulation.
        #expect(EffectStrategy.choose(ff: memless, keys: InputBitmap(codes: [])) == .singleRumble)
        // A uinput vibrator declaring FF_RUMBLE only (uinput adds nothing).
        #expect(EffectStrategy.choose(ff: Self.bits(FF.rumble), keys: InputBitmap(codes: [])) == .singleRumble)
        // A native periodic driver (the core adds FF_RUMBLE as its emulation through a sine).
        #expect(EffectStrategy.choose(ff: Self.bits(FF.rumble, FF.periodic, FF.sine, FF.gain), keys: InputBitmap(codes: [])) == .periodic)
        #expect(EffectStrategy.choose(ff: Self.bits(FF.rumble, FF.periodic, FF.sine, FF.square, FF.sawUp, FF.gain), keys: InputBitmap(codes: [])) == .periodic)
        // A pad with a native sine still rumbles on its two motors.
        #expect(EffectStrategy.choose(ff: Self.bits(FF.rumble, FF.periodic, FF.sine), keys: Self.padKeys) == .dualRumble)
        // da7280: FF_PERIODIC only as FF_CUSTOM, FF_CONSTANT, FF_GAIN, and the emulated FF_RUMBLE that would reach it as a sine it refuses.
        let da7280 = Self.bits(FF.rumble, FF.periodic, FF.constant, FF.custom, FF.gain)
        #expect(EffectStrategy.choose(ff: da7280, keys: InputBitmap(codes: [])) == .constant)
        // A device with stored waveforms only (cs40l50-like): nothing to render.
        guard case .unusable(let reason) = EffectStrategy.choose(ff: Self.bits(FF.rumble, FF.periodic, FF.custom, FF.gain), keys: InputBitmap(codes: [])) else {
            Issue.record("a custom-only device must be unusable")
            return
        }
        #expect(reason.contains("FF_CUSTOM") && reason.contains("FF_PERIODIC"), "\(reason)")
        // A wheel: its constant force turns the wheel; not a vibration.
        let wheel = Self.bits(FF.constant, FF.spring, FF.damper, FF.gain, FF.autocenter)
        guard case .unusable(let wheelReason) = EffectStrategy.choose(ff: wheel, keys: InputBitmap(codes: [0x120, 0x121])) else {
            Issue.record("a wheel must be unusable")
            return
        }
        #expect(wheelReason.contains("joystick or wheel") && wheelReason.contains("FF_CONSTANT"), "\(wheelReason)")
        #expect(!wheelReason.contains("FF_GAIN"), "gain is not an effect: \(wheelReason)")
        #expect(EffectStrategy.dualRumble.channelNames == ["strong", "weak"])
        #expect(EffectStrategy.constant.channelNames == ["main"])
    }

    @Test("frames to parameters: 16-bit rumble magnitudes, 15-bit sine and constant, whole-millisecond periods, silence stops")
    func rendering() {
        let dual = EffectRenderer(strategy: .dualRumble)
        #expect(dual.parameters(amplitudes: [1, 0.5], frequencies: [0, 0]) == {
            var p = EffectParameters(type: FF.rumble)
            p.strong = 0xFFFF
            p.weak = 0x8000
            return p
        }())
        #expect(dual.parameters(amplitudes: [0, 0], frequencies: [0, 0]) == nil, "a silent frame stops, it does not play zero")
        #expect(dual.parameters(amplitudes: [2, -1], frequencies: [])?.strong == 0xFFFF)
        #expect(dual.parameters(amplitudes: [.nan, 0.25], frequencies: [])?.strong == 0)
        #expect(dual.parameters(amplitudes: [1], frequencies: [])?.weak == 0, "a missing channel is off")
        let single = EffectRenderer(strategy: .singleRumble)
        let vibrate = single.parameters(amplitudes: [0.25], frequencies: [0])
        #expect(vibrate?.strong == 0x4000 && vibrate?.weak == 0)
        let sine = EffectRenderer(strategy: .periodic)
        let played = sine.parameters(amplitudes: [0.5], frequencies: [175])
        #expect(played?.type == FF.periodic && played?.magnitude == 0x4000 && played?.periodMilliseconds == 6)
        #expect(sine.restingParameters?.periodMilliseconds == EffectRenderer.defaultPeriodMilliseconds)
        #expect(sine.restingParameters?.isSilent == true)
        for (frequency, period) in [(0, 6), (40, 25), (10, 25), (500, 2), (1000, 2), (250, 4), (Float.infinity, 6), (-3, 6)] as [(Float, UInt16)] {
            #expect(EffectRenderer.period(forFrequency: frequency) == period, "\(frequency) Hz")
        }
        let constant = EffectRenderer(strategy: .constant)
        #expect(constant.parameters(amplitudes: [1], frequencies: [])?.level == 0x7FFF)
        #expect(EffectRenderer(strategy: .unusable(reason: "x")).parameters(amplitudes: [1], frequencies: []) == nil)
        #expect(EffectRenderer(strategy: .unusable(reason: "x")).restingParameters == nil)
    }

    @Test("drv260x and drv2667: the level in both bytes, right whether the driver keeps the low byte (Linux 6.1) or the high one (the 2023 fix)")
    func byteInBothHalves() {
        let traits = DriverTraits.of(driver: "drv260x-haptics")
        #expect(traits.encoding == .byteInBothHalves && traits.amplitudeSteps == 256)
        let renderer = EffectRenderer(strategy: .singleRumble, encoding: traits.encoding)
        for (amplitude, level) in [(1, 0xFF), (0.5, 0x80), (0.25, 0x40), (0.002, 0x01)] as [(Float, UInt16)] {
            let magnitude = renderer.rumbleMagnitude(amplitude)
            #expect(magnitude & 0xFF == level && magnitude >> 8 == level, "\(amplitude) → 0x\(String(magnitude, radix: 16))")
        }
        #expect(DriverTraits.of(driver: "gpio-vibrator").amplitudeSteps == 2)
        #expect(DriverTraits.of(driver: "microsoft").minimumIntervalMilliseconds == 50)
        #expect(DriverTraits.of(driver: "no-such-driver") == DriverTraits(amplitudeSteps: 65536))
        #expect(DriverTraits.of(driver: nil).amplitudeSteps == 65536)
    }

    @Test("ids from sysfs alone: driver, model, bus, then uniq, USB serial, phys, device-tree path or name; physical id: HID device, else parent")
    func ids() {
        let ff = InputBitmap(codes: [FF.rumble])
        let dualSense = InputDeviceFacts(
            eventNode: "/dev/input/event7", inputSyspath: "/sys/devices/virtual/misc/uhid/0003:054C:0CE6.0001/input/input9",
            name: "Sony Interactive Entertainment DualSense Wireless Controller", uniq: "02:56:00:12:00:01", bus: 3, vendor: 0x054C,
            product: 0x0CE6, ff: ff, driver: "playstation", parentSyspath: "/sys/devices/virtual/misc/uhid/0003:054C:0CE6.0001",
            hidSyspath: "/sys/devices/virtual/misc/uhid/0003:054C:0CE6.0001")
        #expect(dualSense.id == "evdev:playstation:054c:0ce6:usb:02:56:00:12:00:01")
        #expect(dualSense.physicalID == "/sys/devices/virtual/misc/uhid/0003:054C:0CE6.0001")
        let vibrator = InputDeviceFacts(
            eventNode: "/dev/input/event1", inputSyspath: "/sys/devices/platform/vibrator/input/input1", name: "pwm-vibrator", bus: 0x19,
            vendor: 0, product: 0, ff: ff, driver: "pwm-vibrator", parentSyspath: "/sys/devices/platform/vibrator")
        #expect(vibrator.id == "evdev:pwm-vibrator:0000:0000:host:platform/vibrator")
        #expect(vibrator.physicalID == "/sys/devices/platform/vibrator")
        var xbox = InputDeviceFacts(
            eventNode: "/dev/input/event4", inputSyspath: "/sys/devices/pci0000:00/0000:00:14.0/usb1/1-2/1-2:1.0/input/input4",
            name: "Microsoft X-Box One S pad", phys: "usb-0000:00:14.0-2/input0", bus: 3, vendor: 0x045E, product: 0x02EA, ff: ff, driver: "xpad",
            parentSyspath: "/sys/devices/pci0000:00/0000:00:14.0/usb1/1-2/1-2:1.0", usbSerial: "3039373130303637")
        #expect(xbox.id == "evdev:xpad:045e:02ea:usb:3039373130303637", "the USB serial follows the pad to every port")
        xbox.usbSerial = ""
        #expect(xbox.id == "evdev:xpad:045e:02ea:usb:usb-0000:00:14.0-2/input0", "no serial: the port")
        let virtual = InputDeviceFacts(
            eventNode: "/dev/input/event9", inputSyspath: "/sys/devices/virtual/input/input12", name: "Steam Virtual Gamepad", bus: 6,
            vendor: 0x28DE, product: 0x11FF, ff: ff)
        #expect(virtual.id == "evdev:virtual:28de:11ff:virtual:Steam_Virtual_Gamepad")
        #expect(virtual.physicalID == nil, "a uinput device is no other backend's")
        let orphan = InputDeviceFacts(
            eventNode: "/dev/input/event2", inputSyspath: "/sys/devices/platform/foo/input/input2", name: "x", bus: 0x42, vendor: 1, product: 2,
            ff: ff, parentSyspath: "/sys/devices/platform/foo")
        #expect(orphan.id == "evdev:none:0001:0002:bus0042:platform/foo")
        let long = InputDeviceFacts(
            eventNode: "/dev/input/event3", inputSyspath: "/sys/devices/virtual/input/input3", name: String(repeating: "é", count: 100), bus: 6,
            vendor: 1, product: 1, ff: ff)
        #expect(long.id.utf8.count <= 127)
        #expect(long.id.unicodeScalars.allSatisfy { $0.isASCII })
    }
}
