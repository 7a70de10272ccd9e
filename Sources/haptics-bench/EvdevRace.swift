import Dispatch
import Foundation
import Haptics
import HapticsSupport
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// `haptics-bench evdev-race`: how long a rumble takes from the trigger call to the `EV_FF` play
/// arriving at the driver of a uinput game pad, measured alternately in rounds in one process, for:
/// - the evdev plugin alone: `submit` of a full-strength frame through the plugin table
///   (`PluginActuator`) on an awake device of its own: the backend's path (plugin call, `EV_FF` write);
/// - swift-haptics without the engine, `HapticDevice.submit` of the same frame on a prepared device
///   (the power model in front of the plugin);
/// - swift-haptics through the engine, `player.start(atTime: 0)` of a 40 ms full-strength pattern,
///   from prepared and from idle (the trigger opens the node and uploads);
/// - a bare `write(2)` of the same `EV_FF` play event on a descriptor that uploaded the same effect once;
/// - SDL2's `SDL_JoystickRumble` on the same event node, with its hidapi drivers off
///   (`SDL_JOYSTICK_HIDAPI=0`), so it uses its evdev code (an `EVIOCSFF` and a write per call).
///
/// Runs inside the VM rig (it needs `/dev/uinput`); `Scripts/bench-evdev` builds it in release mode,
/// boots the VM and runs it. The test side is the pad's driver: its reader thread answers uploads
/// and erases and stamps each `EV_FF` play as it reads it, the same way for every client; "on" is a
/// play of an effect whose strong magnitude is non-zero, "off" a stop or a play of a silent effect.
///
/// SDL2 (`libSDL2-2.0.so.0`) is loaded with `dlopen`, so building the package never needs it.
///
/// Options: `--rounds N` (default 150), `--no-sdl`.
enum EvdevRace {
    /// `--rounds N`, `--no-sdl`.
    typealias Options = RaceOptions

    static func run(_ options: Options) throws {
        let rounds = options.rounds, useSDL = !options.noSDL
        print("haptics-bench evdev-race — \(ProcessInfo.processInfo.activeProcessorCount) CPU(s), kernel \(HIDRace.kernelRelease()), \(rounds) rounds\n")
        guard access("/dev/uinput", R_OK | W_OK) == 0 else {
            throw BenchError("evdev-race needs /dev/uinput (root, modprobe uinput evdev): run it inside the VM rig with Scripts/bench-evdev")
        }
        let pad = try UInputPad(name: "haptics-bench uinput pad", phys: "haptics-bench-\(getpid())")
        defer { pad.destroy() }
        let node = try pad.eventNode(timeout: 10)
        print("virtual pad (uinput, FF_RUMBLE) at \(node)")

        var sdl: SDLRumble?
        if useSDL {
            setenv("SDL_JOYSTICK_HIDAPI", "0", 1)
            setenv("SDL_JOYSTICK_DISABLE_UDEV", "1", 1)
            sdl = try SDLRumble(.joystick, namePart: "haptics-bench")
            print("SDL \(sdl!.version): \(sdl!.name), rumble through evdev")
        }
        let system = HapticSystem()
        guard let description = system.devices().first(where: { $0.backend == "evdev" && $0.id.hasSuffix(":haptics-bench-\(getpid())") }) else {
            throw BenchError("the evdev backend does not list the pad; devices: \(system.devices().map(\.id)); plugins: \(system.plugins)")
        }
        let device = try system.openDevice(description.id)
        defer { device.close() }
        let engine = try HapticEngine(devices: [device], profileStore: nil, policy: HapticPolicy())
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
        print("swift-haptics: \(description.id), wake latency \(String(format: "%.2f", description.wakeLatency * 1000)) ms")

        func ours(prepared: Bool) throws -> UInt64? {
            if prepared {
                hold.prepare()
                guard device.powerState == .prepared else { throw BenchError("prepare failed: \(String(describing: device.lastError))") }
                HIDRace.pause(0.01)
            } else if device.powerState != .idle {
                throw BenchError("the device is not idle before an idle trigger (\(device.powerState))")
            }
            finished.withLock { $0 = false }
            let start = pad.arm(.on)
            try player.start(atTime: 0)
            let arrival = pad.wait(timeout: 1)
            _ = pad.arm(.off, after: start)
            let off = pad.wait(timeout: 1)
            let deadline = Monotonic.now() + 1_000_000_000
            while (!finished.withLock({ $0 }) || device.powerState != .idle) && Monotonic.now() < deadline { HIDRace.pause(0.001) }
            guard off != nil, device.powerState == .idle else {
                throw BenchError("the pattern did not end with a stop and idle: stop \(off != nil), \(device.powerState), \(String(describing: device.lastError))")
            }
            return arrival.map { $0 - start }
        }

        let submitDurations = Mutex<[Double]>([])
        func direct() throws -> UInt64? {
            hold.prepare()
            try device.beginActivity()
            let start = pad.arm(.on)
            try device.submit(DriveFrame(time: .monotonicNow(), channels: [ChannelDrive(amplitude: 1), ChannelDrive(amplitude: 0)]))
            submitDurations.withLock { $0.append(Double(Monotonic.now() - start) / 1e3) }
            let arrival = pad.wait(timeout: 1)
            _ = pad.arm(.off, after: start)
            try device.submit(DriveFrame(time: .monotonicNow(), channels: [ChannelDrive(amplitude: 0), ChannelDrive(amplitude: 0)]))
            _ = pad.wait(timeout: 1)
            device.endActivity()
            return arrival.map { $0 - start }
        }

        // The backend alone: its own handle on the pad (a second descriptor and effect), awake, driven
        // through the plugin table as the host does, without the power model in front.
        guard let backend = system.backends.first(where: { $0.name == "evdev" }) else { throw BenchError("the evdev plugin did not load") }
        let actuator = try backend.open(deviceID: description.id)
        defer { actuator.close() }
        try actuator.wake()
        let actuatorDurations = Mutex<[Double]>([])
        func plugin() throws -> UInt64? {
            let start = pad.arm(.on)
            try actuator.submit(DriveFrame(time: .monotonicNow(), channels: [ChannelDrive(amplitude: 1), ChannelDrive(amplitude: 0)]))
            actuatorDurations.withLock { $0.append(Double(Monotonic.now() - start) / 1e3) }
            let arrival = pad.wait(timeout: 1)
            _ = pad.arm(.off, after: start)
            try actuator.submit(DriveFrame(time: .monotonicNow(), channels: [ChannelDrive(amplitude: 0), ChannelDrive(amplitude: 0)]))
            _ = pad.wait(timeout: 1)
            return arrival.map { $0 - start }
        }
        let bareClient = try BareEvdev(node: node)
        defer { bareClient.close() }
        let writeDurations = Mutex<[Double]>([])
        func bare() throws -> UInt64? {
            let start = pad.arm(.on)
            try bareClient.play(1)
            writeDurations.withLock { $0.append(Double(Monotonic.now() - start) / 1e3) }
            let arrival = pad.wait(timeout: 1)
            _ = pad.arm(.off, after: start)
            try bareClient.play(0)
            _ = pad.wait(timeout: 1)
            return arrival.map { $0 - start }
        }

        func sdlRumble(_ client: SDLRumble) throws -> UInt64? {
            let start = pad.arm(.on)
            try client.rumble(low: 0xFFFF, high: 0)
            let arrival = pad.wait(timeout: 1)
            _ = pad.arm(.off, after: start)
            try client.rumble(low: 0, high: 0)
            _ = pad.wait(timeout: 1)
            return arrival.map { $0 - start }
        }

        for _ in 0..<5 {
            _ = try ours(prepared: true)
            _ = try ours(prepared: false)
            _ = try direct()
            _ = try plugin()
            _ = try bare()
            if let sdl { _ = try sdlRumble(sdl) }
        }
        var clients: [(name: String, sample: () throws -> UInt64?)] = [
            (Client.plugin, plugin),
            (Client.device, direct),
            (Client.prepared, { try ours(prepared: true) }),
            (Client.idle, { try ours(prepared: false) }),
            (Client.bare, bare),
        ]
        if let sdl { clients.append((Client.sdl, { try sdlRumble(sdl) })) }
        var samples = [[Double]](repeating: [], count: clients.count)
        var missed = [Int](repeating: 0, count: clients.count)
        let began = Monotonic.now()
        for round in 0..<rounds {
            for step in 0..<clients.count {
                let index = (round + step) % clients.count
                if let latency = try clients[index].sample() {
                    samples[index].append(Double(latency) / 1e3)
                } else {
                    missed[index] += 1
                }
                HIDRace.pause(0.02)
            }
        }
        let took = Double(Monotonic.now() - began) / 1e9
        printTable(clients.map(\.name), samples, missed, rounds: rounds, seconds: took)
        let calls = Stats(submitDurations.withLock { $0 })
        let writes = Stats(writeDurations.withLock { $0 })
        let plugins = Stats(actuatorDurations.withLock { $0 })
        print("calls return after (p50): the plugin's submit \(us(plugins.p50)), HapticDevice.submit \(us(calls.p50)), the bare write() \(us(writes.p50))")
        let uploads = pad.uploadCount
        print("uploads answered by the pad's driver during the run: \(uploads) (swift-haptics updates only when the magnitudes change; SDL uploads on every call)")
        sdl?.close()
    }

    enum Client {
        static let plugin = "swift-haptics: evdev plugin submit, awake"
        static let device = "swift-haptics: HapticDevice.submit, prepared"
        static let prepared = "swift-haptics: player.start, prepared"
        static let idle = "swift-haptics: player.start, from idle"
        static let bare = "bare write() of the EV_FF play"
        static let sdl = "SDL2: SDL_JoystickRumble (evdev)"
    }

    static func printTable(_ names: [String], _ samples: [[Double]], _ missed: [Int], rounds: Int, seconds: Double) {
        let results = RaceResults(
            title: "Trigger call → EV_FF play read by the uinput pad's driver (\(rounds) rounds, clients alternated, \(String(format: "%.0f", seconds)) s)",
            names: names, samples: samples, missed: missed, bareClient: Client.bare, sdlClient: Client.sdl)
        results.printGoals(
            bareLabel: "bare write",
            [("plugin submit", Client.plugin), ("HapticDevice.submit", Client.device), ("player.start prepared", Client.prepared)])
    }
}

// MARK: - Kernel structures, laid out by hand (linux/input.h, linux/uinput.h, x86_64 and arm64)

/// `_IOC(dir, type, nr, size)` of asm-generic/ioctl.h.
private func ioc(_ direction: UInt, _ type: Character, _ number: UInt, _ size: Int) -> UInt {
    direction << 30 | UInt(size) << 16 | UInt(type.asciiValue!) << 8 | number
}

private enum IOCTL {
    static let none: UInt = 0, write: UInt = 1, read: UInt = 2
    /// `sizeof(struct ff_effect)`: 16 bytes of header, a 32-byte union (the periodic effect's `custom_data` pointer aligns it to 8).
    static let effectSize = 48
    static let setEventBit = ioc(write, "U", 100, 4)
    static let setKeyBit = ioc(write, "U", 101, 4)
    static let setAbsBit = ioc(write, "U", 103, 4)
    static let setFFBit = ioc(write, "U", 107, 4)
    static let setPhys = ioc(write, "U", 108, 8)  // char *
    static let create = ioc(none, "U", 1, 0)
    static let destroy = ioc(none, "U", 2, 0)
    static let setup = ioc(write, "U", 3, 92)  // struct uinput_setup: input_id (8), name[80], ff_effects_max
    static let absSetup = ioc(write, "U", 4, 28)  // struct uinput_abs_setup: code, filler, input_absinfo (24)
    static func sysname(_ length: Int) -> UInt { ioc(read, "U", 44, length) }
    static let beginUpload = ioc(read | write, "U", 200, 8 + 2 * effectSize)  // struct uinput_ff_upload
    static let endUpload = ioc(write, "U", 201, 8 + 2 * effectSize)
    static let beginErase = ioc(read | write, "U", 202, 12)  // struct uinput_ff_erase
    static let endErase = ioc(write, "U", 203, 12)
    static let uploadEffect = ioc(write, "E", 0x80, effectSize)  // EVIOCSFF
}

/// `struct input_event` on 64-bit: a 16-byte timeval, then type, code, value.
private func inputEvent(type: UInt16, code: UInt16, value: Int32) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: 24)
    withUnsafeBytes(of: type.littleEndian) { bytes.replaceSubrange(16..<18, with: $0) }
    withUnsafeBytes(of: code.littleEndian) { bytes.replaceSubrange(18..<20, with: $0) }
    withUnsafeBytes(of: value.littleEndian) { bytes.replaceSubrange(20..<24, with: $0) }
    return bytes
}

/// A rumble `struct ff_effect`: type FF_RUMBLE at 0, id at 2, replay.length at 10, strong and weak
/// magnitudes at 16 and 18 (the union's start).
private func rumbleEffect(id: Int16, strong: UInt16, weak: UInt16, lengthMilliseconds: UInt16) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: IOCTL.effectSize)
    withUnsafeBytes(of: UInt16(0x50).littleEndian) { bytes.replaceSubrange(0..<2, with: $0) }
    withUnsafeBytes(of: id.littleEndian) { bytes.replaceSubrange(2..<4, with: $0) }
    withUnsafeBytes(of: lengthMilliseconds.littleEndian) { bytes.replaceSubrange(10..<12, with: $0) }
    withUnsafeBytes(of: strong.littleEndian) { bytes.replaceSubrange(16..<18, with: $0) }
    withUnsafeBytes(of: weak.littleEndian) { bytes.replaceSubrange(18..<20, with: $0) }
    return bytes
}

private func ioctlCall(_ fd: Int32, _ request: UInt, _ argument: UInt) -> Int32 {
    ioctl(fd, request, CInt(argument))
}

private func ioctlCall(_ fd: Int32, _ request: UInt, _ buffer: inout [UInt8]) -> Int32 {
    buffer.withUnsafeMutableBytes { ioctl(fd, request, $0.baseAddress!) }
}

// MARK: - The pad (uinput) and its driver

/// A uinput game pad with `FF_RUMBLE`, whose reader thread is its force-feedback driver: it answers
/// every upload and erase, keeps each effect's strong magnitude, and stamps each `EV_FF` play with
/// `CLOCK_MONOTONIC` as it reads it. The one owner of its `/dev/uinput` descriptor.
final class UInputPad: @unchecked Sendable {
    /// What a measurement waits for.
    enum Edge { case on, off }

    // `fd` and `sysname` are immutable; everything the reader and the measuring thread share is behind `lock`.
    private let fd: Int32
    let sysname: String
    private let lock = NSLock()
    private var strong: [Int: UInt16] = [:]
    private var uploads = 0
    /// Each play or stop as it was read: whether it drives the strong motor.
    private let plays = ArrivalWatch<Bool>()
    private var destroyed = false

    init(name: String, phys: String) throws {
        let fd = open("/dev/uinput", O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { throw BenchError("open /dev/uinput: \(String(cString: strerror(errno))) (modprobe uinput)") }
        self.fd = fd
        func check(_ result: Int32, _ what: String) throws {
            guard result >= 0 else { throw BenchError("uinput \(what): \(String(cString: strerror(errno)))") }
        }
        try check(ioctlCall(fd, IOCTL.setEventBit, 0x01), "UI_SET_EVBIT EV_KEY")
        for key: UInt in [0x130, 0x131, 0x133, 0x134, 0x136, 0x137, 0x13A, 0x13B, 0x13C] { try check(ioctlCall(fd, IOCTL.setKeyBit, key), "UI_SET_KEYBIT") }
        try check(ioctlCall(fd, IOCTL.setEventBit, 0x03), "UI_SET_EVBIT EV_ABS")
        for axis: UInt16 in [0, 1, 3, 4] {
            try check(ioctlCall(fd, IOCTL.setAbsBit, UInt(axis)), "UI_SET_ABSBIT")
            var setup = [UInt8](repeating: 0, count: 28)
            withUnsafeBytes(of: axis.littleEndian) { setup.replaceSubrange(0..<2, with: $0) }
            withUnsafeBytes(of: Int32(-32768).littleEndian) { setup.replaceSubrange(8..<12, with: $0) }  // minimum
            withUnsafeBytes(of: Int32(32767).littleEndian) { setup.replaceSubrange(12..<16, with: $0) }  // maximum
            try check(ioctlCall(fd, IOCTL.absSetup, &setup), "UI_ABS_SETUP")
        }
        try check(ioctlCall(fd, IOCTL.setEventBit, 0x15), "UI_SET_EVBIT EV_FF")
        try check(ioctlCall(fd, IOCTL.setFFBit, 0x50), "UI_SET_FFBIT FF_RUMBLE")
        try check(ioctlCall(fd, IOCTL.setFFBit, 0x60), "UI_SET_FFBIT FF_GAIN")
        var physBytes = Array(phys.utf8) + [0]
        try check(physBytes.withUnsafeMutableBytes { ioctl(fd, IOCTL.setPhys, $0.baseAddress!) }, "UI_SET_PHYS")
        var setup = [UInt8](repeating: 0, count: 92)
        for (offset, value) in [(0, UInt16(0x06)), (2, UInt16(0x1209)), (4, UInt16(0x4242)), (6, UInt16(1))] {
            withUnsafeBytes(of: value.littleEndian) { setup.replaceSubrange(offset..<(offset + 2), with: $0) }
        }
        for (index, byte) in name.utf8.prefix(79).enumerated() { setup[8 + index] = byte }
        withUnsafeBytes(of: UInt32(16).littleEndian) { setup.replaceSubrange(88..<92, with: $0) }
        try check(ioctlCall(fd, IOCTL.setup, &setup), "UI_DEV_SETUP")
        try check(ioctlCall(fd, IOCTL.create, 0), "UI_DEV_CREATE")
        var sysname = [UInt8](repeating: 0, count: 64)
        try check(ioctlCall(fd, IOCTL.sysname(64), &sysname), "UI_GET_SYSNAME")
        self.sysname = String(decoding: sysname.prefix { $0 != 0 }, as: UTF8.self)
        let thread = Thread { [self] in readLoop() }
        thread.name = "uinput-driver"
        thread.start()
    }

    /// The event node, once the kernel made it.
    func eventNode(timeout: Double) throws -> String {
        let deadline = Monotonic.now() + UInt64(timeout * 1e9)
        while Monotonic.now() < deadline {
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/sys/devices/virtual/input/\(sysname)")) ?? []
            if let event = entries.first(where: { $0.hasPrefix("event") }), access("/dev/input/" + event, F_OK) == 0 { return "/dev/input/" + event }
            HIDRace.pause(0.01)
        }
        throw BenchError("no event node for \(sysname) after \(timeout) s (is evdev loaded?)")
    }

    /// Unplugs the pad. The reader thread stays blocked in `read` until the process exits.
    func destroy() {
        lock.lock()
        defer { lock.unlock() }
        guard !destroyed else { return }
        destroyed = true
        _ = ioctlCall(fd, IOCTL.destroy, 0)
    }

    /// How many uploads the driver answered.
    var uploadCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return uploads
    }

    /// Waits for the first `edge` read after `after` (default: now; one that came already counts) and
    /// returns the time it was armed.
    @discardableResult
    func arm(_ edge: Edge, after: UInt64? = nil) -> UInt64 {
        plays.arm(after: after) { driven in edge == .on ? driven : !driven }
    }

    /// The arrival time of the armed edge, or nil after `timeout` seconds.
    func wait(timeout: Double) -> UInt64? { plays.wait(timeout: timeout) }

    private func readLoop() {
        var event = [UInt8](repeating: 0, count: 24)
        while true {
            let count = event.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            let now = Monotonic.now()
            if count < 0 {
                if errno == EINTR { continue }
                return
            }
            guard count == 24 else { continue }
            let type = UInt16(event[16]) | UInt16(event[17]) << 8, code = UInt16(event[18]) | UInt16(event[19]) << 8
            let value = event[20..<24].reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            switch (type, code) {
            case (0x0101, 1):  // UI_FF_UPLOAD: answer it, keep the strong magnitude
                var upload = [UInt8](repeating: 0, count: 8 + 2 * IOCTL.effectSize)
                withUnsafeBytes(of: value.littleEndian) { upload.replaceSubrange(0..<4, with: $0) }
                guard ioctlCall(fd, IOCTL.beginUpload, &upload) >= 0 else { continue }
                let id = Int(Int16(bitPattern: UInt16(upload[10]) | UInt16(upload[11]) << 8))
                let magnitude = UInt16(upload[24]) | UInt16(upload[25]) << 8
                lock.lock()
                strong[id] = magnitude
                uploads += 1
                lock.unlock()
                upload.replaceSubrange(4..<8, with: [0, 0, 0, 0])
                _ = ioctlCall(fd, IOCTL.endUpload, &upload)
            case (0x0101, 2):  // UI_FF_ERASE
                var erase = [UInt8](repeating: 0, count: 12)
                withUnsafeBytes(of: value.littleEndian) { erase.replaceSubrange(0..<4, with: $0) }
                guard ioctlCall(fd, IOCTL.beginErase, &erase) >= 0 else { continue }
                erase.replaceSubrange(4..<8, with: [0, 0, 0, 0])
                _ = ioctlCall(fd, IOCTL.endErase, &erase)
            case (0x15, let id) where id < 0x50:  // a play or a stop
                let repeats = Int32(bitPattern: value)
                lock.lock()
                let driven = repeats > 0 && (strong[Int(id)] ?? 0) > 0
                lock.unlock()
                plays.record(driven, at: now)
            default:
                continue
            }
        }
    }
}

// MARK: - The other clients

/// A bare evdev client: its own descriptor, one full-strength rumble effect uploaded once (the
/// backend's `replay.length`), then one `write(2)` per play or stop.
final class BareEvdev {
    private let fd: Int32
    private let id: Int16
    private var closed = false

    init(node: String) throws {
        fd = open(node, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { throw BenchError("open \(node): \(String(cString: strerror(errno)))") }
        var effect = rumbleEffect(id: -1, strong: 0xFFFF, weak: 0, lengthMilliseconds: 500)
        guard ioctlCall(fd, IOCTL.uploadEffect, &effect) >= 0 else { throw BenchError("EVIOCSFF on \(node): \(String(cString: strerror(errno)))") }
        id = Int16(bitPattern: UInt16(effect[2]) | UInt16(effect[3]) << 8)
    }

    /// Writes `EV_FF` with the effect's id and `count` (0 stops).
    func play(_ count: Int32) throws {
        let event = inputEvent(type: 0x15, code: UInt16(id), value: count)
        let written = event.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == event.count else { throw BenchError("write EV_FF: \(String(cString: strerror(errno)))") }
    }

    func close() {
        guard !closed else { return }
        closed = true
        Glibc.close(fd)
    }
}
