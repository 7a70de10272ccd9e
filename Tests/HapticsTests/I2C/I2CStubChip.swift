import CI2CShim
import DRV260x
import Foundation
import Haptics
import Synchronization
import Testing
import VMRig

/// Guest side: a DRV2605L played by a test thread on the kernel's `i2c-stub` (a bus whose chip is
/// 256 plain registers), reached through `i2c-dev` as any program reaches a real chip.
///
/// - **The witness of every write** is the kernel itself: `i2c-stub` is loaded with its dynamic
///   debug messages for writes on (`dyndbg="format wrote +p"`), so each SMBus write to the chip,
///   from any process (the stop guard's supervisor too), is a line in the kernel log
///   (`smbus byte data - addr 0x5a, wrote 0x40 at 0x01.`), read from `/dev/kmsg` in order.
/// - **The chip's behaviour** is this class's thread: it seeds STATUS (device id 7), and every
///   millisecond reads MODE, GO and RTP_INPUT. When GO is set in auto-calibration mode it answers
///   after ``calibrationDelay`` with the result registers (and DIAG_RESULT as the test asks), then
///   clears GO; in internal-trigger mode (a ROM sequence) it clears GO after ``sequenceDelay``. It
///   brackets its own writes with writes to register 0xFE (1 before, 0 after), which no DRV260x
///   has, so ``backendWrites()`` leaves them out of the kernel's list (the backend only reads
///   while the chip answers: it polls GO).
final class I2CStubChip: @unchecked Sendable {
    // The thread's state is behind `shared`; the descriptors are the thread's and the kmsg reader's, closed in deinit.
    /// The bus's node, `/dev/i2c-N`.
    let busPath: String
    let busNumber: Int
    private let chipFD: Int32
    private let kmsgFD: Int32
    private let shared = Mutex(Shared())
    private var thread: Thread?

    /// How long auto-calibration takes, in seconds.
    static let calibrationDelay = 0.08
    /// How long a ROM sequence plays, in seconds.
    static let sequenceDelay = 0.03

    /// What auto-calibration answers.
    struct CalibrationAnswer {
        var compensation: UInt8 = 0x0D
        var backEMF: UInt8 = 0x7A
        var gain: UInt8 = 0x02
        var lraPeriod: UInt8 = 0x39  // 57 × 98.46 µs = 5.61 ms: 178 Hz
        var fails = false
    }

    struct Sample: Sendable {
        var time: UInt64
        var mode: UInt8
        var rtp: UInt8
    }

    private struct Shared {
        var stopping = false
        var calibration = CalibrationAnswer()
        var goSeen: UInt64?
        var samples: [Sample] = []
        var sampling = false
        var faults: UInt8 = 0
    }

    /// Loads `i2c-stub` at 0x5a (once per boot) and `i2c-dev`, finds the stub's bus, clears the chip
    /// and seeds STATUS, then starts the chip's thread and the log reader at the end of the log.
    init() throws {
        try VMRig.loadKernelModule("i2c-dev")
        try VMRig.loadKernelModule("i2c-stub", parameters: ["chip_addr=0x5a", #"dyndbg="format wrote +p""#])
        var found: Int?
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/sys/bus/i2c/devices")) ?? [] where entry.hasPrefix("i2c-") {
            let name = (try? String(contentsOfFile: "/sys/bus/i2c/devices/\(entry)/name", encoding: .utf8)) ?? ""
            if name.hasPrefix("SMBus stub driver") { found = Int(entry.dropFirst(4)) }
        }
        busNumber = try #require(found, "no i2c-stub adapter in /sys/bus/i2c/devices")
        busPath = "/dev/i2c-\(busNumber)"
        let fd = i2c_shim_open(busPath)
        try #require(fd >= 0, "cannot open \(busPath): errno \(-fd)")
        try #require(i2c_shim_set_address(fd, 0x5A) == 0)
        chipFD = fd
        // The DRV2605L's reset values (SLOS854 register map), STATUS with device id 7.
        let resets: [UInt8: UInt8] = [
            0x00: 0xE0, 0x01: 0x40, 0x03: 0x01, 0x04: 0x01, 0x11: 0x05, 0x12: 0x19, 0x13: 0xFF, 0x14: 0x19, 0x15: 0xFF, 0x16: 0x3E, 0x17: 0x8C,
            0x18: 0x0C, 0x19: 0x6C, 0x1A: 0x36, 0x1B: 0x93, 0x1C: 0xF5, 0x1D: 0xA0, 0x1E: 0x20, 0x1F: 0x80, 0x20: 0x33,
        ]
        for register in 0...0x22 { _ = i2c_shim_write_byte(fd, UInt8(register), resets[UInt8(register)] ?? 0) }
        kmsgFD = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        try #require(kmsgFD >= 0, "cannot open /dev/kmsg")
        lseek(kmsgFD, 0, SEEK_END)
        let thread = Thread { [self] in run() }
        thread.qualityOfService = .userInteractive
        self.thread = thread
        thread.start()
    }

    deinit {
        close(chipFD)
        close(kmsgFD)
    }

    /// Stops the chip's thread.
    func finish() {
        shared.withLock { $0.stopping = true }
        while thread?.isFinished == false { usleep(1_000) }
    }

    /// What auto-calibration answers from now on.
    func answerCalibration(_ answer: CalibrationAnswer) { shared.withLock { $0.calibration = answer } }

    /// Latches fault flags into STATUS (bit 1 over-temperature, bit 0 over-current).
    func latchFaults(_ bits: UInt8) {
        shared.withLock { $0.faults = bits }
        own { write(0x00, 0xE0 | bits) }
    }

    /// The register that brackets the chip's own writes in the log.
    static let marker: UInt8 = 0xFE

    /// Runs `body`'s writes bracketed by the marker.
    private func own(_ body: () -> Void) {
        _ = i2c_shim_write_byte(chipFD, Self.marker, 1)
        body()
        _ = i2c_shim_write_byte(chipFD, Self.marker, 0)
    }

    /// Starts keeping MODE and RTP_INPUT with their time, every millisecond.
    func startSampling() { shared.withLock { $0.sampling = true; $0.samples = [] } }

    /// The samples kept.
    var samples: [Sample] { shared.withLock { $0.samples } }

    /// Reads a register now.
    func read(_ register: UInt8) -> UInt8 {
        UInt8(truncatingIfNeeded: max(0, i2c_shim_read_byte(chipFD, register)))
    }

    private func write(_ register: UInt8, _ value: UInt8) {
        _ = i2c_shim_write_byte(chipFD, register, value)
    }

    private func run() {
        while !shared.withLock({ $0.stopping }) {
            let mode = read(0x01)
            let go = read(0x0C)
            let now = DispatchTime.now().uptimeNanoseconds
            let (sampling, answer, goSeen) = shared.withLock { state -> (Bool, CalibrationAnswer, UInt64?) in
                if go & 1 == 0 { state.goSeen = nil } else if state.goSeen == nil { state.goSeen = now }
                return (state.sampling, state.calibration, state.goSeen)
            }
            if sampling {
                let rtp = read(0x02)
                shared.withLock { $0.samples.append(Sample(time: i2cMonotonicNow(), mode: mode, rtp: rtp)) }
            }
            if let goSeen {
                let elapsed = Double(now - goSeen) / 1e9
                if mode & 0x07 == 7, mode & 0x40 == 0, elapsed >= Self.calibrationDelay {
                    own {
                        write(0x18, answer.compensation)
                        write(0x19, answer.backEMF)
                        write(0x1A, (read(0x1A) & 0xFC) | answer.gain)
                        write(0x22, answer.lraPeriod)
                        write(0x00, 0xE0 | (answer.fails ? 0x08 : 0))
                        write(0x0C, 0)
                    }
                } else if mode & 0x07 == 0, elapsed >= Self.sequenceDelay {
                    own { write(0x0C, 0) }
                }
            }
            usleep(1_000)
        }
    }

    /// Every write the kernel logged since the last call (or the start), with its log time in µs.
    func loggedWrites() -> [(time: UInt64, write: DRV260x.Write)] {
        var result: [(UInt64, DRV260x.Write)] = []
        var buffer = [UInt8](repeating: 0, count: 8192)
        while true {
            let count = Glibc.read(kmsgFD, &buffer, buffer.count)
            if count < 0 && errno == EPIPE { continue }  // overwritten records: go on with the next
            guard count > 0 else { break }
            let record = String(decoding: buffer[0..<count], as: UTF8.self)
            guard let semicolon = record.firstIndex(of: ";"), record.contains("addr 0x5a, wrote 0x") else { continue }
            let header = record[..<semicolon].split(separator: ",")
            let text = record[semicolon...]
            guard header.count >= 3, let time = UInt64(header[2]),
                let valueRange = text.range(of: "wrote 0x"), let atRange = text.range(of: " at 0x"),
                let value = UInt8(text[valueRange.upperBound...].prefix(2), radix: 16),
                let register = UInt8(text[atRange.upperBound...].prefix(2), radix: 16)
            else { continue }
            result.append((time, DRV260x.Write(address: register, value)))
        }
        return result
    }

    /// The writes since the last call that were not this chip's own (between its markers), in order.
    func backendWrites() -> [DRV260x.Write] {
        allWrites().filter { !$0.own }.map(\.write)
    }

    /// Every write since the last call, in order, each marked whether this chip made it (between
    /// its markers) or the backend did.
    func allWrites() -> [(own: Bool, write: DRV260x.Write)] {
        // Give the kernel log a moment: a write returns before its record is readable.
        usleep(20_000)
        var result: [(own: Bool, write: DRV260x.Write)] = []
        var inOwn = false
        for (_, write) in loggedWrites() {
            if write.register == Self.marker {
                inOwn = write.value == 1
            } else {
                result.append((inOwn, write))
            }
        }
        return result
    }

    /// A board file with one actuator on this bus: `drive` is the JSON of its `drive` section.
    /// `enable` is the JSON of a `gpio` section (the chip's EN line), if any.
    func writeBoard(name: String, actuator: String, drive: String, limits: String, enable: String? = nil, in directory: String) throws -> String {
        let path = directory + "/\(name).json"
        let text = """
            {"format": 1, "name": "\(name)", "description": "stub DRV2605L",
             "actuators": [{"name": "\(actuator)", "topology": "i2c", "actuator": "\(actuator)",
                            "i2c": {"bus": \(busNumber), "address": "0x5a", "chip": "drv2605l"},\(enable.map { " \"gpio\": \($0)," } ?? "")
                            "drive": \(drive), "limits": \(limits)}]}
            """
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        chmod(path, 0o644)
        return path
    }
}

/// CLOCK_MONOTONIC now, in nanoseconds.
func i2cMonotonicNow() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}
