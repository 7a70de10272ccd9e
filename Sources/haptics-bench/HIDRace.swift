import ArgumentParser
import Dispatch
import Foundation
import Haptics
import HapticsSupport
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// `haptics-bench hid-race`: how long a rumble takes from the public trigger call to the report
/// arriving at a virtual DualShock 4, measured alternately in rounds in one process, for:
/// - swift-haptics through the engine, `player.start(atTime: 0)` of a 40 ms full-strength pattern,
///   from prepared (`prepare()` first: the node is open) and from idle (the trigger opens it);
/// - swift-haptics without the engine, `HapticDevice.submit` of a full-strength frame on a prepared
///   device: the HID backend's own path (plugin call, writer thread, `hid_write`);
/// - a bare `hid_write` of the very bytes swift-haptics sends, on a handle opened once;
/// - SDL2's `SDL_GameControllerRumble`.
///
/// Runs inside the VM rig (it needs `/dev/uhid`); `Scripts/bench-hid` builds it in release mode,
/// boots the VM and runs it. Arrival is stamped by the pad's uhid reader thread as it reads the
/// report, the same way for every client.
///
/// The virtual pad is a DualShock 4 with the real Bluetooth report descriptor, declared on the
/// Bluetooth bus: SDL's own hidapi copy drops USB-declared uhid devices (no USB parent), and SDL
/// treats a Sony pad whose feature report 0x12 (the MAC address) it can read as wired, so it sends
/// its 32-byte USB report 0x05, while swift-haptics and the bare write send the 78-byte Bluetooth
/// report 0x11 the descriptor declares. The pad exists before `SDL_Init`, and
/// `SDL_HIDAPI_JOYSTICK_DISABLE_UDEV=1` lets SDL find it without udev.
///
/// SDL2 (`libSDL2-2.0.so.0`) and hidapi (`libhidapi-hidraw.so.0`) are loaded with `dlopen`, so
/// building the package never needs them; swift-haptics itself goes through its HID plugin.
///
/// Options: `--rounds N` (default 150), `--descriptor PATH` (default the fixture under
/// `Tests/Fixtures/hid-descriptors`), `--no-sdl`.
enum HIDRace {
    static func run(_ options: Options) throws {
        print("haptics-bench hid-race — \(ProcessInfo.processInfo.activeProcessorCount) CPU(s), kernel \(kernelRelease()), \(options.rounds) rounds\n")
        guard access("/dev/uhid", R_OK | W_OK) == 0 else {
            throw BenchError("hid-race needs /dev/uhid (root, modprobe uhid): run it inside the VM rig with Scripts/bench-hid")
        }
        let descriptor = try readDescriptor(options.descriptor)
        let mac: [UInt8] = [0x02, 0x42, 0x45, 0x4E, 0x43, 0x48]
        let pad = try VirtualPad(
            descriptor: descriptor, name: "Wireless Controller", bus: 0x05, vendor: 0x054C, product: 0x05C4,
            uniq: mac.map { String(format: "%02x", $0) }.joined(separator: ":"), featureReports: Self.featureReports(mac: mac))
        defer { pad.destroy() }
        let node = try pad.waitForNode(timeout: 20)
        print("virtual DualShock 4 (Bluetooth-declared) at \(node), driver \(pad.driverName() ?? "none")")

        // SDL first (it must find the pad at SDL_Init), then swift-haptics, then the bare hidapi handle.
        var sdl: SDLRumble?
        if options.sdl {
            setenv("SDL_HIDAPI_JOYSTICK_DISABLE_UDEV", "1", 1)
            setenv("SDL_JOYSTICK_DISABLE_UDEV", "1", 1)
            sdl = try SDLRumble(.gameController, namePart: "PS4", missingHint: "; is the pad Bluetooth-declared and answering feature 0x12?")
            print("SDL \(sdl!.version): \(sdl!.name)")
        }
        let system = HapticSystem()
        guard let description = system.devices().first(where: { $0.backend == "hid" && $0.id.hasPrefix("hid:054c:05c4:bluetooth:") }) else {
            throw BenchError("the hid backend does not list the virtual pad; devices: \(system.devices().map(\.id)); plugins: \(system.plugins)")
        }
        let device = try system.openDevice(description.id)
        defer { device.close() }
        let engine = try HapticEngine(devices: [device], policy: HapticPolicy())
        engine.isAutoShutdownEnabled = false
        let pattern = try HapticPattern(events: [
            HapticEvent(
                eventType: .hapticContinuous,
                parameters: [.init(parameterID: .hapticIntensity, value: 1), .init(parameterID: .hapticSharpness, value: 0)],
                relativeTime: 0, duration: 0.04)
        ])
        let player = try engine.makeAdvancedPlayer(with: pattern)
        let finished = Mutex(false)
        player.completionHandler = { _ in finished.withLock { $0 = true } }
        let hold = device.hold()
        defer { hold.release() }
        print("swift-haptics: \(description.id) (\(description.name)), wake latency \(String(format: "%.2f", description.wakeLatency * 1000)) ms")

        let callDurations = Mutex<[Double]>([])
        let isOurs: @Sendable ([UInt8]) -> Bool = { $0.count == 78 && $0[0] == 0x11 && $0[3] == 0x01 }
        let oursOn: @Sendable ([UInt8]) -> Bool = { isOurs($0) && $0[7] != 0 }
        let oursOff: @Sendable ([UInt8]) -> Bool = { isOurs($0) && $0[6] == 0 && $0[7] == 0 }

        /// One swift-haptics trigger: the latency to the first driven report, then wait for the off
        /// report and the device to idle again.
        func ours(prepared: Bool) throws -> UInt64? {
            if prepared {
                hold.prepare()
                guard device.powerState == .prepared else { throw BenchError("prepare failed: \(String(describing: device.lastError))") }
                pause(0.01)
            } else if device.powerState != .idle {
                throw BenchError("the device is not idle before an idle trigger (\(device.powerState))")
            }
            finished.withLock { $0 = false }
            let start = pad.arm(oursOn)
            try player.start(atTime: 0)
            // Straight to the wait, as every client: work here would hold the calling CPU while the
            // report is delivered, which under emulation delays its delivery (see the README).
            let returned = Monotonic.now()
            let arrival = pad.wait(timeout: 1)
            callDurations.withLock { $0.append(Double(returned - start) / 1e3) }
            _ = pad.arm(oursOff, after: start)
            let off = pad.wait(timeout: 1)
            let deadline = Monotonic.now() + 1_000_000_000
            while (!finished.withLock({ $0 }) || device.powerState != .idle) && Monotonic.now() < deadline { pause(0.001) }
            guard off != nil, device.powerState == .idle else {
                let recent = pad.outputs().suffix(4).map { report in report.data.prefix(8).map { String(format: "%02x", $0) }.joined(separator: " ") }
                throw BenchError("the pattern did not end with the off report and idle: off report \(off != nil), finished \(finished.withLock { $0 }), \(device.powerState), last error \(String(describing: device.lastError)); last reports: \(recent)")
            }
            return arrival.map { $0 - start }
        }

        // Warm up swift-haptics, and capture its exact on and off reports for the bare write.
        for _ in 0..<5 {
            _ = try ours(prepared: true)
            _ = try ours(prepared: false)
        }
        guard let onBytes = pad.outputs().last(where: { oursOn($0.data) })?.data,
            let offBytes = pad.outputs().last(where: { oursOff($0.data) })?.data
        else { throw BenchError("no swift-haptics report arrived during the warm-up") }
        let hidapi = try HIDAPIClient(path: node)
        defer { hidapi.close() }

        /// The backend's own path: a prepared device, `HapticDevice.submit` of a full-strength frame
        /// (public API, no engine), to the report.
        func direct() throws -> UInt64? {
            hold.prepare()
            try device.beginActivity()
            let start = pad.arm(oursOn)
            try device.submit(DriveFrame(time: .monotonicNow(), channels: [ChannelDrive(amplitude: 1), ChannelDrive(amplitude: 0)]))
            let arrival = pad.wait(timeout: 1)
            _ = pad.arm(oursOff, after: start)
            try device.submit(DriveFrame(time: .monotonicNow(), channels: [ChannelDrive(amplitude: 0), ChannelDrive(amplitude: 0)]))
            _ = pad.wait(timeout: 1)
            device.endActivity()
            return arrival.map { $0 - start }
        }

        func bare() throws -> UInt64? {
            let start = pad.arm { $0 == onBytes }
            try hidapi.write(onBytes)
            let arrival = pad.wait(timeout: 1)
            _ = pad.arm({ $0 == offBytes }, after: start)
            try hidapi.write(offBytes)
            _ = pad.wait(timeout: 1)
            return arrival.map { $0 - start }
        }

        func sdlRumble(_ client: SDLRumble) throws -> UInt64? {
            let start = pad.arm { $0.count == 32 && $0[0] == 0x05 && $0[5] != 0 }
            try client.rumble(low: 0xFFFF, high: 0)
            let arrival = pad.wait(timeout: 1)
            _ = pad.arm({ $0.count == 32 && $0[0] == 0x05 && $0[4] == 0 && $0[5] == 0 }, after: start)
            try client.rumble(low: 0, high: 0)
            _ = pad.wait(timeout: 1)
            return arrival.map { $0 - start }
        }
        if let sdl { for _ in 0..<5 { _ = try sdlRumble(sdl) } }
        for _ in 0..<5 {
            _ = try bare()
            _ = try direct()
        }

        var clients: [(name: String, sample: () throws -> UInt64?)] = [
            (Client.prepared, { try ours(prepared: true) }),
            (Client.idle, { try ours(prepared: false) }),
            (Client.device, direct),
            (Client.bare, bare),
        ]
        if let sdl { clients.append((Client.sdl, { try sdlRumble(sdl) })) }
        var samples = [[Double]](repeating: [], count: clients.count)
        var missed = [Int](repeating: 0, count: clients.count)
        let began = Monotonic.now()
        for round in 0..<options.rounds {
            for step in 0..<clients.count {
                let index = (round + step) % clients.count  // rotate the order every round
                if let latency = try clients[index].sample() {
                    samples[index].append(Double(latency) / 1e3)
                } else {
                    missed[index] += 1
                }
                pause(0.02)
            }
        }
        let took = Double(Monotonic.now() - began) / 1e9
        printTable(clients.map(\.name), samples, missed, rounds: options.rounds, seconds: took)
        let calls = Stats(callDurations.withLock { $0 })
        print("the player.start call itself returns after p50 \(us(calls.p50)), p99 \(us(calls.p99)) (the engine's pass: render, submit, reschedule)")
        sdl?.close()
    }

    // MARK: - Results

    /// The clients' names in the table.
    enum Client {
        static let prepared = "swift-haptics: player.start, prepared"
        static let idle = "swift-haptics: player.start, from idle"
        static let device = "swift-haptics: HapticDevice.submit, prepared"
        static let bare = "bare hid_write"
        static let sdl = "SDL2: SDL_GameControllerRumble"
    }

    static func printTable(_ names: [String], _ samples: [[Double]], _ missed: [Int], rounds: Int, seconds: Double) {
        let results = RaceResults(
            title: "Trigger call → report at the uhid side (\(rounds) rounds, clients alternated, \(String(format: "%.0f", seconds)) s)",
            names: names, samples: samples, missed: missed, bareClient: Client.bare, sdlClient: Client.sdl)
        results.printGoals(bareLabel: "bare hid_write", [("player.start prepared", Client.prepared), ("HapticDevice.submit", Client.device)])
    }

    // MARK: - Set-up

    struct Options: ParsableArguments {
        @OptionGroup var race: RaceOptions
        @Option(help: "The pad's report descriptor (a fixture: hex bytes, # comments).")
        var descriptor = "Tests/Fixtures/hid-descriptors/ds4_054c_05c4_bt_hidtools.rdesc.txt"
        var rounds: Int { race.rounds }
        var sdl: Bool { !race.noSDL }
    }

    /// The bytes of a descriptor fixture: whitespace-separated hex, `#` comment lines.
    static func readDescriptor(_ path: String) throws -> [UInt8] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        var bytes: [UInt8] = []
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            for token in line.split(whereSeparator: \.isWhitespace) {
                guard let byte = UInt8(token, radix: 16) else { throw BenchError("\(path): '\(token)' is not a hex byte") }
                bytes.append(byte)
            }
        }
        guard !bytes.isEmpty else { throw BenchError("\(path): no descriptor bytes") }
        return bytes
    }

    /// What the pad answers to GET_REPORT: the MAC address (0x12, which SDL reads; 0x81), the
    /// version (0xA3) and an IMU calibration with non-zero ranges (0x02); other reports get EIO.
    static func featureReports(mac: [UInt8]) -> [UInt8: [UInt8]] {
        var pairing = [UInt8](repeating: 0, count: 16)
        pairing[0] = 0x12
        pairing.replaceSubrange(1...6, with: mac.reversed())
        var address = [UInt8](repeating: 0, count: 7)
        address[0] = 0x81
        address.replaceSubrange(1...6, with: mac.reversed())
        var version = [UInt8](repeating: 0, count: 49)
        version[0] = 0xA3
        var calibration = [UInt8](repeating: 0, count: 37)
        calibration[0] = 0x02
        let values: [Int16] = [0, 0, 0, 8800, -8800, 8800, -8800, 8800, -8800, 540, 540, 8192, -8192, 8192, -8192, 8192, -8192]
        for (index, value) in values.enumerated() {
            calibration[1 + 2 * index] = UInt8(truncatingIfNeeded: value)
            calibration[2 + 2 * index] = UInt8(truncatingIfNeeded: value >> 8)
        }
        return [0x12: pairing, 0x81: address, 0xA3: version, 0x02: calibration]
    }

    static func kernelRelease() -> String {
        var name = utsname()
        uname(&name)
        return withUnsafeBytes(of: name.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }

    static func pause(_ seconds: Double) {
        Monotonic.sleep(until: Monotonic.now() + UInt64(seconds * 1e9))
    }
}

// MARK: - The virtual pad (uhid)

/// A virtual HID device through `/dev/uhid`, with a reader thread that stamps every output report
/// with `CLOCK_MONOTONIC` as it is read and answers every GET_REPORT and SET_REPORT.
///
/// The one owner of its `/dev/uhid` descriptor; `destroy()` unplugs the device (the reader thread
/// stays blocked in `read` until the process exits).
final class VirtualPad: @unchecked Sendable {
    // `fd` is immutable; `destroyed` is behind `lock`; the reports are the watch's.
    private let fd: Int32
    let phys: String
    private let featureReports: [UInt8: [UInt8]]
    private let lock = NSLock()
    /// Every output report, as it was read.
    private let reports = ArrivalWatch<[UInt8]>()
    private var destroyed = false

    /// `struct uhid_event`: 4380 bytes (linux/uhid.h), offsets below from the kernel header.
    static let eventSize = 4380

    init(descriptor: [UInt8], name: String, bus: UInt16, vendor: UInt32, product: UInt32, uniq: String, featureReports: [UInt8: [UInt8]]) throws {
        fd = open("/dev/uhid", O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { throw BenchError("open /dev/uhid: \(String(cString: strerror(errno)))") }
        phys = "haptics-bench-\(getpid())"
        self.featureReports = featureReports
        var event = [UInt8](repeating: 0, count: Self.eventSize)
        Self.put32(11, &event, 0)  // UHID_CREATE2
        Self.putString(name, &event, 4, 128)
        Self.putString(phys, &event, 132, 64)
        Self.putString(uniq, &event, 196, 64)
        Self.put16(UInt16(descriptor.count), &event, 260)
        Self.put16(bus, &event, 262)
        Self.put32(vendor, &event, 264)
        Self.put32(product, &event, 268)
        Self.put32(0x0100, &event, 272)
        event.replaceSubrange(280..<(280 + descriptor.count), with: descriptor)
        try write(event, what: "UHID_CREATE2")
        let thread = Thread { [self] in readLoop() }
        thread.name = "uhid-reader"
        thread.start()
    }

    /// Unplugs the device (UHID_DESTROY) and closes `/dev/uhid`. Idempotent.
    func destroy() {
        lock.lock()
        defer { lock.unlock() }
        guard !destroyed else { return }
        destroyed = true
        var event = [UInt8](repeating: 0, count: Self.eventSize)
        Self.put32(1, &event, 0)  // UHID_DESTROY
        try? write(event, what: "UHID_DESTROY")
    }

    /// Every output report so far.
    func outputs() -> [(timestamp: UInt64, data: [UInt8])] { reports.all.map { ($0.time, $0.event) } }

    /// Waits for the first output report matching `match` read after `after` (default: now; a report
    /// that already came after `after` counts), and returns the time it was armed.
    @discardableResult
    func arm(_ match: @escaping @Sendable ([UInt8]) -> Bool, after: UInt64? = nil) -> UInt64 { reports.arm(after: after, match) }

    /// The arrival time of the armed match, or `nil` after `timeout` seconds.
    func wait(timeout: Double) -> UInt64? { reports.wait(timeout: timeout) }

    /// The hidraw node, once a driver has bound the device.
    func waitForNode(timeout: Double) throws -> String {
        let deadline = Monotonic.now() + UInt64(timeout * 1e9)
        while Monotonic.now() < deadline {
            if let node = hidrawNode(), access("/dev/" + node, F_OK) == 0 { return "/dev/" + node }
            HIDRace.pause(0.01)
        }
        throw BenchError("no hidraw node for the virtual pad after \(timeout) s (is hid-generic loaded?)")
    }

    /// The sysfs directory of the HID device (found by its unique phys).
    func sysfsDirectory() -> String? {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/sys/bus/hid/devices") else { return nil }
        for entry in entries {
            let directory = "/sys/bus/hid/devices/" + entry
            if let uevent = try? String(contentsOfFile: directory + "/uevent", encoding: .utf8), uevent.contains("HID_PHYS=\(phys)\n") {
                return directory
            }
        }
        return nil
    }

    func driverName() -> String? {
        sysfsDirectory().flatMap { try? FileManager.default.destinationOfSymbolicLink(atPath: $0 + "/driver") }
            .map { ($0 as NSString).lastPathComponent }
    }

    private func hidrawNode() -> String? {
        guard let directory = sysfsDirectory(), driverName() != nil else { return nil }
        return (try? FileManager.default.contentsOfDirectory(atPath: directory + "/hidraw"))?.first { $0.hasPrefix("hidraw") }
    }

    private func write(_ event: [UInt8], what: String) throws {
        let written = event.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        guard written == event.count else { throw BenchError("write \(what) to /dev/uhid: \(String(cString: strerror(errno)))") }
    }

    private func readLoop() {
        var event = [UInt8](repeating: 0, count: Self.eventSize)
        while true {
            let count = event.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            let now = Monotonic.now()
            if count < 0 {
                if errno == EINTR { continue }
                return
            }
            guard count >= 4 else { continue }
            switch Self.get32(event, 0) {
            case 6:  // UHID_OUTPUT: data[4096] at 4, size at 4100
                let size = Int(Self.get16(event, 4100))
                let data = Array(event[4..<(4 + min(size, 4096))])
                reports.record(data, at: now)
            case 9:  // UHID_GET_REPORT: id at 4, rnum at 8 → UHID_GET_REPORT_REPLY: id, err, size, data
                let id = Self.get32(event, 4)
                let answer = featureReports[event[8]]
                var reply = [UInt8](repeating: 0, count: Self.eventSize)
                Self.put32(10, &reply, 0)
                Self.put32(id, &reply, 4)
                Self.put16(answer == nil ? UInt16(EIO) : 0, &reply, 8)
                if let answer {
                    Self.put16(UInt16(answer.count), &reply, 10)
                    reply.replaceSubrange(12..<(12 + answer.count), with: answer)
                }
                try? write(reply, what: "UHID_GET_REPORT_REPLY")
            case 13:  // UHID_SET_REPORT: id at 4 → UHID_SET_REPORT_REPLY: id, err 0
                var reply = [UInt8](repeating: 0, count: Self.eventSize)
                Self.put32(14, &reply, 0)
                Self.put32(Self.get32(event, 4), &reply, 4)
                try? write(reply, what: "UHID_SET_REPORT_REPLY")
            default:
                continue
            }
        }
    }

    static func put16(_ value: UInt16, _ buffer: inout [UInt8], _ offset: Int) {
        buffer[offset] = UInt8(truncatingIfNeeded: value)
        buffer[offset + 1] = UInt8(truncatingIfNeeded: value >> 8)
    }

    static func put32(_ value: UInt32, _ buffer: inout [UInt8], _ offset: Int) {
        for index in 0..<4 { buffer[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * UInt32(index))) }
    }

    static func putString(_ text: String, _ buffer: inout [UInt8], _ offset: Int, _ size: Int) {
        for (index, byte) in text.utf8.prefix(size - 1).enumerated() { buffer[offset + index] = byte }
    }

    static func get16(_ buffer: [UInt8], _ offset: Int) -> UInt16 {
        UInt16(buffer[offset]) | UInt16(buffer[offset + 1]) << 8
    }

    static func get32(_ buffer: [UInt8], _ offset: Int) -> UInt32 {
        (0..<4).reduce(UInt32(0)) { $0 | UInt32(buffer[offset + $1]) << (8 * UInt32($1)) }
    }
}
