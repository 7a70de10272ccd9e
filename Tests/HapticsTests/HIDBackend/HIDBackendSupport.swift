import Foundation
import HIDReports
import Haptics
import Synchronization
import Testing
import VMRig

/// What the HID backend suites know about each virtual controller, written down independently of the
/// backend: the transport, the family, the spacing the backend must keep, and which output reports
/// are the backend's (as opposed to the kernel driver's own).
struct PadFacts: Sendable {
    let controller: VirtualController

    init(_ controller: VirtualController) { self.controller = controller }

    /// USB or Bluetooth, as the virtual device declares it.
    var transport: HIDTransport { controller.bus == .usb ? .usb : .bluetooth }

    var isDualShock4: Bool { [.dualShock4USB, .dualShock4v1USB, .dualShock4Bluetooth].contains(controller) }
    var isDualSense: Bool { [.dualSenseUSB, .dualSenseBluetooth].contains(controller) }
    var isXbox: Bool { [.xboxOneSBluetooth, .xboxSeriesBluetooth].contains(controller) }
    var isSwitch: Bool { [.switchProUSB, .switchProBluetooth].contains(controller) }

    /// The family's minimum write interval in seconds (rumble-reports.md and SDL: Sony 10 ms, Xbox
    /// over Bluetooth 50 ms, Switch Pro 30 ms).
    var interval: Double { isXbox ? 0.050 : isSwitch ? 0.030 : 0.010 }

    /// The channels the device must describe, with their amplitude steps.
    var channels: [(name: String, steps: Int)] {
        if isXbox { return [("strong", 101), ("weak", 101), ("left-trigger", 101), ("right-trigger", 101)] }
        if isSwitch { return [("strong", 101), ("weak", 101)] }
        return [("strong", 256), ("weak", 256)]
    }

    /// Whether an output report is one the backend wrote, not the kernel driver.
    ///
    /// With the real drivers bound, the drivers write output reports of their own at bind time
    /// (hid-playstation: lightbar and player LEDs; hid-sony: LEDs; hid-nintendo: its handshake and
    /// sub-commands, and rumble 0x10 when it sees vibrator reports). They differ from ours:
    /// - DualShock 4: the kernel sets valid_flag0 = 0x07 (motor, LEDs, blink); ours is exactly 0x01.
    /// - DualSense: the kernel's USB report is 63 bytes (ours 48, the declared length); its Bluetooth
    ///   reports set valid_flag1 bits (lightbar, player LEDs), ours leave valid_flag1 = 0 and set
    ///   HAPTICS_SELECT in valid_flag0 (rumble) or a trigger's bit (0x04, 0x08: trigger effects).
    /// - Switch Pro: the kernel writes only the bytes it fills (2 for 0x80, 11 + data for 0x01, 10 for
    ///   0x10); ours are padded to the declared length (64 on USB, 49 on Bluetooth).
    /// - Xbox: no driver writes without a force-feedback effect; every 0x03 report is ours.
    func isOurs(_ report: UHIDOutputReport) -> Bool {
        let data = report.data
        guard let id = data.first else { return false }
        switch controller {
        case .dualShock4USB, .dualShock4v1USB: return id == 0x05 && data.count == 32 && data[1] == 0x01
        case .dualShock4Bluetooth: return id == 0x11 && data.count == 78 && data[3] == 0x01
        case .dualSenseUSB: return id == 0x02 && data.count == 48
        case .dualSenseBluetooth: return id == 0x31 && data.count == 78 && data[4] == 0 && data[3] & 0x0E != 0
        case .xboxOneSBluetooth, .xboxSeriesBluetooth: return id == 0x03
        case .switchProUSB: return data.count == 64
        case .switchProBluetooth: return data.count == 49
        }
    }

    /// Whether the report counts for spacing: everything but the Switch Pro's USB-bridge commands.
    func isPaced(_ report: UHIDOutputReport) -> Bool {
        !(isSwitch && report.reportID == 0x80)
    }

    /// The reports the backend writes after opening and before the first rumble report, the first
    /// one with counter `sequence`.
    func setupReports(sequence: Int = 0) -> [[UInt8]] {
        isSwitch ? SwitchPro.setupReports(for: transport, sequence: UInt8(truncatingIfNeeded: sequence)) : []
    }

    /// The rumble report for `state` with counter `sequence`, computed with the HIDReports encoders.
    /// A DualSense uses the mode its firmware info asks for: the rig answers feature 0x20 with update
    /// version 2.36, so COMPATIBLE_VIBRATION2 unless `dualSenseMode` says otherwise.
    func encode(_ state: RumbleState, sequence: UInt8, dualSenseMode: DualSense.VibrationMode = .compatibleV2) -> [UInt8] {
        if isDualShock4 { return DualShock4.rumbleReport(state: state, transport: transport, sequence: sequence) }
        if isDualSense { return DualSense.rumbleReport(state: state, transport: transport, sequence: sequence, mode: dualSenseMode) }
        if isXbox { return XboxOneBluetooth.rumbleReport(state: state, transport: transport, sequence: sequence) }
        return SwitchPro.rumbleReport(state: state, transport: transport, sequence: sequence)
    }

    /// The rumble state a drive frame asks for, as the backend reads it: channel 0 strong, 1 weak,
    /// 2 and 3 the triggers (Xbox); a frequency of 0 means the default. Values go through `Float`, as
    /// they do through the C frame.
    func state(_ frame: DriveFrame) -> RumbleState {
        func amplitude(_ index: Int) -> Double {
            index < frame.channels.count ? Double(Float(min(max(frame.channels[index].amplitude, 0), 1))) : 0
        }
        func frequency(_ index: Int) -> Double? {
            guard index < frame.channels.count else { return nil }
            let value = Float(max(frame.channels[index].frequency, 0))
            return value > 0 ? Double(value) : nil
        }
        var state = RumbleState(strong: amplitude(0), weak: amplitude(1))
        if let value = frequency(0) { state.strongFrequency = value }
        if let value = frequency(1) { state.weakFrequency = value }
        if isXbox {
            state.leftTrigger = amplitude(2)
            state.rightTrigger = amplitude(3)
        }
        return state
    }
}

/// Shared guest-side set-up for the HID backend suites.
enum HIDGuest {
    /// Loads uhid and hid-generic; for an Xbox pad in the real-drivers boot also hid-microsoft (the
    /// driver Debian's kernel binds to 045e:02fd and 045e:0b13 over Bluetooth), once, before any
    /// Xbox pad exists, since a driver loaded later would rebind the pad under the test.
    static func loadModules(for controller: VirtualController) throws {
        try VMRig.loadKernelModule("uhid")
        try VMRig.loadKernelModule("hid_generic")
        if PadFacts(controller).isXbox, !VMRig.ignoresSpecialHIDDrivers { try microsoftDriver.get() }
    }

    private static let microsoftDriver: Result<Void, RigError> = {
        do { try VMRig.loadKernelModule("hid_microsoft") } catch let error as RigError { return .failure(error) } catch {
            return .failure(.invalidArgument("\(error)"))
        }
        return .success(())
    }()

    /// Creates `controller` and waits (on a thread of its own) until its driver has bound and its
    /// hidraw node exists.
    static func plug(_ controller: VirtualController) async throws -> UHIDDevice {
        try await onThread {
            try loadModules(for: controller)
            let pad = try UHIDDevice(controller: controller)
            _ = try pad.waitForDriver(timeout: .seconds(30))
            _ = try pad.hidrawPath()
            return pad
        }
    }

    /// Runs blocking work on a thread of its own.
    ///
    /// The VM has one vCPU, so Swift concurrency's pool has one thread, shared by every test running
    /// in parallel: a test that blocks it (waiting for a driver to bind) stalls the others, and a
    /// `Task.sleep(for: .milliseconds(1))` there can take a hundred. Blocking waits and every
    /// sequence whose timing matters (driving a device frame by frame) run here instead.
    static func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { continuation.resume(with: Result { try body() }) }
            thread.start()
        }
    }

    /// Sleeps the calling thread for `seconds`.
    static func pause(_ seconds: Double) {
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - Double(Int(seconds))) * 1e9))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
    }

    /// Blocks until `condition` holds, polling every 2 ms.
    static func block(for what: String, timeout: Double, _ condition: () -> Bool) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while !condition() {
            if Date() > deadline { throw RigError.timeout(what: what, seconds: timeout) }
            pause(0.002)
        }
    }

    /// A system loading the plugins of this build (the HID backend among them) through dlopen.
    static func system() -> HapticSystem {
        HapticSystem(configuration: .init(searchPath: PluginSearchPath(directories: [TestSupport.buildDirectory]), daemon: .never))
    }

    /// The id the backend must give `pad`, derived from the kernel's view of it (not from the
    /// backend): `hid:vvvv:pppp:TRANSPORT:` + `HID_UNIQ` (the MAC address: Bluetooth pads, and USB
    /// Sony pads whose driver sets it), else `HID_PHYS`.
    static func expectedID(_ pad: UHIDDevice, _ controller: VirtualController) throws -> String {
        let directory = try #require(pad.sysfsPath, "no sysfs entry for \(pad.name)")
        let uevent = try SysFS.read(directory + "/uevent").split(separator: "\n")
        func field(_ key: String) -> String {
            uevent.first { $0.hasPrefix(key + "=") }.map { String($0.dropFirst(key.count + 1)) } ?? ""
        }
        let uniq = field("HID_UNIQ"), phys = field("HID_PHYS")
        let transport = controller.bus == .usb ? "usb" : "bluetooth"
        return String(format: "hid:%04x:%04x:%@:", controller.vendorID, controller.productID, transport) + (uniq.isEmpty ? phys : uniq)
    }

    /// The HID backend of `system`.
    static func backend(_ system: HapticSystem) throws -> Backend {
        try #require(system.backends.first { $0.name == "hid" }, "the hid plugin did not load: \(system.plugins)")
    }

    /// The description of the device `id` (a listing hidden behind another included), waiting up to
    /// `timeout` for the backend to list it.
    static func description(_ system: HapticSystem, id: String, timeout: Double = 10) async throws -> DeviceDescription {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            // Every listing: a Bluetooth DualSense's rumble is listed behind its coils.
            let devices = system.everyListing().devices
            if let found = devices.first(where: { $0.id == id }) { return found }
            if Date() > deadline {
                throw RigError.timeout(what: "the hid backend to list \(id); it lists \(devices.map(\.id))", seconds: timeout)
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// Waits until `condition` holds, polling every 5 ms (for coarse waits only: see ``onThread(_:)``).
    static func wait(for what: String, timeout: Double, _ condition: () -> Bool) async throws {
        let deadline = Date().addingTimeInterval(timeout)
        while !condition() {
            if Date() > deadline { throw RigError.timeout(what: what, seconds: timeout) }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// CLOCK_MONOTONIC now, in nanoseconds (the clock of UHIDOutputReport timestamps and of frames).
    static func now() -> UInt64 { HapticInstant.monotonicNow().nanoseconds }

    /// `later - earlier` in seconds, negative when `later` is earlier (timestamps from different
    /// threads may come in either order).
    static func seconds(_ later: UInt64, since earlier: UInt64) -> Double {
        Double(Int64(bitPattern: later &- earlier)) / 1e9
    }

    /// A report as hex, for messages.
    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String(format: "%02x", $0) }.joined(separator: " ")
    }

    /// The hidraw nodes this process has open (from /proc/self/fd).
    static func openNodes() -> Set<String> {
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return Set(fds.compactMap { try? SysFS.readLink("/proc/self/fd/" + $0) }.filter { $0.hasPrefix("/dev/hidraw") })
    }
}

/// Records every frame the engine submits to a device, then passes it on: the frames the expected
/// reports are computed from.
final class TracingActuator: Actuator {
    let inner: any Actuator
    let description: DeviceDescription
    private let log = Mutex<[DriveFrame]>([])

    init(_ inner: any Actuator) {
        self.inner = inner
        description = inner.description
    }

    /// The frames submitted so far, oldest first.
    var frames: [DriveFrame] { log.withLock { $0 } }

    func wake() throws(DeviceError) { try inner.wake() }
    func sleep() throws(DeviceError) { try inner.sleep() }
    func submit(_ frame: DriveFrame) throws(DeviceError) {
        log.withLock { $0.append(frame) }
        try inner.submit(frame)
    }
    func stop() throws(DeviceError) { try inner.stop() }
    func close() { inner.close() }
}

/// Checks the backend's reports on one pad against what it was asked.
enum ReportCheck {
    /// The backend's reports since `start`, oldest first.
    static func ours(_ pad: UHIDDevice, _ facts: PadFacts, since start: UInt64) -> [UHIDOutputReport] {
        pad.outputReports.filter { $0.timestamp >= start && facts.isOurs($0) }
    }

    /// Checks that `reports` are the set-up reports, then rumble reports each encoding one of `states`
    /// in order (coalescing may skip states; a refresh repeats one), with the counter advancing by
    /// one per report from `firstSequence`, ending with all-off. Returns how many states were seen.
    @discardableResult
    static func stream(
        _ reports: [UHIDOutputReport], facts: PadFacts, states: [RumbleState], setup: [[UInt8]],
        firstSequence: Int = 0, dualSenseMode: DualSense.VibrationMode = .compatibleV2,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> Int {
        let data = reports.map(\.data)
        #expect(Array(data.prefix(setup.count)) == setup, "set-up reports:\n\(data.prefix(setup.count).map(HIDGuest.hex).joined(separator: "\n"))", sourceLocation: sourceLocation)
        let rumble = Array(data.dropFirst(setup.count))
        #expect(!rumble.isEmpty, "no rumble report arrived", sourceLocation: sourceLocation)
        var index = 0
        var seen = Set<Int>()
        for (k, report) in rumble.enumerated() {
            let sequence = UInt8(truncatingIfNeeded: firstSequence + setup.count + k)
            guard
                let match = (index..<states.count).first(where: {
                    facts.encode(states[$0], sequence: sequence, dualSenseMode: dualSenseMode) == report
                })
            else {
                let wanted = states.indices.dropFirst(index).prefix(3).map {
                    HIDGuest.hex(facts.encode(states[$0], sequence: sequence, dualSenseMode: dualSenseMode))
                }
                Issue.record(
                    "report \(k) (counter \(sequence)) matches no submitted state from #\(index) on:\n\(HIDGuest.hex(report))\nnext expected:\n\(wanted.joined(separator: "\n"))",
                    sourceLocation: sourceLocation)
                return seen.count
            }
            index = match
            seen.insert(match)
        }
        if let last = rumble.last {
            let sequence = UInt8(truncatingIfNeeded: firstSequence + setup.count + rumble.count - 1)
            #expect(last == facts.encode(.off, sequence: sequence, dualSenseMode: dualSenseMode), "the last report is not all-off: \(HIDGuest.hex(last))", sourceLocation: sourceLocation)
        }
        return seen.count
    }

    /// The counter a report carries where the family has one (DualSense Bluetooth tag, Switch packet
    /// number), else 0.
    static func sequence(_ data: [UInt8], _ facts: PadFacts) -> UInt8 {
        guard data.count > 1 else { return 0 }
        if facts.isSwitch { return data[1] & 0x0F }
        if facts.controller == .dualSenseBluetooth { return data[1] >> 4 }
        return 0
    }

    /// Whether `report` is the family's all-off report (whatever its counter).
    static func isOff(_ report: UHIDOutputReport, _ facts: PadFacts, dualSenseMode: DualSense.VibrationMode = .compatibleV2) -> Bool {
        facts.encode(.off, sequence: sequence(report.data, facts), dualSenseMode: dualSenseMode) == report.data
    }

    /// Whether `report` is a DualSense's all-off report that also sets both adaptive triggers free
    /// (the stop of a session that set trigger effects), whatever its counter.
    static func isOffReleasingTriggers(_ report: UHIDOutputReport, _ facts: PadFacts) -> Bool {
        DualSense.releasingTriggers(facts.encode(.off, sequence: sequence(report.data, facts)), transport: facts.transport) == report.data
    }

    /// The gaps between consecutive paced reports, in seconds.
    static func gaps(_ reports: [UHIDOutputReport], facts: PadFacts) -> [Double] {
        let paced = reports.filter(facts.isPaced)
        return zip(paced, paced.dropFirst()).map { HIDGuest.seconds($1.timestamp, since: $0.timestamp) }
    }

    /// Checks the spacing rule on `reports`, allowing for how the uhid side observes it.
    ///
    /// The rig stamps a report when its reader thread reads it, never before it was written, but
    /// sometimes much later: with one vCPU shared by every test, the reader can be held up for tens
    /// of milliseconds and then read two reports in one go, 0.1 ms apart. The backend's writer
    /// spaces the writes, not the reads. So a lone short gap proves nothing, but a writer that broke
    /// the rule leaves a mark no late read can hide: some report *i* that is less than (*i* − *j*)
    /// intervals after **every** earlier report *j*. For a writer that keeps the rule, any earlier
    /// report that was read on time is far enough back. The check:
    /// - for every report *i*, some earlier report *j* with t(*i*) − t(*j*) ≥ (*i* − *j*) × interval − slack,
    ///   or, measuring from `start` (a time before the first write began, so never "read late"),
    ///   t(*i*) − start ≥ *i* × interval; the slack, a quarter of the interval (3 ms at least), is for
    ///   reads late by a little; a broken writer misses by a whole interval;
    /// - the median gap is at least the interval less 0.5 ms (most reads are on time).
    /// The burst step adds a count check: no more reports than the burst's duration allows.
    static func spacing(_ reports: [UHIDOutputReport], facts: PadFacts, since start: UInt64, sourceLocation: SourceLocation = #_sourceLocation) {
        let paced = reports.filter(facts.isPaced).map(\.timestamp)
        let gaps = gaps(reports, facts: facts)
        guard !gaps.isEmpty else { return }
        let listing = "gaps (ms): \(gaps.map { String(format: "%.1f", $0 * 1000) })"
        let slack = max(0.003, facts.interval / 4)
        for i in paced.indices.dropFirst() {
            let kept =
                HIDGuest.seconds(paced[i], since: start) >= Double(i) * facts.interval
                || paced.indices.prefix(i).contains { j in
                    HIDGuest.seconds(paced[i], since: paced[j]) >= Double(i - j) * facts.interval - slack
                }
            #expect(kept, "report \(i) is too close to every earlier one for the \(facts.interval * 1000) ms rule; \(listing)", sourceLocation: sourceLocation)
        }
        let median = gaps.sorted()[gaps.count / 2]
        #expect(median >= facts.interval - 0.0005, "median gap \(String(format: "%.2f", median * 1000)) ms; \(listing)", sourceLocation: sourceLocation)
    }
}
