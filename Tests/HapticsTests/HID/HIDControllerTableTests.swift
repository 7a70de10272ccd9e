import HIDReports
import Testing

@Suite("HID: the controller table")
struct HIDControllerTableTests {
    @Test(
        "each documented id finds its family",
        arguments: [
            (UInt16(0x054C), UInt16(0x05C4), DualShock4.name), (0x054C, 0x09CC, DualShock4.name),
            (0x054C, 0x0BA0, DualShock4.name), (0x054C, 0x0CE6, DualSense.name), (0x054C, 0x0DF2, DualSense.name),
            (0x045E, 0x02FD, XboxOneBluetooth.name), (0x045E, 0x0B13, XboxOneBluetooth.name),
            (0x045E, 0x0B20, XboxOneBluetooth.name), (0x045E, 0x0B22, XboxOneBluetooth.name),
            (0x057E, 0x2009, SwitchPro.name),
        ])
    func lookup(vendor: UInt16, product: UInt16, familyName: String) {
        #expect(ControllerTable.family(vendor: vendor, product: product)?.name == familyName)
        #expect(ControllerTable.model(vendor: vendor, product: product)?.productID == product)
        #expect(ControllerTable.model(vendor: vendor, product: product)?.name.isEmpty == false)
    }

    @Test("unknown ids, and known products under another vendor, find nothing")
    func unknown() {
        #expect(ControllerTable.family(vendor: 0x054C, product: 0x0268) == nil)  // DualShock 3: not driven here
        #expect(ControllerTable.family(vendor: 0x045E, product: 0x0CE6) == nil)
        #expect(ControllerTable.family(vendor: 0x057E, product: 0x2006) == nil)  // Joy-Con (L)
        #expect(ControllerTable.model(vendor: 0, product: 0) == nil)
    }

    @Test("models names: DualSense Edge and the Switch Pro Controller")
    func names() {
        #expect(ControllerTable.model(vendor: 0x054C, product: 0x0DF2)?.name == "DualSense Edge Wireless Controller")
        #expect(ControllerTable.model(vendor: 0x057E, product: 0x2009)?.name == "Nintendo Switch Pro Controller")
    }

    @Test("match respects transports: no Xbox over USB, no DualShock 4 adapter over Bluetooth")
    func transports() {
        #expect(ControllerTable.match(vendor: 0x045E, product: 0x0B13, transport: .usb) == nil)
        #expect(ControllerTable.match(vendor: 0x045E, product: 0x0B13, transport: .bluetooth)?.family == XboxOneBluetooth.self)
        #expect(ControllerTable.match(vendor: 0x054C, product: 0x0BA0, transport: .bluetooth) == nil)
        #expect(ControllerTable.match(vendor: 0x054C, product: 0x0BA0, transport: .usb)?.model.productID == 0x0BA0)
        #expect(ControllerTable.match(vendor: 0x057E, product: 0x2009, transport: .usb)?.family == SwitchPro.self)
    }

    @Test("no vendor/product id is listed twice, across all families")
    func unique() {
        let ids = ControllerTable.families.flatMap { $0.models.map { [$0.vendorID, $0.productID] } }
        #expect(ids.count == Set(ids).count)
        #expect(ids.count == 3 + 2 + 6 + 1)
    }

    @Test("every family's description is consistent and its reports are pure")
    func familyInvariants() {
        let known: Set<String> = ["strong", "weak", "left-trigger", "right-trigger"]
        let state = RumbleState(strong: 0.6, weak: 0.4, leftTrigger: 0.2, rightTrigger: 0.8)
        for family in ControllerTable.families {
            #expect(!family.name.isEmpty)
            #expect(!family.models.isEmpty)
            #expect(Array(family.channels.map(\.name).prefix(2)) == ["strong", "weak"], "\(family.name)")
            #expect(family.channels.allSatisfy { known.contains($0.name) && $0.amplitudeSteps > 1 })
            let transports = family.models.reduce(into: Set<HIDTransport>()) { $0.formUnion($1.transports) }
            for transport in transports {
                let interval = family.minimumWriteInterval(for: transport)
                #expect(interval >= 0.010 && interval <= 0.050, "\(family.name)")
                if let refresh = family.refreshInterval(for: transport) { #expect(refresh > interval) }
                let first = family.rumbleReport(state: state, transport: transport, sequence: 4)
                #expect(first == family.rumbleReport(state: state, transport: transport, sequence: 4))
                #expect(first != family.stopReport(transport: transport, sequence: 4), "\(family.name)")
                #expect(
                    family.stopReport(transport: transport, sequence: 4)
                        == family.rumbleReport(state: .off, transport: transport, sequence: 4))
            }
        }
    }

    /// The HID backend reuses a report's bytes across counter values only where the family says
    /// the report holds no counter; a family that said so wrongly would have its counter frozen.
    @Test("a family whose report carries no counter encodes a state alike for every counter; one that carries it does not")
    func counterInReports() {
        let states = [RumbleState.off, RumbleState(strong: 1, weak: 0), RumbleState(strong: 0.6, weak: 0.4, leftTrigger: 0.2, rightTrigger: 0.8)]
        var carried: [String] = []
        for family in ControllerTable.families {
            let transports = family.models.reduce(into: Set<HIDTransport>()) { $0.formUnion($1.transports) }
            for transport in transports.sorted(by: { $0.rawValue < $1.rawValue }) {
                let variants = Set(states.flatMap { state in (0...255).map { family.rumbleReport(state: state, transport: transport, sequence: UInt8($0)) } })
                if family.reportCarriesSequence(on: transport) {
                    carried.append("\(family.name) \(transport)")
                    #expect(variants.count > states.count, "\(family.name) over \(transport) says its report carries the counter, but ignores it")
                } else {
                    #expect(variants.count == states.count, "\(family.name) over \(transport) says its report carries no counter, but varies with it")
                }
            }
        }
        #expect(carried.sorted() == ["DualSense bluetooth", "Switch Pro Controller bluetooth", "Switch Pro Controller usb"], "\(carried)")
    }
}
