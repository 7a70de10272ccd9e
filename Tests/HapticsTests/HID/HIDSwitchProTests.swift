import HIDReports
import Testing

@Suite("HID: Switch HD rumble encoding")
struct HIDSwitchHDRumbleTests {
    @Test("neutral is 00 01 40 40: both bands silent at 320 Hz high and 160 Hz low")
    func neutral() {
        #expect(SwitchHDRumble.neutral == [0x00, 0x01, 0x40, 0x40])
        #expect(
            SwitchHDRumble.encode(highFrequency: 320, highAmplitudeIndex: 0, lowFrequency: 160, lowAmplitudeIndex: 0)
                == SwitchHDRumble.neutral)
        #expect(SwitchHDRumble.actuator(amplitude: 0, frequency: 1000) == SwitchHDRumble.neutral)
        #expect(SwitchHDRumble.actuator(amplitude: .nan, frequency: 60) == SwitchHDRumble.neutral)
    }

    /// (Hz, the kernel's `high` field as byte0 << 8 | byte1 or nil below the band, `low` or nil above it),
    /// from hid-nintendo.c `joycon_rumble_frequencies` (dekuNukem's table, rounded Hz).
    static let frequencyTable: [(Double, UInt16?, UInt8?)] = [
        (41, nil, 0x01), (42, nil, 0x02), (50, nil, 0x0A), (57, nil, 0x10), (80, nil, 0x20), (82, 0x0400, 0x21),
        (85, 0x0C00, 0x23), (102, 0x2C00, 0x2B), (141, 0x6800, 0x3A), (160, 0x8000, 0x40), (203, 0xAC00, 0x4B),
        (313, 0xFC00, 0x5F), (320, 0x0001, 0x60), (327, 0x0401, 0x61), (443, 0x3C01, 0x6F), (626, 0x7C01, 0x7F),
        (640, 0x8001, nil), (729, 0x9801, nil), (1009, 0xD401, nil), (1100, 0xE401, nil), (1253, 0xFC01, nil),
    ]

    @Test("frequency fields match the kernel's table points", arguments: frequencyTable)
    func frequencyTablePoints(hertz: Double, high: UInt16?, low: UInt8?) {
        if let high {
            let field = SwitchHDRumble.highBandField(hertz: hertz)
            #expect((field & 0xFF) << 8 | field >> 8 == high)
        }
        if let low { #expect(SwitchHDRumble.lowBandField(hertz: hertz) == low) }
    }

    @Test("every frequency code decodes and re-encodes to itself; one step is 2^(1/32)")
    func frequencyRoundTrip() {
        for code in 0x41...0xDF {
            let hertz = SwitchHDRumble.frequency(code: code)
            #expect(SwitchHDRumble.frequencyCode(hertz: hertz) == code)
            if code >= 0x61 { #expect(Int(SwitchHDRumble.highBandField(hertz: hertz)) == (code - 0x60) * 4) }
            if code <= 0xBF { #expect(Int(SwitchHDRumble.lowBandField(hertz: hertz)) == code - 0x40) }
        }
        #expect(SwitchHDRumble.frequency(code: 0x80) == 160)
        #expect(SwitchHDRumble.frequency(code: 0xA0) == 320)
    }

    @Test("frequencies clamp to the bands: low 41–626 Hz, high 82–1253 Hz")
    func frequencyClamping() {
        #expect(SwitchHDRumble.lowBandField(hertz: 1) == 0x01)
        #expect(SwitchHDRumble.lowBandField(hertz: 5000) == 0x7F)
        #expect(SwitchHDRumble.lowBandField(hertz: .infinity) == 0x7F)
        #expect(SwitchHDRumble.lowBandField(hertz: .nan) == 0x40)
        #expect(SwitchHDRumble.highBandField(hertz: 0) == 0x004)
        #expect(SwitchHDRumble.highBandField(hertz: 20_000) == 0x1FC)
        #expect(SwitchHDRumble.highBandField(hertz: .nan) == 0x100)
    }

    /// hid-nintendo.c `joycon_rumble_amplitudes`, the `amp` column (thousandths), index 0…100.
    static let kernelAmplitudes: [Int] = [
        0, 10, 12, 14, 17, 20, 24, 28, 33, 40, 47, 56, 67, 80, 95, 112, 117, 123, 128, 134, 140, 146, 152, 159, 166,
        173, 181, 189, 198, 206, 215, 225, 230, 235, 240, 245, 251, 256, 262, 268, 273, 279, 286, 292, 298, 305, 311,
        318, 325, 332, 340, 347, 355, 362, 370, 378, 387, 395, 404, 413, 422, 431, 440, 450, 460, 470, 480, 491, 501,
        512, 524, 535, 547, 559, 571, 584, 596, 609, 623, 636, 650, 665, 679, 694, 709, 725, 741, 757, 773, 790, 808,
        825, 843, 862, 881, 900, 920, 940, 960, 981, 1003,
    ]

    @Test("the log2 amplitude formulas reproduce the kernel's 101-entry table")
    func amplitudeTable() {
        #expect(Self.kernelAmplitudes.count == 101)
        for (index, thousandths) in Self.kernelAmplitudes.enumerated() {
            #expect(SwitchHDRumble.amplitudeIndex(amplitude: Double(thousandths) / 1000) == UInt8(index), "index \(index)")
            #expect(abs(SwitchHDRumble.amplitude(index: UInt8(index)) * 1000 - Double(thousandths)) <= 0.5, "index \(index)")
        }
    }

    @Test("dekuNukem's exact amplitudes at the run boundaries and ends encode to their index")
    func amplitudeBoundaries() {
        let points: [(Double, UInt8)] = [
            (0.011823, 2), (0.112491, 15), (0.117471, 16), (0.224982, 31), (0.229908, 32), (0.459817, 64),
            (0.501433, 68), (1.002867, 100),
        ]
        for (amplitude, index) in points { #expect(SwitchHDRumble.amplitudeIndex(amplitude: amplitude) == index) }
        #expect(SwitchHDRumble.amplitudeIndex(amplitude: 1.8) == 100, "unsafe amplitudes are never emitted")
        #expect(SwitchHDRumble.amplitudeIndex(amplitude: -1) == 0)
        #expect(SwitchHDRumble.amplitudeIndex(amplitude: .nan) == 0)
        #expect(SwitchHDRumble.amplitudeIndex(amplitude: 0.004) == 0)
    }

    @Test("amplitude bits: high band 2·i in byte 1, low band i&1 in bit 7 of byte 2 and 0x40 + i/2 in byte 3")
    func amplitudeBits() {
        // Index 67: the kernel's { 0x86, 0x8061 }.
        #expect(
            SwitchHDRumble.encode(highFrequency: 320, highAmplitudeIndex: 67, lowFrequency: 160, lowAmplitudeIndex: 67)
                == HIDBytes.hex("00 87 c0 61"))
        // Index 100 on both bands at the band limits: { 0xc8, 0x0072 }.
        #expect(
            SwitchHDRumble.encode(highFrequency: 1253, highAmplitudeIndex: 100, lowFrequency: 41, lowAmplitudeIndex: 100)
                == HIDBytes.hex("fc c9 01 72"))
        #expect(
            SwitchHDRumble.encode(highFrequency: 320, highAmplitudeIndex: 250, lowFrequency: 160, lowAmplitudeIndex: 250)
                == SwitchHDRumble.encode(highFrequency: 320, highAmplitudeIndex: 100, lowFrequency: 160, lowAmplitudeIndex: 100))
    }

    @Test("one tone per actuator: the low band up to 626 Hz, the high band above, the other band neutral")
    func bandSplit() {
        #expect(SwitchHDRumble.actuator(amplitude: 1, frequency: 160) == HIDBytes.hex("00 01 40 72"))
        #expect(SwitchHDRumble.actuator(amplitude: 1, frequency: 320) == HIDBytes.hex("00 01 60 72"))
        #expect(SwitchHDRumble.actuator(amplitude: 0.5, frequency: 80) == HIDBytes.hex("00 01 20 62"))
        #expect(SwitchHDRumble.actuator(amplitude: 1, frequency: 626) == HIDBytes.hex("00 01 7f 72"))
        #expect(SwitchHDRumble.actuator(amplitude: 1, frequency: 1000) == HIDBytes.hex("d4 c9 40 40"))
        #expect(SwitchHDRumble.actuator(amplitude: 1, frequency: 99_999) == HIDBytes.hex("fc c9 40 40"))
        #expect(SwitchHDRumble.actuator(amplitude: 1, frequency: 5) == HIDBytes.hex("00 01 01 72"))
    }
}

@Suite("HID: Switch Pro Controller reports")
struct HIDSwitchProTests {
    @Test("report 0x10: counter, left = strong, right = weak, padded to 64 bytes on USB and 49 on Bluetooth")
    func rumbleVectors() {
        let state = RumbleState(strong: 1, weak: 1)
        #expect(
            SwitchPro.rumbleReport(state: state, transport: .usb, sequence: 3)
                == HIDBytes.padded("10 03 00 01 40 72 00 01 60 72", to: 64))
        #expect(
            SwitchPro.rumbleReport(state: state, transport: .bluetooth, sequence: 3)
                == HIDBytes.padded("10 03 00 01 40 72 00 01 60 72", to: 49))
        let tones = RumbleState(strong: 0.5, weak: 1, strongFrequency: 80, weakFrequency: 1000)
        #expect(
            SwitchPro.rumbleReport(state: tones, transport: .bluetooth, sequence: 0)
                == HIDBytes.padded("10 00 00 01 20 62 d4 c9 40 40", to: 49))
    }

    @Test("stop is neutral on both actuators")
    func stop() {
        #expect(
            SwitchPro.stopReport(transport: .bluetooth, sequence: 9)
                == HIDBytes.padded("10 09 00 01 40 40 00 01 40 40", to: 49))
        #expect(SwitchPro.neutralRumbleData == HIDBytes.hex("00 01 40 40 00 01 40 40"))
    }

    @Test("the packet counter wraps 0x0…0xF")
    func counterWrap() {
        let counters = (0...40).map { SwitchPro.rumbleReport(state: .off, transport: .usb, sequence: UInt8($0))[1] }
        #expect(counters == (0...40).map { UInt8($0 % 16) })
        #expect(
            SwitchPro.rumbleReport(state: .off, transport: .usb, sequence: 0xFF)
                == SwitchPro.rumbleReport(state: .off, transport: .usb, sequence: 0x0F))
    }

    @Test("set-up over USB: handshake, 3 Mbit/s, handshake, no timeout, then enable vibration (0x48 01)")
    func usbSetup() {
        let reports = SwitchPro.setupReports(for: .usb, sequence: 14)
        #expect(
            reports == [
                HIDBytes.padded("80 02", to: 64), HIDBytes.padded("80 03", to: 64), HIDBytes.padded("80 02", to: 64),
                HIDBytes.padded("80 04", to: 64),
                // Report 4 takes counter 14 + 4 = 18, low bits 0x2.
                HIDBytes.padded("01 02 00 01 40 40 00 01 40 40 48 01", to: 64),
            ])
    }

    @Test("set-up plan over USB: the bridge commands unpaced, answered by 0x81 echoing the command but the last; the sub-command paced, answered by 0x21 echoing 0x48 at byte 14")
    func usbSetupPlan() {
        let steps = SwitchPro.setupPlan(for: .usb, sequence: 0)
        let writes = steps.compactMap { step -> (paced: Bool, answer: InputMatch?)? in
            if case .write(_, let paced, let answer) = step { (paced, answer) } else { nil }
        }
        #expect(writes.count == steps.count && writes.count == 5)
        #expect(writes.map(\.paced) == [false, false, false, false, true])
        #expect(
            writes.map(\.answer) == [
                InputMatch(reportID: 0x81, offset: 1, value: 0x02), InputMatch(reportID: 0x81, offset: 1, value: 0x03),
                InputMatch(reportID: 0x81, offset: 1, value: 0x02), nil, InputMatch(reportID: 0x21, offset: 14, value: 0x48),
            ])
        // What the kernel's answers look like (hid-nintendo.c: 0x81 <command>; 0x21 … with the
        // sub-command id echoed at byte 14), and what they must not be taken for.
        #expect(writes[0].answer?.matches([0x81, 0x02, 0x00]) == true)
        #expect(writes[0].answer?.matches([0x81, 0x03]) == false)
        #expect(writes[0].answer?.matches([0x81]) == false)
        var answer = [UInt8](repeating: 0, count: 49)
        answer[0] = 0x21
        answer[14] = 0x48
        #expect(writes[4].answer?.matches(answer) == true)
        #expect(writes[4].answer?.matches(Array(answer.prefix(14))) == false)
        #expect(SwitchPro.setupPlan(for: .bluetooth, sequence: 0).count == 1)
    }

    @Test("set-up over Bluetooth: only enable vibration, with neutral rumble riding along")
    func bluetoothSetup() {
        #expect(
            SwitchPro.setupReports(for: .bluetooth, sequence: 5)
                == [HIDBytes.padded("01 05 00 01 40 40 00 01 40 40 48 01", to: 49)])
    }

    @Test("a sub-command report carries the given rumble bytes and data")
    func subcommand() {
        let rumble = SwitchPro.rumbleData(for: RumbleState(strong: 1))
        #expect(rumble == HIDBytes.hex("00 01 40 72 00 01 40 40"))
        #expect(
            SwitchPro.subcommandReport(0x30, data: [0x01], rumble: rumble, transport: .bluetooth, sequence: 0x1A)
                == HIDBytes.padded("01 0a 00 01 40 72 00 01 40 40 30 01", to: 49))
    }

    @Test("30 ms spacing, 50 ms refresh, two frequency-controlled channels with 101 steps")
    func description() {
        for transport in HIDTransport.allCases {
            #expect(SwitchPro.minimumWriteInterval(for: transport) == 0.030)
            #expect(SwitchPro.refreshInterval(for: transport) == 0.050)
        }
        #expect(SwitchPro.channels.map(\.name) == ["strong", "weak"])
        #expect(SwitchPro.channels.map(\.defaultFrequency) == [160, 320])
        #expect(SwitchPro.channels.allSatisfy { $0.amplitudeSteps == 101 && $0.frequencyRange == 41...1253 })
    }
}
