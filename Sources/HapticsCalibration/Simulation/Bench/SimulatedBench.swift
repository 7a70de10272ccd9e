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
public final class SimulatedBench: Bench {
    /// What is on the bench.
    public let preset: BenchPreset
    /// The bench's directory.
    public var directory: String { files.directory }
    /// The preset's name.
    public var name: String { preset.name }
    /// One line for people.
    public var title: String { preset.title }
    /// The id the GPIO backend gives the actuator.
    public var deviceID: String { preset.deviceID }
    /// The sysfs root for `gpio.sysfs-root`.
    public var sysfsRoot: String { directory + "/sys" }
    /// The IIO root for the accelerometer source.
    public var iioRoot: String { files.iioRoot }
    /// The accelerometer's device directory.
    public var sensorDirectory: String { files.sensorDirectory }
    /// The board file.
    public var boardFile: String { directory + "/boards/" + preset.boardName + ".json" }
    /// The PWM channel the actuator hangs on.
    public var channelDirectory: String { sysfsRoot + "/class/pwm/pwmchip0/pwm0" }

    /// The settings that make the GPIO backend drive this bench.
    public var backendSettings: [String: String] { ["gpio.sysfs-root": sysfsRoot, "gpio.boards": boardFile] }

    private let files: BenchFiles
    private let seed: UInt64
    private let runner = BenchWorld()
    private let driveLog = Mutex<[(time: Double, waveform: PWMWaveform)]>([])

    /// Lays the bench out in a new directory under `parent` (by default `/dev/shm`, a memory file
    /// system like sysfs, else `$TMPDIR` or `/tmp`). `seed` fixes the sensor's noise and timing and
    /// the motor's resting angle.
    /// - Throws: ``CalibrationError/sensor(path:problem:)`` when a file cannot be written.
    public init(preset: BenchPreset, seed: UInt64 = 1, parent: String? = nil) throws(CalibrationError) {
        self.preset = preset
        self.seed = seed
        files = try BenchFiles(name: preset.name, sensor: preset.sensor, seed: seed, parent: parent)
        do { try layOut() } catch {
            files.remove()
            throw error
        }
    }

    deinit { stop() }

    /// Starts following the PWM and writing the sensor.
    /// - Throws: ``CalibrationError/sensor(path:problem:)`` when inotify or the thread cannot start.
    public func start() throws(CalibrationError) {
        let channel = channelDirectory
        try runner.start(
            directory: directory,
            open: { () throws(CalibrationError) -> Int32 in
                let watch = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
                guard watch >= 0, inotify_add_watch(watch, channel, UInt32(IN_CLOSE_WRITE)) >= 0 else {
                    let code = errno
                    if watch >= 0 { close(watch) }
                    throw .sensor(path: channel, problem: "cannot watch the PWM channel: \(String(cString: strerror(code)))")
                }
                return watch
            },
            world: { [self] watch in world(watch: watch) }, close: { watch in _ = close(watch) })
    }

    /// Stops the world (the files stay as they are).
    public func stop() { runner.stop() }

    /// Removes the bench's directory (after ``stop()``).
    public func remove() {
        stop()
        files.remove()
    }

    /// Every waveform the PWM took, with the time it started (seconds on `CLOCK_MONOTONIC`).
    public var drives: [(time: Double, waveform: PWMWaveform)] { driveLog.withLock { $0 } }

    // MARK: - The tree

    private func layOut() throws(CalibrationError) {
        let chip = sysfsRoot + "/class/pwm/pwmchip0"
        for path in [chip, directory + "/boards"] { try files.makeDirectories(path) }
        try files.put(chip + "/npwm", "\(preset.pwmChannels)\n")
        try files.put(chip + "/export", "")
        try files.put(chip + "/unexport", "")
        for channel in 0..<preset.pwmChannels {
            // Exported already, as after `echo N > export` on a real chip.
            let path = chip + "/pwm\(channel)"
            try files.makeDirectories(path)
            try files.put(path + "/period", "0\n")
            try files.put(path + "/duty_cycle", "0\n")
            try files.put(path + "/polarity", "normal\n")
            try files.put(path + "/enable", "0\n")
        }
        try files.put(boardFile, preset.board + "\n")
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
        var clock = HapticInstant.monotonicNow().seconds
        var waveform = readWaveform(previous: .low, now: clock)
        driveLog.withLock { $0.append((clock, waveform)) }
        var conversions = SensorConversions(files: files, seed: seed &+ 0x5EED &+ 1, from: clock)
        var events = [UInt8](repeating: 0, count: 4096)
        // Steps of at most 50 µs (an H-bridge's narrowest pulses are ~80 µs).
        func advance(to time: Double) {
            while clock < time {
                let next = min(clock + 50e-6, time)
                actuator.advance(from: clock, to: next, drive: waveform)
                conversions.accumulate(actuator.acceleration, over: next - clock)
                clock = next
            }
        }
        while runner.isRunning {
            let ready = BenchWorld.waitReadable(watch, until: conversions.next)
            let now = HapticInstant.monotonicNow().seconds
            // Conversions due before now happen under the drive that held until now.
            while conversions.next <= now {
                advance(to: conversions.next)
                conversions.convert(current: actuator.acceleration)
            }
            if ready {
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
}
