import CVMRig
import Foundation
import Glibc
import Synchronization

/// A virtual input device with force feedback made through `/dev/uinput`, for tests inside the VM
/// rig: the test is the device's driver.
///
/// A reader thread of its own answers **every** `UI_FF_UPLOAD` and `UI_FF_ERASE` request (a client's
/// `EVIOCSFF` / `EVIOCRMFF` blocks until it is answered) and records, with `CLOCK_MONOTONIC` stamps,
/// every upload (the new effect and the one it replaces), erase, play, stop and gain change clients
/// send. Uploads are accepted unless ``answerUploads(_:)`` says otherwise.
///
/// ```swift
/// try VMRig.loadKernelModule("uinput")
/// let pad = try UInputDevice(.gamepad(name: "Test Pad"))
/// let node = try pad.eventNode()            // "/dev/input/event3"
/// // … play on `node` …
/// let plays = pad.records.filter { if case .play = $0.event { true } else { false } }
/// try pad.destroy()
/// ```
///
/// uinput hands plays, stops and gain to its reader through a 16-event ring and drops what a slow
/// reader did not take in time; uploads and erases cannot be lost (the client waits for the answer).
public final class UInputDevice: Sendable {
    /// What the device is made of.
    public struct Spec: Sendable {
        /// The input device's name.
        public var name: String
        /// `phys`; unique per device by default, so ids built from it differ.
        public var phys: String
        /// `BUS_*` (BUS_VIRTUAL 0x06 by default), vendor and product ids.
        public var bus: UInt16
        public var vendor: UInt16
        public var product: UInt16
        /// The FF codes declared (`FF_RUMBLE` 0x50, `FF_PERIODIC` 0x51, `FF_CONSTANT` 0x52, `FF_SINE` 0x5a, `FF_GAIN` 0x60, …).
        public var ffBits: [UInt16]
        /// Key codes (a game pad: BTN_SOUTH 0x130 …).
        public var keys: [UInt16]
        /// Absolute axes (ABS_X 0, ABS_Y 1, ABS_RX 3, ABS_RY 4).
        public var axes: [UInt16]
        /// Effect slots.
        public var effectSlots: UInt32

        /// A spec.
        public init(
            name: String, phys: String? = nil, bus: UInt16 = 0x06, vendor: UInt16 = 0x1209, product: UInt16 = 0x0001, ffBits: [UInt16],
            keys: [UInt16] = [], axes: [UInt16] = [], effectSlots: UInt32 = 4
        ) {
            self.name = name
            self.phys = phys ?? VMRig.uniqueName("vmrig-uinput")
            self.bus = bus
            self.vendor = vendor
            self.product = product
            self.ffBits = ffBits
            self.keys = keys
            self.axes = axes
            self.effectSlots = effectSlots
        }

        /// The buttons and sticks of a game pad (BTN_SOUTH, EAST, NORTH, WEST, TL, TR, SELECT, START, MODE; ABS_X, Y, RX, RY).
        public static let gamepadKeys: [UInt16] = [0x130, 0x131, 0x133, 0x134, 0x136, 0x137, 0x13A, 0x13B, 0x13C]
        public static let gamepadAxes: [UInt16] = [0, 1, 3, 4]

        /// A game pad with `FF_RUMBLE` (and `FF_GAIN`), as a user-space driver for a pad makes one.
        public static func gamepad(name: String, ffBits: [UInt16] = [0x50, 0x60]) -> Spec {
            Spec(name: name, ffBits: ffBits, keys: gamepadKeys, axes: gamepadAxes)
        }

        /// A vibrator: force feedback only, no keys.
        public static func vibrator(name: String, ffBits: [UInt16]) -> Spec {
            Spec(name: name, ffBits: ffBits)
        }
    }

    /// An effect as the device's driver received it (`struct ff_effect`, the fields tests look at).
    public struct Effect: Sendable, Equatable, CustomStringConvertible {
        public var type: UInt16
        public var id: Int16
        public var direction: UInt16
        public var replayLength: UInt16
        public var replayDelay: UInt16
        public var strong: UInt16
        public var weak: UInt16
        public var waveform: UInt16
        public var period: UInt16
        public var magnitude: Int16
        public var offset: Int16
        public var phase: UInt16
        public var level: Int16
        public var envelope: [UInt16]

        init(_ raw: cvmrig_ff_effect) {
            type = raw.type
            id = raw.id
            direction = raw.direction
            replayLength = raw.replay_length
            replayDelay = raw.replay_delay
            strong = raw.strong
            weak = raw.weak
            waveform = raw.waveform
            period = raw.period
            magnitude = raw.magnitude
            offset = raw.offset
            phase = raw.phase
            level = raw.level
            envelope = [raw.attack_length, raw.attack_level, raw.fade_length, raw.fade_level]
        }

        public var description: String {
            switch type {
            case 0x50: "rumble#\(id) strong \(strong) weak \(weak) length \(replayLength)"
            case 0x51: "periodic#\(id) waveform 0x\(String(waveform, radix: 16)) period \(period) magnitude \(magnitude) length \(replayLength)"
            case 0x52: "constant#\(id) level \(level) length \(replayLength)"
            default: "type 0x\(String(type, radix: 16))#\(id)"
            }
        }
    }

    /// One thing a client did to the device.
    public enum Event: Sendable, Equatable, CustomStringConvertible {
        /// `EVIOCSFF`: `old` is nil for a new effect; `answer` is what the device answered (0 or -errno).
        case upload(effect: Effect, old: Effect?, answer: Int32)
        /// `EVIOCRMFF` (or the kernel's erase when a client's descriptor closes).
        case erase(id: Int)
        /// An `EV_FF` write: `count` > 0 plays, 0 stops.
        case play(id: Int, count: Int)
        /// `EV_FF` / `FF_GAIN`.
        case gain(Int)

        public var description: String {
            switch self {
            case .upload(let effect, let old, let answer): "upload \(effect)\(old == nil ? " (new)" : "")\(answer == 0 ? "" : " refused \(answer)")"
            case .erase(let id): "erase #\(id)"
            case .play(let id, let count): count == 0 ? "stop #\(id)" : "play #\(id) ×\(count)"
            case .gain(let value): "gain \(value)"
            }
        }
    }

    /// An event and when the reader thread read it (`CLOCK_MONOTONIC` nanoseconds).
    public struct Record: Sendable, Equatable, CustomStringConvertible {
        public var event: Event
        public var time: UInt64
        public var description: String { "\(event) @\(time / 1000) µs" }
    }

    /// Decides the answer to an upload (0 accepts, -errno refuses).
    public typealias UploadAnswer = @Sendable (_ effect: Effect, _ isNew: Bool) -> Int32

    /// The spec it was made with.
    public let spec: Spec
    /// The input device's sysfs name, `input7`.
    public let sysname: String

    private let core: Core

    /// Creates the device and starts its reader thread.
    /// - Throws: ``RigError`` if `/dev/uinput` cannot be opened (load `uinput` first) or refuses the spec.
    public init(_ spec: Spec) throws {
        let fd = open("/dev/uinput", O_RDWR | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else {
            if !VMRig.isInsideVM { throw RigError.notInsideVM(what: "UInputDevice") }
            throw RigError.errno("open", "/dev/uinput")
        }
        let wake = cvmrig_eventfd()
        guard wake >= 0 else {
            close(fd)
            throw RigError.system(operation: "eventfd", path: "(uinput reader wake-up)", errno: -wake)
        }
        let status = spec.ffBits.withUnsafeBufferPointer { ff in
            spec.keys.withUnsafeBufferPointer { keys in
                spec.axes.withUnsafeBufferPointer { axes in
                    spec.name.withCString { name in
                        spec.phys.withCString { phys in
                            var raw = cvmrig_uinput_spec(
                                name: name, phys: phys, bus: spec.bus, vendor: spec.vendor, product: spec.product, version: 1,
                                ff_bits: ff.baseAddress, ff_count: ff.count, keys: keys.baseAddress, key_count: keys.count, axes: axes.baseAddress,
                                axis_count: axes.count, ff_effects_max: spec.effectSlots)
                            return cvmrig_uinput_create(fd, &raw)
                        }
                    }
                }
            }
        }
        guard status == 0 else {
            close(fd)
            close(wake)
            throw RigError.system(operation: "create (UI_DEV_SETUP/UI_DEV_CREATE) \(spec.name) on", path: "/dev/uinput", errno: -status)
        }
        var name = [CChar](repeating: 0, count: 64)
        let named = cvmrig_uinput_sysname(fd, &name, name.count)
        guard named == 0 else {
            _ = cvmrig_uinput_destroy(fd)
            close(fd)
            close(wake)
            throw RigError.system(operation: "UI_GET_SYSNAME on", path: "/dev/uinput", errno: -named)
        }
        self.spec = spec
        self.sysname = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        core = Core(fd: fd, wakeFD: wake)
        core.startReader(name: "uinput-\(sysname)")
    }

    deinit {
        try? destroy()
    }

    // MARK: Observing

    /// Everything clients did so far, oldest first.
    public var records: [Record] { core.state.withLock { $0.records } }

    /// Forgets what was recorded so far.
    public func clearRecords() {
        core.state.withLock { $0.records.removeAll() }
    }

    /// Answers later uploads with `answer` (nil: accept every upload).
    public func answerUploads(_ answer: UploadAnswer?) {
        core.state.withLock { $0.answer = answer }
    }

    /// The effects clients hold now, by id (uploaded and not erased), as the device's driver knows them.
    public var effects: [Int: Effect] { core.state.withLock { $0.effects } }

    /// The effects playing at `time` (monotonic nanoseconds, not before the last event read) by
    /// ff-memless's rules (see ``isPlaying(id:at:)``), kept up to date as events arrive: cheap enough
    /// for a thread that polls it every millisecond.
    public func activeEffects(at time: UInt64) -> [Effect] {
        core.state.withLock { state in
            state.started.compactMap { id, since in
                guard let effect = state.effects[id] else { return nil }
                return effect.replayLength == 0 || time < since + UInt64(effect.replayLength) * 1_000_000 ? effect : nil
            }
        }
    }

    /// Waits until `condition` holds for the records (checked every 2 ms) and returns them.
    @discardableResult
    public func waitForRecords(
        _ what: String, timeout: Double = 10, _ condition: ([Record]) -> Bool
    ) throws -> [Record] {
        let deadline = cvmrig_monotonic_ns() + UInt64(timeout * 1e9)
        while true {
            let now = records
            if condition(now) { return now }
            if cvmrig_monotonic_ns() > deadline {
                throw RigError.timeout(what: "\(what) on \(spec.name); recorded: \(now.suffix(12).map(\.description))", seconds: timeout)
            }
            usleep(2000)
        }
    }

    /// Whether effect `id` is playing at `time` by the driver's rules of ff-memless: from a play until
    /// a stop, an erase, or `replay.length` after the play or the last update made while playing
    /// (0: no end); nil when no effect with that id was ever uploaded.
    public func isPlaying(id: Int, at time: UInt64) -> Bool? {
        var effect: Effect?
        var startedAt: UInt64?
        for record in records where record.time <= time {
            switch record.event {
            case .upload(let uploaded, _, let answer) where Int(uploaded.id) == id && answer == 0:
                effect = uploaded
                if startedAt != nil { startedAt = record.time }
            case .play(let played, let count) where played == id:
                startedAt = count > 0 ? record.time : nil
            case .erase(let erased) where erased == id:
                startedAt = nil
            default: continue
            }
        }
        guard let effect else { return nil }
        guard let startedAt else { return false }
        return effect.replayLength == 0 || time < startedAt + UInt64(effect.replayLength) * 1_000_000
    }

    // MARK: Finding the device

    /// The input device's sysfs directory, `/sys/devices/virtual/input/input7`.
    public var sysfsPath: String { "/sys/devices/virtual/input/" + sysname }

    /// The event node, `/dev/input/eventN`, once the kernel made it.
    public func eventNode(timeout: Duration = .seconds(10)) throws -> String {
        try SysFS.wait(for: "the event node of \(spec.name) (\(sysname))", timeout: timeout) { () -> String? in
            guard let entries = try? SysFS.list(sysfsPath), let event = entries.first(where: { $0.hasPrefix("event") }) else { return nil }
            let node = "/dev/input/" + event
            return SysFS.exists(node) ? node : nil
        }
    }

    // MARK: Acting

    /// Sets the device-wide gain through a descriptor of its own on `node` (`EV_FF` / `FF_GAIN`,
    /// 0…0xFFFF), as a user's settings tool does.
    public static func setGain(node: String, _ gain: UInt16) throws {
        let status = cvmrig_evdev_set_gain(node, gain)
        guard status == 0 else { throw RigError.system(operation: "write FF_GAIN to", path: node, errno: -status) }
    }

    /// Unplugs the device (`UI_DEV_DESTROY`), stops the reader and closes `/dev/uinput`. Idempotent.
    public func destroy() throws {
        try core.destroy()
    }

    // MARK: The reader

    struct State: Sendable {
        var records: [Record] = []
        var effects: [Int: Effect] = [:]
        /// Effects played and not stopped or erased since, with when they were last (re)started.
        var started: [Int: UInt64] = [:]
        var answer: UploadAnswer?
        var readerRunning = false
        var destroyed = false
        var readerError: String?
    }

    final class Core: Sendable {
        let fd: Int32
        let wakeFD: Int32
        let state = Mutex(State())

        init(fd: Int32, wakeFD: Int32) {
            self.fd = fd
            self.wakeFD = wakeFD
        }

        func startReader(name: String) {
            state.withLock { $0.readerRunning = true }
            let thread = Thread { [self] in
                // The reader is the device's driver and its hardware: it must see a play or a stop when
                // it happens, whatever the code under test keeps busy (its real-time threads included).
                // Without the privilege it stays a normal thread.
                VMRig.requestRealtimeForCurrentThread()
                readLoop()
                state.withLock { $0.readerRunning = false }
            }
            thread.name = name
            thread.start()
        }

        func destroy() throws {
            let already = state.withLock { s -> Bool in
                defer { s.destroyed = true }
                return s.destroyed
            }
            if already { return }
            // Stop the reader first: a client's upload in flight is then answered -ENODEV by the
            // kernel's teardown, not by us.
            _ = cvmrig_eventfd_signal(wakeFD)
            let deadline = cvmrig_monotonic_ns() + 30_000_000_000
            while state.withLock({ $0.readerRunning }) && cvmrig_monotonic_ns() < deadline { usleep(500) }
            if state.withLock({ $0.readerRunning }) {
                throw RigError.timeout(what: "the uinput reader thread to stop", seconds: 30)
            }
            let status = cvmrig_uinput_destroy(fd)
            close(fd)
            close(wakeFD)
            if status != 0 { throw RigError.system(operation: "UI_DEV_DESTROY on", path: "/dev/uinput", errno: -status) }
        }

        private func readLoop() {
            var event = cvmrig_uinput_event()
            while true {
                let ready = cvmrig_wait_readable(fd, wakeFD, -1)
                if ready == 2 { return }
                if ready < 0 {
                    state.withLock { $0.readerError = "poll /dev/uinput: errno \(-ready)" }
                    return
                }
                if ready == 0 { continue }
                while true {
                    let status = cvmrig_uinput_read(fd, &event)
                    if status == -EAGAIN { break }
                    if status < 0 {
                        state.withLock { $0.readerError = "read /dev/uinput: errno \(-status)" }
                        return
                    }
                    handle(event, at: cvmrig_monotonic_ns())
                }
            }
        }

        private func handle(_ event: cvmrig_uinput_event, at time: UInt64) {
            switch (event.type, event.code) {
            case (0x0101, 1):  // EV_UINPUT, UI_FF_UPLOAD
                let request = UInt32(bitPattern: event.value)
                var raw = cvmrig_ff_effect(), rawOld = cvmrig_ff_effect()
                guard cvmrig_uinput_begin_upload(fd, request, &raw, &rawOld) == 0 else { return }
                let effect = Effect(raw), old = rawOld.type == 0 ? nil : Effect(rawOld)
                let answer = state.withLock { $0.answer }?(effect, old == nil) ?? 0
                // Record before answering: the client's ioctl returns (and may act on it) as soon as it is answered.
                state.withLock { s in
                    s.records.append(Record(event: .upload(effect: effect, old: old, answer: answer), time: time))
                    if answer == 0 {
                        s.effects[Int(effect.id)] = effect
                        // ff-memless restarts an effect updated while it plays.
                        if s.started[Int(effect.id)] != nil { s.started[Int(effect.id)] = time }
                    }
                }
                _ = cvmrig_uinput_end_upload(fd, request, answer)
            case (0x0101, 2):  // EV_UINPUT, UI_FF_ERASE
                let request = UInt32(bitPattern: event.value)
                var id: UInt32 = 0
                guard cvmrig_uinput_begin_erase(fd, request, &id) == 0 else { return }
                state.withLock { s in
                    s.records.append(Record(event: .erase(id: Int(id)), time: time))
                    s.effects[Int(id)] = nil
                    s.started[Int(id)] = nil
                }
                _ = cvmrig_uinput_end_erase(fd, request, 0)
            case (0x15, 0x60):  // EV_FF, FF_GAIN
                state.withLock { $0.records.append(Record(event: .gain(Int(event.value)), time: time)) }
            case (0x15, let code) where code < 0x50:  // EV_FF play or stop of an effect id
                state.withLock { s in
                    s.records.append(Record(event: .play(id: Int(code), count: Int(event.value)), time: time))
                    s.started[Int(code)] = event.value > 0 ? time : nil
                }
            default:
                break
            }
        }
    }
}
