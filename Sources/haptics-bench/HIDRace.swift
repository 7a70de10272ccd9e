// Placeholder until the HID race lands (helper at work).
enum HIDRace {
    static func run(arguments: [String]) throws {
        print("hid-race: not built yet")
    }
}
