import Haptics
import HapticsSupport
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A simulated bench, whatever drives its actuator: a directory the backend and the accelerometer
/// source meet as they would meet the kernel's files, and a world that runs in real time.
public protocol Bench: AnyObject, Sendable {
    /// The preset's name (`hbridge-lra`, `voice-coil`).
    var name: String { get }
    /// One line for people.
    var title: String { get }
    /// The bench's directory.
    var directory: String { get }
    /// The IIO root for the accelerometer source (`--iio-root`).
    var iioRoot: String { get }
    /// The settings that make the backend drive this bench's actuator.
    var backendSettings: [String: String] { get }
    /// The id the backend gives the actuator.
    var deviceID: String { get }
    /// Starts the world: the actuator follows its drive, the sensor converts.
    func start() throws(CalibrationError)
    /// Stops the world (the files stay as they are).
    func stop()
    /// Stops the world and removes the directory.
    func remove()
}

/// The names of every bench preset: the GPIO boards (``BenchPreset``) and the sound-card coils
/// (``CoilBenchPreset``).
public enum Benches {
    /// Every preset's name, GPIO boards first.
    public static var names: [String] { BenchPreset.all.map(\.name) + CoilBenchPreset.all.map(\.name) }

    /// Lays out the bench named `name` in a new directory, or nil when no preset has that name.
    public static func make(_ name: String) throws(CalibrationError) -> (any Bench)? {
        if let preset = BenchPreset.named(name) { return try SimulatedBench(preset: preset) }
        if let preset = CoilBenchPreset.named(name) { return try SimulatedCoilBench(preset: preset) }
        return nil
    }
}

/// The files of a bench: its directory (by default on `/dev/shm`, a memory file system like
/// sysfs), and the ADXL345 the kernel's IIO driver would show under `iio/iio:device0`, written
/// one conversion at a time.
struct BenchFiles: Sendable {
    /// The bench's directory.
    let directory: String
    /// The accelerometer.
    let sensor: SimulatedAccelerometer

    var iioRoot: String { directory + "/iio" }
    var sensorDirectory: String { iioRoot + "/iio:device0" }

    /// Makes a new directory `haptics-bench-NAME-XXXXXX` under `parent` (by default `/dev/shm`, else
    /// `$TMPDIR` or `/tmp`) and lays the sensor out in it, at rest (`seed` fixes its noise).
    init(name: String, sensor: SimulatedAccelerometer, seed: UInt64, parent: String?) throws(CalibrationError) {
        // A disk file system makes every conversion (a new file renamed over the old) cost an inode
        // allocation; at hundreds of conversions a second ext4 spends milliseconds on each.
        let base = parent ?? (access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp")
        var template = Array("\(base)/haptics-bench-\(name)-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw .sensor(path: base, problem: "cannot make a bench directory: \(String(cString: strerror(errno)))")
        }
        directory = String(cString: made)
        self.sensor = sensor
        do throws(CalibrationError) {
            try makeDirectories(sensorDirectory)
            try put(sensorDirectory + "/name", "adxl345\n")
            try put(sensorDirectory + "/in_accel_scale", "\(Self.formatScale(sensor.scale))\n")
            try put(sensorDirectory + "/in_accel_sampling_frequency", "\(Int(sensor.outputDataRate.rounded())).000000\n")
            var random = SeededRandom(seed: seed)
            let rest = sensor.counts(for: .zero, random: &random)
            for (axis, value) in zip(["x", "y", "z"], [rest.x, rest.y, rest.z]) { try put(sensorDirectory + "/in_accel_\(axis)_raw", "\(value)\n") }
        } catch {
            // Nothing half laid out is left behind.
            remove()
            throw error
        }
    }

    private static func formatScale(_ value: Double) -> String {
        let micro = Int((value * 1_000_000).rounded())
        let fraction = String(micro % 1_000_000)
        return "\(micro / 1_000_000)." + String(repeating: "0", count: 6 - fraction.count) + fraction
    }

    func makeDirectories(_ path: String) throws(CalibrationError) {
        var partial = ""
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            partial += "/" + component
            if mkdir(partial, 0o755) != 0, errno != EEXIST {
                throw .sensor(path: partial, problem: "cannot make the directory: \(String(cString: strerror(errno)))")
            }
        }
    }

    func put(_ path: String, _ text: String) throws(CalibrationError) {
        do { try writeFileAtomically(Array(text.utf8), toPath: path) } catch {
            throw .sensor(path: path, problem: "\(error)")
        }
    }

    /// Removes the directory and everything in it.
    func remove() { Self.removeTree(directory) }

    private static func removeTree(_ path: String) {
        for entry in directoryEntries(atPath: path) {
            let child = path + "/" + entry
            var info = stat()
            if lstat(child, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR { removeTree(child) } else { unlink(child) }
        }
        rmdir(path)
    }

    /// Writes one conversion's raw counts, each axis whole and renamed over, so a reader never sees
    /// half a number (no fsync: a sensor's register does not survive a crash either).
    func writeConversion(_ counts: SIMD3<Int>) {
        for (axis, value) in zip(["x", "y", "z"], [counts.x, counts.y, counts.z]) {
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

/// The sensor's side of a bench's world: its (uneven) conversions, each the mean acceleration since
/// the one before (``SimulatedAccelerometer``'s filter), with noise, and the odd one dropped.
struct SensorConversions {
    let files: BenchFiles
    private var random: SeededRandom
    /// When the next conversion is due, monotonic seconds.
    private(set) var next: Double
    private var sum = SIMD3<Double>.zero
    private var span = 0.0

    init(files: BenchFiles, seed: UInt64, from now: Double) {
        self.files = files
        random = SeededRandom(seed: seed)
        next = now + files.sensor.nextInterval(random: &random)
    }

    /// Adds `seconds` of `acceleration` (g) to the conversion under way.
    mutating func accumulate(_ acceleration: SIMD3<Double>, over seconds: Double) {
        sum += acceleration * seconds
        span += seconds
    }

    /// Ends the conversion due at ``next`` (the world has been advanced to it; `current` is the
    /// acceleration there, for a conversion with nothing accumulated), writes it unless the sensor
    /// drops it, and schedules the next.
    mutating func convert(current: SIMD3<Double>) {
        let mean = span > 0 ? sum / span : current
        sum = .zero
        span = 0
        let sensor = files.sensor
        if random.uniform() >= sensor.dropProbability { files.writeConversion(sensor.counts(for: mean, random: &random)) }
        next += sensor.nextInterval(random: &random)
    }
}

/// The thread a bench's world runs on. The bench is the physical world: it must follow a write
/// when the write is made, however busy the code under test keeps the machine, so it runs above
/// every real-time thread of that code (the engine's scheduler and the sample stream 20, the GPIO
/// watchdog 21).
final class BenchWorld: Sendable {
    private let running = Atomic<Bool>(false)
    private let worker = Mutex<PosixThread?>(nil)

    /// Whether the world should go on (its loop's condition).
    var isRunning: Bool { running.load(ordering: .acquiring) }

    /// Starts the world: `open` makes what it needs (descriptors), `world` runs on the thread and
    /// `close` releases them after it, or at once when the thread cannot start. Does nothing when
    /// the world already runs.
    /// - Throws: what `open` throws, or ``CalibrationError/sensor(path:problem:)`` naming `directory`.
    func start<Resources: Sendable>(
        directory: String, open: () throws(CalibrationError) -> Resources, world: @escaping @Sendable (Resources) -> Void,
        close: @escaping @Sendable (Resources) -> Void
    ) throws(CalibrationError) {
        guard !running.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let resources: Resources
        do throws(CalibrationError) { resources = try open() } catch {
            running.store(false, ordering: .releasing)
            throw error
        }
        do {
            let thread = try PosixThread.start(name: "haptics-bench") {
                PosixThread.requestRealtimeForCurrentThread(priority: 30)
                world(resources)
                close(resources)
            }
            worker.withLock { $0 = thread }
        } catch {
            close(resources)
            running.store(false, ordering: .releasing)
            throw .sensor(path: directory, problem: "\(error)")
        }
    }

    /// Waits until `descriptor` can be read or the monotonic clock reads `deadline` (seconds);
    /// whether it can be read. Through select, for its microsecond timeout (Glibc's module leaves
    /// out the GNU ppoll).
    static func waitReadable(_ descriptor: Int32, until deadline: Double) -> Bool {
        let wait = max(deadline - HapticInstant.monotonicNow().seconds, 0)
        var watched = fd_set()
        withUnsafeMutableBytes(of: &watched) { raw in
            raw.bindMemory(to: UInt.self)[Int(descriptor) / UInt.bitWidth] |= 1 << (UInt(descriptor) % UInt(UInt.bitWidth))
        }
        var timeout = timeval(tv_sec: Int(wait), tv_usec: Int((wait - Double(Int(wait))) * 1e6))
        return select(descriptor + 1, &watched, nil, nil, &timeout) > 0
    }

    /// Stops the world and waits for its thread.
    func stop() {
        running.store(false, ordering: .releasing)
        let thread = worker.withLock { thread -> PosixThread? in
            defer { thread = nil }
            return thread
        }
        thread?.join()
    }
}
