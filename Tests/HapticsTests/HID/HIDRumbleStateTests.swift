import HIDReports
import Testing

@Suite("HID: transports and the rumble state")
struct HIDRumbleStateTests {
    @Test("Linux bus numbers: BUS_USB 0x03 and BUS_BLUETOOTH 0x05")
    func linuxBuses() {
        #expect(HIDTransport(linuxBus: 0x03) == .usb)
        #expect(HIDTransport(linuxBus: UInt16(0x05)) == .bluetooth)
        #expect(HIDTransport(linuxBus: 0x18) == nil)  // BUS_I2C
        #expect(HIDTransport(linuxBus: 0x01) == nil)  // BUS_PCI, not hidapi's USB
    }

    @Test("amplitudes outside 0…1 clamp, NaN becomes 0, in the initializer and the setters")
    func amplitudeClamping() {
        let state = RumbleState(strong: 1.5, weak: -0.25, leftTrigger: .nan, rightTrigger: .infinity)
        #expect(state.strong == 1)
        #expect(state.weak == 0)
        #expect(state.leftTrigger == 0)
        #expect(state.rightTrigger == 1)
        var changed = RumbleState(strong: 0.25, weak: 0.75)
        #expect(changed.strong == 0.25 && changed.weak == 0.75)
        changed.strong = .nan
        changed.weak = 7
        changed.leftTrigger = -.infinity
        changed.rightTrigger = nil
        #expect(changed.strong == 0)
        #expect(changed.weak == 1)
        #expect(changed.leftTrigger == 0)
        #expect(changed.rightTrigger == nil)
    }

    @Test("frequencies default to 160 and 320 Hz; NaN restores the default, negatives become 0")
    func frequencies() {
        let state = RumbleState()
        #expect(state.strongFrequency == 160)
        #expect(state.weakFrequency == 320)
        var changed = RumbleState(strongFrequency: .nan, weakFrequency: -10)
        #expect(changed.strongFrequency == 160)
        #expect(changed.weakFrequency == 0)
        changed.strongFrequency = 1000
        changed.weakFrequency = .nan
        #expect(changed.strongFrequency == 1000)
        #expect(changed.weakFrequency == 320)
    }

    @Test("off is all motors at 0; any motor above 0 is not off")
    func offState() {
        #expect(RumbleState.off.isOff)
        #expect(RumbleState(strong: .nan, weak: -1).isOff)
        #expect(!RumbleState(weak: 0.01).isOff)
        #expect(!RumbleState(rightTrigger: 0.5).isOff)
        #expect(RumbleState.off == RumbleState(leftTrigger: nil))
    }

    @Test("every family encodes an out-of-range state exactly like its clamped twin")
    func encodersSeeClampedValues() {
        let wild = RumbleState(strong: 9, weak: .nan, leftTrigger: -3, rightTrigger: 2)
        let tame = RumbleState(strong: 1, weak: 0, leftTrigger: 0, rightTrigger: 1)
        for family in ControllerTable.families {
            for transport in HIDTransport.allCases {
                #expect(
                    family.rumbleReport(state: wild, transport: transport, sequence: 5)
                        == family.rumbleReport(state: tame, transport: transport, sequence: 5), "\(family.name)")
            }
        }
        #expect(XboxOneBluetooth.rumbleReport(state: wild, transport: .bluetooth, sequence: 0)[2...5] == [0, 100, 100, 0])
    }
}
