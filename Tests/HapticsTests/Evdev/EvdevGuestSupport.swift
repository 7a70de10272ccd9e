import Foundation
import Haptics
import Synchronization
import Testing
import VMRig

extension GuestKernelTests {
    /// The parent of the evdev backend's guest-side suites, serialized: one evdev test at a time.
    ///
    /// The guest has one emulated CPU, shared by every suite running in parallel; the evdev tests
    /// start `haptic-cal` processes, create controllers whose drivers probe, and play in real time,
    /// so running them side by side would starve each other and the HID and GPIO suites' timing
    /// checks. Each nested suite also runs in one boot only, so the two boots share the work:
    /// the real drivers' tests (``EvdevKernelDrivers``) and ``EvdevLifecycle`` in the real-drivers
    /// boot, ``EvdevUInput`` (uinput needs no HID driver) in the other. The calibrations through evdev
    /// run in real time, alone (``GuestRealtimeKernelTests/EvdevCalibration``).
    @Suite(.serialized) enum Evdev {}
}

/// Shared guest-side set-up for the evdev suites.
enum EvdevGuest {
    /// FF codes (linux/input.h), written out here so the tests do not take them from the code under test.
    static let rumble: UInt16 = 0x50, periodic: UInt16 = 0x51, constant: UInt16 = 0x52, sine: UInt16 = 0x5A, custom: UInt16 = 0x5D
    static let gain: UInt16 = 0x60

    /// Loads uinput and evdev (nothing loads them by itself in the rig).
    static func loadModules() throws {
        try VMRig.loadKernelModule("uinput")
        try VMRig.loadKernelModule("evdev")
    }

    /// Creates a uinput device and waits for its event node.
    static func plug(_ spec: UInputDevice.Spec) throws -> (device: UInputDevice, node: String) {
        try loadModules()
        let device = try UInputDevice(spec)
        return (device, try device.eventNode())
    }

    /// The id the backend must give a uinput device, from what the test made (no parent device: driver
    /// `virtual`; the model; bus `virtual`; then its phys).
    static func expectedID(_ device: UInputDevice) -> String {
        String(format: "evdev:virtual:%04x:%04x:virtual:", device.spec.vendor, device.spec.product) + device.spec.phys
    }

    /// A system loading every plugin of this build through dlopen.
    static func system() -> HapticSystem {
        HapticSystem(configuration: .init(searchPath: PluginSearchPath(directories: [TestSupport.buildDirectory]), logger: TestSupport.quietLogger))
    }

    /// The evdev backend of `system`.
    static func backend(_ system: HapticSystem) throws -> Backend {
        try #require(system.backends.first { $0.name == "evdev" }, "the evdev plugin did not load: \(system.plugins)")
    }

    /// The evdev backend's own listing of `id` (even when the host lists the device under another
    /// backend), waiting up to `timeout` for it.
    static func description(_ system: HapticSystem, id: String, timeout: Double = 10) throws -> DeviceDescription {
        let backend = try backend(system)
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let devices = try backend.devices()
            if let found = devices.first(where: { $0.id == id }) { return found }
            if Date() > deadline {
                throw RigError.timeout(what: "the evdev backend to list \(id); it lists \(devices.map(\.id))", seconds: timeout)
            }
            HIDGuest.pause(0.05)
        }
    }

    /// Creates `controller` and waits until its driver has bound and its hidraw node exists, on the
    /// calling thread (a test's own: see ``HIDGuest/onThread(_:)``).
    static func plugPad(_ controller: VirtualController) throws -> UHIDDevice {
        try HIDGuest.loadModules(for: controller)
        let pad = try UHIDDevice(controller: controller)
        _ = try pad.waitForDriver(timeout: .seconds(30))
        _ = try pad.hidrawPath()
        return pad
    }

    /// The host's merged listing of `id` (see ``HapticSystem/devices()``), waiting up to `timeout`
    /// for it, on the calling thread.
    static func merged(_ system: HapticSystem, id: String, timeout: Double = 10) throws -> DeviceDescription {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let devices = system.devices()
            if let found = devices.first(where: { $0.id == id }) { return found }
            if Date() > deadline { throw RigError.timeout(what: "the system to list \(id); it lists \(devices.map(\.id))", seconds: timeout) }
            HIDGuest.pause(0.05)
        }
    }

    /// The event node of the input device with force feedback below a HID device's sysfs directory.
    static func eventNode(belowHID directory: String, timeout: Double = 10) throws -> (node: String, input: String) {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            for input in (try? SysFS.list(directory + "/input")) ?? [] {
                let path = directory + "/input/" + input
                guard let ff = try? SysFS.value(path + "/capabilities/ff"), ff != "0",
                    let event = (try? SysFS.list(path))?.first(where: { $0.hasPrefix("event") }), SysFS.exists("/dev/input/" + event)
                else { continue }
                return ("/dev/input/" + event, path)
            }
            if Date() > deadline { throw RigError.timeout(what: "an event node with force feedback below \(directory)", seconds: timeout) }
            HIDGuest.pause(0.02)
        }
    }

    /// The uploads, erases, plays and stops recorded since `start`, with runs of identical plays (a
    /// refresh, or a frame that repeats the last one) counted once, and gain changes dropped.
    static func traffic(_ device: UInputDevice, since start: UInt64) -> [UInputDevice.Event] {
        collapse(device.records.filter { $0.time >= start }.map(\.event).filter { if case .gain = $0 { false } else { true } })
    }

    /// `events` with each run of identical `.play` events kept once.
    static func collapse(_ events: [UInputDevice.Event]) -> [UInputDevice.Event] {
        var result: [UInputDevice.Event] = []
        for event in events {
            if case .play = event, result.last == event { continue }
            result.append(event)
        }
        return result
    }

    /// A rumble effect as the device must receive it: `replay.length` 500 ms, nothing else set.
    static func rumbleEffect(id: Int16, strong: UInt16, weak: UInt16) -> ExpectedEffect {
        ExpectedEffect(type: rumble, id: id, strong: strong, weak: weak)
    }

    /// The parts of an uploaded effect a test pins.
    struct ExpectedEffect: Equatable, CustomStringConvertible {
        var type: UInt16
        var id: Int16
        var length: UInt16 = 500
        var strong: UInt16 = 0
        var weak: UInt16 = 0
        var waveform: UInt16 = 0
        var period: UInt16 = 0
        var magnitude: Int16 = 0
        var level: Int16 = 0

        init(type: UInt16, id: Int16, strong: UInt16 = 0, weak: UInt16 = 0, waveform: UInt16 = 0, period: UInt16 = 0, magnitude: Int16 = 0, level: Int16 = 0) {
            self.type = type
            self.id = id
            self.strong = strong
            self.weak = weak
            self.waveform = waveform
            self.period = period
            self.magnitude = magnitude
            self.level = level
        }

        init(_ effect: UInputDevice.Effect) {
            self.init(
                type: effect.type, id: effect.id, strong: effect.strong, weak: effect.weak, waveform: effect.waveform, period: effect.period,
                magnitude: effect.magnitude, level: effect.level)
            length = effect.replayLength
        }

        var description: String { "type 0x\(String(type, radix: 16))#\(id) len \(length) s\(strong) w\(weak) wf\(waveform) p\(period) m\(magnitude) l\(level)" }
    }

    /// What the device must see for `frames`, after the resting effect `id` was uploaded at wake:
    /// for each frame, a stop when it is silent (if something plays), else an update in place when
    /// its effect differs from the uploaded one, then a play; `effect` gives a frame's effect (nil:
    /// silent). Plays are collapsed as in ``traffic(_:since:)``.
    static func expectedTraffic(
        frames: [DriveFrame], id: Int16, resting: ExpectedEffect, effect: (DriveFrame) -> ExpectedEffect?
    ) -> [ExpectedEvent] {
        var events: [ExpectedEvent] = []
        var uploaded = resting
        var playing = false
        for frame in frames {
            if let wanted = effect(frame) {
                if wanted != uploaded {
                    events.append(.update(wanted, old: uploaded))
                    uploaded = wanted
                }
                if events.last != .play(Int(id)) { events.append(.play(Int(id))) }
                playing = true
            } else if playing {
                events.append(.stop(Int(id)))
                playing = false
            }
        }
        return events
    }

    /// The comparable form of an ``UInputDevice/Event``.
    enum ExpectedEvent: Equatable, CustomStringConvertible {
        case create(ExpectedEffect)
        case update(ExpectedEffect, old: ExpectedEffect)
        case play(Int)
        case stop(Int)
        case erase(Int)
        case refused(ExpectedEffect)

        init?(_ event: UInputDevice.Event) {
            switch event {
            case .upload(let effect, let old, let answer):
                if answer != 0 {
                    self = .refused(ExpectedEffect(effect))
                } else if let old {
                    self = .update(ExpectedEffect(effect), old: ExpectedEffect(old))
                } else {
                    self = .create(ExpectedEffect(effect))
                }
            case .erase(let id): self = .erase(id)
            case .play(let id, let count): self = count == 0 ? .stop(id) : .play(id)
            case .gain: return nil
            }
        }

        var description: String {
            switch self {
            case .create(let effect): "create \(effect)"
            case .update(let effect, let old): "update \(effect) (was \(old))"
            case .play(let id): "play #\(id)"
            case .stop(let id): "stop #\(id)"
            case .erase(let id): "erase #\(id)"
            case .refused(let effect): "refused \(effect)"
            }
        }
    }

    /// The recorded traffic since `start`, comparable.
    static func observed(_ device: UInputDevice, since start: UInt64) -> [ExpectedEvent] {
        traffic(device, since: start).compactMap(ExpectedEvent.init)
    }

    /// The id of the effect created at or after `start`.
    static func createdID(_ device: UInputDevice, since start: UInt64) -> Int16? {
        for record in device.records where record.time >= start {
            if case .upload(let effect, nil, 0) = record.event { return effect.id }
        }
        return nil
    }

    /// `round(x × scale)` for an amplitude that went through the C frame's `Float`.
    static func scaled(_ amplitude: Double, _ scale: Float) -> Float {
        (Float(min(max(amplitude, 0), 1)) * scale).rounded()
    }

    /// A 16-bit rumble magnitude for `amplitude` (0…1): `round(a × 0xFFFF)`.
    static func magnitude16(_ amplitude: Double) -> UInt16 { UInt16(scaled(amplitude, 0xFFFF)) }

    /// A 15-bit magnitude or level for `amplitude` (0…1): `round(a × 0x7FFF)`.
    static func magnitude15(_ amplitude: Double) -> Int16 { Int16(scaled(amplitude, 0x7FFF)) }

    /// The whole-millisecond period for a frame frequency: 1000 / f rounded, f within 40…500 Hz; 6 ms for 0.
    static func period(_ frequency: Double) -> UInt16 {
        guard frequency > 0 else { return 6 }
        let clamped = min(max(Float(frequency), 40), 500)
        return UInt16((1000 / clamped).rounded())
    }

    /// Waits until the device saw an erase at or after `start` (what `sleep` ends with).
    static func waitForErase(_ device: UInputDevice, since start: UInt64, timeout: Double = 10) throws {
        try device.waitForRecords("the erase at sleep", timeout: timeout) { records in
            records.contains { record in
                guard record.time >= start, case .erase = record.event else { return false }
                return true
            }
        }
    }

    /// The first play (count > 0) at or after `start`.
    static func firstPlay(in records: [UInputDevice.Record], since start: UInt64) -> UInputDevice.Record? {
        records.first { record in
            guard record.time >= start, case .play(_, let count) = record.event else { return false }
            return count > 0
        }
    }

    /// The files process `pid` has open (from /proc/PID/fd).
    static func openNodes(of pid: pid_t) -> Set<String> {
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
        return Set(fds.compactMap { try? SysFS.readLink("/proc/\(pid)/fd/" + $0) })
    }

    private static let runs = Atomic<Int>(0)

    /// Runs `arguments` (posix_spawn: Foundation's `Process` hangs in the guest) and waits for it.
    static func run(_ arguments: [String], timeout: Double = 60) throws -> (ending: ChildProcess.Ending, output: String) {
        let number = runs.add(1, ordering: .relaxed).newValue
        let child = try ChildProcess(arguments, outputPath: "/tmp/evdev-run-\(getpid())-\(number).log")
        let ending = try child.wait(timeout: timeout)
        return (ending, child.output)
    }

    /// The path of haptic-cal in this build.
    static var hapticCal: String { TestSupport.buildDirectory + "/haptic-cal" }
}
