import Foundation
import Haptics
import HapticsBus
import Testing

/// hapticsd's `SetTriggers` on the recording backend's simulated DualSense (adaptive triggers,
/// each effect recorded as the backend received it): set by real clients (gdbus, the client
/// library, `haptic-cal trigger`), held by one client at a time, released when the holder sets both
/// off, leaves the bus, or the service stops; hostile input refused with the parameter and its range.
@Suite("hapticsd: adaptive triggers (SetTriggers)")
struct DaemonTriggerTests {
    static let device = "recording:dualsense"

    /// The trigger lines of the service's recording.
    static func triggers(_ rig: DaemonRig) -> [(right: AdaptiveTriggerEffect?, left: AdaptiveTriggerEffect?)] {
        ((try? rig.recording())?.triggers(for: device) ?? []).map { ($0.right, $0.left) }
    }

    /// Waits until the recording holds `count` trigger lines; returns them.
    static func waitForTriggers(_ rig: DaemonRig, count: Int) throws -> [(right: AdaptiveTriggerEffect?, left: AdaptiveTriggerEffect?)] {
        _ = try rig.waitForRecording(timeout: 10) { $0.triggers(for: device).count >= count }
        return triggers(rig)
    }

    static let weapon: [(key: String, value: BusValue)] = [
        ("effect", .string("weapon")), ("start-position", .double(0.3)), ("end-position", .double(0.6)), ("strength", .double(1)),
    ]

    @Test("gdbus sets an effect and leaves: set, then released; GetDevice says adaptive-triggers")
    func gdbusClient() throws {
        let rig = try DaemonRig(devices: "lra,dualsense")
        let details = try rig.call("GetDevice", "s", [Self.device])
        #expect("\(details)".contains("adaptive-triggers"), "\(details)")
        let (status, output) = try rig.gdbus(
            "SetTriggers", ["org.example.Game", Self.device, "{'effect': <'weapon'>, 'start-position': <0.3>, 'end-position': <0.6>, 'strength': <1.0>}", "{}"])
        #expect(status == 0, "\(output)")
        // gdbus left the bus when its call returned: the service set the triggers free.
        let lines = try Self.waitForTriggers(rig, count: 2)
        #expect(lines.first.map { $0.right == .weapon(startPosition: 0.3, endPosition: 0.6, strength: 1) && $0.left == nil } == true, "\(lines)")
        #expect(lines.last.map { $0.right == .off && $0.left == .off } == true, "\(lines)")
        #expect(rig.daemonLog.contains("released the adaptive triggers of \(Self.device)"), "\(rig.daemonLog)")
    }

    @Test("one holder at a time: another client is refused naming the holder until both are off; the holder's departure frees them")
    func ownership() throws {
        let rig = try DaemonRig(devices: "lra,dualsense")
        let holder = try TestBusClient(address: rig.address)
        try holder.call("SetTriggers", [.string("org.example.Game"), .string(Self.device), .dictionary(Self.weapon), .dictionary([])])
        var other: TestBusClient? = try TestBusClient(address: rig.address)
        let vibration: [(key: String, value: BusValue)] = [("effect", .string("vibration")), ("position", .double(0)), ("amplitude", .double(1)), ("frequency", .double(40))]
        #expect {
            try other?.call("SetTriggers", [.string("org.example.Other"), .string(Self.device), .dictionary([]), .dictionary(vibration)])
        } throws: { error in
            let error = error as? BusError
            return error?.name == "org.swifthaptics.Haptics1.Error." + "TriggersInUse" && error?.message.contains(holder.uniqueName) == true
        }
        // The holder changes its left trigger, then sets both off: they are free.
        try holder.call("SetTriggers", [.string("org.example.Game"), .string(Self.device), .dictionary([]), .dictionary(vibration)])
        let off: [(key: String, value: BusValue)] = [("effect", .string("off"))]
        try holder.call("SetTriggers", [.string("org.example.Game"), .string(Self.device), .dictionary(off), .dictionary(off)])
        try other?.call("SetTriggers", [.string("org.example.Other"), .string(Self.device), .dictionary([]), .dictionary(vibration)])
        other = nil  // leaves the bus
        let lines = try Self.waitForTriggers(rig, count: 5)
        let expected: [(AdaptiveTriggerEffect?, AdaptiveTriggerEffect?)] = [
            (.weapon(startPosition: 0.3, endPosition: 0.6, strength: 1), nil), (nil, .vibration(position: 0, amplitude: 1, frequency: 40)),
            (.off, .off), (nil, .vibration(position: 0, amplitude: 1, frequency: 40)), (.off, .off),
        ]
        #expect(lines.count == expected.count && zip(lines, expected).allSatisfy { $0.right == $1.0 && $0.left == $1.1 }, "\(lines)")
        withExtendedLifetime(holder) {}
    }

    @Test("hostile input: each refusal names the side, the parameter and its range, and nothing reaches the device")
    func badInput() throws {
        let rig = try DaemonRig(devices: "lra,dualsense")
        let client = try TestBusClient(address: rig.address)
        func refusal(_ right: [(key: String, value: BusValue)], device: String = Self.device) -> BusError? {
            do {
                try client.call("SetTriggers", [.string("org.example.Game"), .string(device), .dictionary(right), .dictionary([])])
                return nil
            } catch { return error }
        }
        let cases: [([(key: String, value: BusValue)], String, String)] = [
            ([("effect", .string("weapon")), ("start-position", .double(0.05)), ("end-position", .double(0.6)), ("strength", .double(1))],
             "InvalidValue", "right.start-position: 0.05 is outside 0.167…0.833 (zones 2…7)"),
            ([("effect", .string("feedback")), ("position", .double(.nan)), ("strength", .double(1))], "InvalidValue", "right.position: NaN is outside 0…1 of the travel"),
            ([("effect", .string("vibration")), ("position", .double(0)), ("amplitude", .double(1)), ("frequency", .double(300))], "InvalidValue", "right.frequency: 300.0 is outside 1…255 Hz"),
            ([("effect", .string("multiple-position-feedback")), ("strengths", .array(element: "d", [.double(1), .double(1)]))],
             "InvalidArgument", "has 2 values; the trigger has 10 zones"),
            ([("effect", .string("gun"))], "InvalidArgument", "'gun' is unknown; the effects are off, feedback"),
            ([("effect", .string("feedback")), ("position", .double(0.2))], "InvalidArgument", "'strength' is missing; it takes position, strength"),
            ([("effect", .string("feedback")), ("position", .string("high")), ("strength", .double(1))], "InvalidArgument", "right.position: expected a number (d)"),
            ([("position", .double(0.2))], "InvalidArgument", "no 'effect' (s)"),
        ]
        for (entries, name, message) in cases {
            let error = refusal(entries)
            #expect(error?.name == "org.swifthaptics.Haptics1.Error." + name && error?.message.contains(message) == true, "\(entries): \(String(describing: error))")
        }
        let lra = refusal(Self.weapon, device: "recording:lra")
        #expect(lra?.name == "org.swifthaptics.Haptics1.Error." + "InvalidArgument" && lra?.message.contains("no adaptive triggers") == true, "\(String(describing: lra))")
        client.pump(for: 0.2)
        #expect(Self.triggers(rig).isEmpty, "a refused effect reached the device: \(Self.triggers(rig))")
    }

    @Test("the client library and haptic-cal trigger set them through the service; the service's stop frees what a client still holds")
    func clients() throws {
        let rig = try DaemonRig(devices: "lra,dualsense")
        let output = try rig.run([
            TestSupport.buildDirectory + "/haptic-cal", "trigger", Self.device, "--plugin-path", TestSupport.buildDirectory,
            "--right", "feedback:position=0.2,strength=0.5", "--hold", "0.1",
        ])
        #expect(output.status == 0 && output.output.contains("setting the triggers through hapticsd"), "\(output.output)")
        var lines = try Self.waitForTriggers(rig, count: 2)
        #expect(lines.map { "\($0.right?.text ?? "-") \($0.left?.text ?? "-")" } == ["feedback:position=0.2,strength=0.5 -", "off off"], "\(lines)")

        let system = HapticSystem(
            configuration: .init(
                searchPath: PluginSearchPath(directories: [TestSupport.buildDirectory]), settings: ["daemon.bus": rig.address],
                logger: TestSupport.quietLogger, daemon: .required))
        let description = try #require(system.devices().first { $0.id == Self.device })
        #expect(description.hasAdaptiveTriggers)
        #expect(system.devices().first { $0.id == "recording:lra" }?.hasAdaptiveTriggers == false)
        let device = try system.openDevice(Self.device)
        let triggers = try AdaptiveTriggers(device: device)
        try triggers.set(left: .slopeFeedback(startPosition: 0, endPosition: 1, startStrength: 0.125, endStrength: 1))
        #expect(throws: DeviceError.self) { try triggers.set(right: .weapon(startPosition: 0, endPosition: 0.5, strength: 1)) }
        lines = try Self.waitForTriggers(rig, count: 3)
        #expect(lines.last.map { $0.right == nil && $0.left == .slopeFeedback(startPosition: 0, endPosition: 1, startStrength: 0.125, endStrength: 1) } == true)
        // The service stops with the effect held: it sets the triggers free before it closes the device.
        try rig.stopDaemon()
        lines = Self.triggers(rig)
        #expect(lines.count == 4 && lines.last.map { $0.right == .off && $0.left == .off } == true, "\(lines)")
        withExtendedLifetime(triggers) {}
    }
}
