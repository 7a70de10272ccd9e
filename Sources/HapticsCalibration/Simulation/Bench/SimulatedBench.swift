import Haptics
import HapticsSupport
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A physical bench in a directory: what a maker has on the desk, for the GPIO backend and the
/// accelerometer source to meet exactly as they would on a Raspberry Pi.
///
/// - `sys/class/pwm/pwmchip0/pwmN/{period,duty_cycle,polarity,enable}`: a sysfs PWM tree the GPIO
///   backend drives (point `gpio.sysfs-root` at `sys`, ``backendSettings``);
/// - `boards/BOARD.json`: the preset's board file (`gpio.boards`);
/// - `iio/iio:device0/{name,in_accel_scale,in_accel_{x,y,z}_raw,in_accel_sampling_frequency}`: an
///   ADXL345 as the kernel's IIO driver shows it (point `--iio-root` at `iio`).
///
/// A thread follows every write to the PWM channel (inotify), advances the actuator under the
/// waveform the PWM makes, in real time on `CLOCK_MONOTONIC`, and at each of the sensor's
/// (uneven) conversions writes its raw counts, atomically per axis: the mean acceleration since the
/// conversion before (the sensor's filter, ``SimulatedAccelerometer``). Nothing here knows what the
/// calibration assumes: the actuator is physics, the tree is the kernel's interface.
public final class SimulatedBench: Sendable {
    /// What is on the bench.
    public let preset: BenchPreset
    /// The bench's directory.
    public let directory: String
    /// The sysfs root for `gpio.sysfs-root`.
    public var sysfsRoot: String { directory + "/sys" }
    /// The IIO root for the accelerometer source.
    public var iioRoot: String { directory + "/iio" }
    /// The accelerometer's device directory.
    public var sensorDirectory: String { iioRoot + "/iio:device0" }
    /// The board file.
    public var boardFile: String { directory + "/boards/" + preset.boardName + ".json" }
    /// The PWM channel the actuator hangs on.
    public var channelDirectory: String { sysfsRoot + "/class/pwm/pwmchip0/pwm0" }

    /// The settings that make the GPIO backend drive this bench.
    public var backendSettings: [String: String] { ["gpio.sysfs-root": sysfsRoot, "gpio.boards": boardFile] }

    private let seed: UInt64
    private let running = Atomic<Bool>(false)
    private let worker = Mutex<PosixThread?>(nil)
    private let driveLog = Mutex<[(time: Double, waveform: PWMWaveform)]>([])

    /// Lays the bench out in a new directory under `parent` (by default `/dev/shm`, a memory file
    /// system like sysfs, else `$TMPDIR` or `/tmp`). `seed` fixes the sensor's noise and timing and
    /// the motor's resting angle.
    /// - Throws: ``CalibrationError/sensor(path:problem:)`` when a file cannot be written.
    public init(preset: BenchPreset, seed: UInt64 = 1, parent: String? = nil) throws(CalibrationError) {
        self.preset = preset
        self.seed = seed
        // A disk file system makes every conversion (a new file renamed over the old) cost an inode
        // allocation; at hundreds of conversions a second ext4 spends milliseconds on each.
        let base = parent ?? (access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp")
        var template = Array("\(base)/haptics-bench-\(preset.name)-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw .sensor(path: base, problem: "cannot make a bench directory: \(String(cString: strerror(errno)))")
        }
        directory = String(cString: made)
        try layOut()
    }

    deinit { stop() }

    /// Starts following the PWM and writing the sensor.
    /// - Throws: ``CalibrationError/sensor(path:problem:)`` when inotify or the thread cannot start.
    public func start() throws(CalibrationError) {
        guard !running.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let watch = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard watch >= 0, inotify_add_watch(watch, channelDirectory, UInt32(IN_CLOSE_WRITE)) >= 0 else {
            let code = errno
            if watch >= 0 { close(watch) }
            running.store(false, ordering: .releasing)
            throw .sensor(path: channelDirectory, problem: "cannot watch the PWM channel: \(String(cString: strerror(code)))")
        }
        do {
            let thread = try PosixThread.start(name: "haptics-bench") { [self] in
                // The bench is the physical world: it must follow a write when the write is made,
                // however busy the code under test keeps the machine, so it runs above every
                // real-time thread of that code (the engine's scheduler 20, the GPIO watchdog 21).
                PosixThread.requestRealtimeForCurrentThread(priority: 30)
                world(watch: watch)
                close(watch)
            }
            worker.withLock { $0 = thread }
        } catch {
            close(watch)
            running.store(false, ordering: .releasing)
            throw .sensor(path: directory, problem: "\(error)")
        }
    }

    /// Stops the world (the files stay as they are).
    public func stop() {
        running.store(false, ordering: .releasing)
        let thread = worker.withLock { thread -> PosixThread? in
            defer { thread = nil }
            return thread
        }
        thread?.join()
    }

    /// Removes the bench's directory (after ``stop()``).
    public func remove() {
        stop()
        removeTree(directory)
    }

    /// Every waveform the PWM took, with the time it started (seconds on `CLOCK_MONOTONIC`).
    public var drives: [(time: Double, waveform: PWMWaveform)] { driveLog.withLock { $0 } }

    // MARK: - The tree

    private func layOut() throws(CalibrationError) {
        let chip = sysfsRoot + "/class/pwm/pwmchip0"
        for path in [chip, directory + "/boards", sensorDirectory] { try makeDirectories(path) }
        try put(chip + "/npwm", "\(preset.pwmChannels)\n")
        try put(chip + "/export", "")
        try put(chip + "/unexport", "")
        for channel in 0..<preset.pwmChannels {
            // Exported already, as after `echo N > export` on a real chip.
            let path = chip + "/pwm\(channel)"
            try makeDirectories(path)
            try put(path + "/period", "0\n")
            try put(path + "/duty_cycle", "0\n")
            try put(path + "/polarity", "normal\n")
            try put(path + "/enable", "0\n")
        }
        try put(boardFile, preset.board + "\n")
        let sensor = preset.sensor
        try put(sensorDirectory + "/name", "adxl345\n")
        try put(sensorDirectory + "/in_accel_scale", "\(formatScale(sensor.scale))\n")
        try put(sensorDirectory + "/in_accel_sampling_frequency", "\(Int(sensor.outputDataRate.rounded())).000000\n")
        var random = SeededRandom(seed: seed)
        let rest = sensor.counts(for: .zero, random: &random)
        for (axis, value) in zip(["x", "y", "z"], [rest.x, rest.y, rest.z]) { try put(sensorDirectory + "/in_accel_\(axis)_raw", "\(value)\n") }
    }

    private func formatScale(_ value: Double) -> String {
        let micro = Int((value * 1_000_000).rounded())
        let fraction = String(micro % 1_000_000)
        return "\(micro / 1_000_000)." + String(repeating: "0", count: 6 - fraction.count) + fraction
    }

    private func makeDirectories(_ path: String) throws(CalibrationError) {
        var partial = ""
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            partial += "/" + component
            if mkdir(partial, 0o755) != 0, errno != EEXIST {
                throw .sensor(path: partial, problem: "cannot make the directory: \(String(cString: strerror(errno)))")
            }
        }
    }

    private func put(_ path: String, _ text: String) throws(CalibrationError) {
        do { try writeFileAtomically(Array(text.utf8), toPath: path) } catch {
            throw .sensor(path: path, problem: "\(error)")
        }
    }

    private func removeTree(_ path: String) {
        for entry in directoryEntries(atPath: path) {
            let child = path + "/" + entry
            var info = stat()
            if lstat(child, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR { removeTree(child) } else { unlink(child) }
        }
        rmdir(path)
    }

    // MARK: - The world

    /// The PWM as the files say, with `origin` kept while the period runs on.
    private func readWaveform(previous: PWMWaveform, now: Double) -> PWMWaveform {
        func number(_ name: String) -> Double? { (try? readText(channelDirectory + "/" + name)).flatMap { Double($0) } }
        guard let period = number("period"), let duty = number("duty_cycle"), let enable = number("enable") else { return previous }
        let inversed = (try? readText(channelDirectory + "/polarity")) == "inversed"
        let seconds = period / 1e9
        let fraction = period > 0 ? min(duty / period, 1) : 0
        let enabled = enable != 0 && period > 0
        // A running output keeps its phase through duty changes; a new period or a start restarts it.
        let restarted = !previous.enabled || previous.period != seconds
        return PWMWaveform(period: seconds, duty: inversed ? 1 - fraction : fraction, enabled: enabled, origin: restarted ? now : previous.origin)
    }

    private func readText(_ path: String) throws(CalibrationError) -> String {
        try IIOAccelerometer.readText(path).trimmed
    }

    private func world(watch: Int32) {
        var random = SeededRandom(seed: seed &+ 0x5EED)
        var actuator = preset.makeActuator(random: &random)
        let sensor = preset.sensor
        var clock = HapticInstant.monotonicNow().seconds
        var waveform = readWaveform(previous: .low, now: clock)
        driveLog.withLock { $0.append((clock, waveform)) }
        var nextConversion = clock + sensor.nextInterval(random: &random)
        var events = [UInt8](repeating: 0, count: 4096)
        // The sensor's filter: each conversion is the mean acceleration since the one before,
        // integrated over steps of at most 50 µs (an H-bridge's narrowest pulses are ~80 µs).
        var sum = SIMD3<Double>.zero, span = 0.0
        func advance(to time: Double) {
            while clock < time {
                let next = min(clock + 50e-6, time)
                actuator.advance(from: clock, to: next, drive: waveform)
                sum += actuator.acceleration * (next - clock)
                span += next - clock
                clock = next
            }
        }
        while running.load(ordering: .acquiring) {
            let wait = max(nextConversion - HapticInstant.monotonicNow().seconds, 0)
            // select, for its microsecond timeout (Glibc's module leaves out the GNU ppoll).
            var watched = fd_set()
            withUnsafeMutableBytes(of: &watched) { raw in
                raw.bindMemory(to: UInt.self)[Int(watch) / UInt.bitWidth] |= 1 << (UInt(watch) % UInt(UInt.bitWidth))
            }
            var timeout = timeval(tv_sec: Int(wait), tv_usec: Int((wait - Double(Int(wait))) * 1e6))
            let ready = select(watch + 1, &watched, nil, nil, &timeout)
            let now = HapticInstant.monotonicNow().seconds
            // Conversions due before now happen under the drive that held until now.
            while nextConversion <= now {
                advance(to: nextConversion)
                let mean = span > 0 ? sum / span : actuator.acceleration
                sum = .zero
                span = 0
                if random.uniform() >= sensor.dropProbability { writeConversion(sensor.counts(for: mean, random: &random)) }
                nextConversion += sensor.nextInterval(random: &random)
            }
            if ready > 0 {
                while events.withUnsafeMutableBytes({ read(watch, $0.baseAddress, $0.count) }) > 0 {}
                advance(to: now)
                let next = readWaveform(previous: waveform, now: now)
                if next != waveform {
                    waveform = next
                    driveLog.withLock { log in
                        log.append((now, next))
                        if log.count > 200_000 { log.removeFirst(100_000) }
                    }
                }
            }
        }
    }

    private func writeConversion(_ counts: SIMD3<Int>) {
        for (axis, value) in zip(["x", "y", "z"], [counts.x, counts.y, counts.z]) {
            // Written whole and renamed over, so a reader never sees half a number (no fsync: a
            // sensor's register does not survive a crash either).
            let path = sensorDirectory + "/in_accel_\(axis)_raw", temporary = sensorDirectory + "/.in_accel_\(axis)_raw"
            let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else { continue }
            let bytes = Array("\(value)\n".utf8)
            let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            close(descriptor)
            if written == bytes.count { rename(temporary, path) }
        }
    }
}
