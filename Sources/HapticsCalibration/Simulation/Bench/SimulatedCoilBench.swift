import Haptics
import HapticsSupport
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A sound-card bench in a directory: a voice coil behind an amplifier, for the alsa backend and
/// the accelerometer source to meet as they would meet a sound card and a sensor.
///
/// - `alsa/NAME.json`: the preset's ALSA device file (point `alsa.devices` at `alsa`,
///   ``backendSettings``), whose PCM is alsa-lib's `file` plugin writing raw samples to
/// - `card.fifo`: a named pipe the bench reads: the card's output, sample by sample;
/// - `iio/iio:device0`: the ADXL345 (``BenchFiles``), as on the GPIO benches.
///
/// **The card's clock.** The `file` plugin has no clock of its own; the backend paces it in real
/// time, a buffer ahead, and alsa-lib passes what is written on to the pipe a buffer at a time. The
/// bench plays each block it reads at once (``playbackDelay`` after it came, to absorb the
/// reader's own scheduling) or, while earlier samples are still playing, right after them: a card
/// that starts on its first samples and plays on at its rate. A block that comes after the
/// samples before it have run out leaves the silence between (an underrun).
///
/// A thread advances the coil through every sample held for its period (a DAC's zero-order hold)
/// with the amplifier's voltage, in real time on `CLOCK_MONOTONIC`, and writes the sensor's
/// conversions as the GPIO bench does. Nothing here knows what the calibration assumes.
public final class SimulatedCoilBench: Bench {
    /// What is on the bench.
    public let preset: CoilBenchPreset
    /// How long after a block comes from the pipe the bench starts playing it, seconds (when the
    /// samples before it have run out).
    public static let playbackDelay = 0.0005

    /// The bench's directory.
    public var directory: String { files.directory }
    /// The preset's name.
    public var name: String { preset.name }
    /// One line for people.
    public var title: String { preset.title }
    /// The id the alsa backend gives the coil.
    public var deviceID: String { preset.deviceID }
    /// The IIO root for the accelerometer source.
    public var iioRoot: String { files.iioRoot }
    /// The directory of device files for `alsa.devices`.
    public var deviceDirectory: String { directory + "/alsa" }
    /// The named pipe the card's output goes to.
    public var fifo: String { directory + "/card.fifo" }
    /// The settings that make the alsa backend drive this bench (and no pad it may find).
    public var backendSettings: [String: String] { ["alsa.devices": deviceDirectory, "alsa.dualsense": "off"] }

    /// What the card put out.
    public struct CardOutput: Sendable, Hashable {
        /// Frames played.
        public var frames = 0
        /// The largest sample's magnitude, 0…1 of the card's full scale.
        public var peak = 0.0
        /// The largest magnitude in the last block the card got, 0…1 (0: it was left silent).
        public var lastBlockPeak = 0.0
    }

    /// What the card put out so far.
    public var output: CardOutput { played.withLock { $0 } }

    private let files: BenchFiles
    private let seed: UInt64
    private let runner = BenchWorld()
    private let played = Mutex(CardOutput())

    /// Lays the bench out in a new directory under `parent` (by default `/dev/shm`); `seed` fixes
    /// the sensor's noise and timing.
    /// - Throws: ``CalibrationError/sensor(path:problem:)`` when a file or the pipe cannot be made.
    public init(preset: CoilBenchPreset, seed: UInt64 = 1, parent: String? = nil) throws(CalibrationError) {
        self.preset = preset
        self.seed = seed
        files = try BenchFiles(name: preset.name, sensor: preset.sensor, seed: seed, parent: parent)
        do throws(CalibrationError) {
            try files.makeDirectories(directory + "/alsa")
            try files.put(deviceDirectory + "/\(preset.deviceName).json", preset.deviceFile(fifo: directory + "/card.fifo") + "\n")
            guard mkfifo(directory + "/card.fifo", 0o600) == 0 else {
                throw .sensor(path: directory + "/card.fifo", problem: "cannot make the named pipe: \(String(cString: strerror(errno)))")
            }
        } catch {
            files.remove()
            throw error
        }
    }

    deinit { stop() }

    /// Starts reading the card's output and writing the sensor.
    /// - Throws: ``CalibrationError/sensor(path:problem:)`` when the pipe or the thread cannot be opened.
    public func start() throws(CalibrationError) {
        let fifo = self.fifo
        try runner.start(
            directory: directory,
            open: { () throws(CalibrationError) -> (reader: Int32, holder: Int32) in
                // The reading end first (a pipe's writing end opens without blocking only once it
                // has a reader), then a writing end the bench holds itself, so the pipe never reads
                // as closed while the backend has its PCM closed: alsa-lib opens it with the PCM.
                let reader = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
                let holder = reader >= 0 ? open(fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC) : -1
                guard reader >= 0, holder >= 0 else {
                    let code = errno
                    if reader >= 0 { close(reader) }
                    throw .sensor(path: fifo, problem: "cannot open the card's pipe: \(String(cString: strerror(code)))")
                }
                return (reader, holder)
            },
            world: { [self] pipe in world(reader: pipe.reader) },
            close: { pipe in
                close(pipe.reader)
                close(pipe.holder)
            })
    }

    /// Stops the world (the files stay as they are).
    public func stop() { runner.stop() }

    /// Removes the bench's directory (after ``stop()``).
    public func remove() {
        stop()
        files.remove()
    }

    // MARK: - The world

    /// Samples waiting to play: from ``start`` seconds on, one every 1/rate.
    private struct Queue {
        var samples: [Double] = []
        var head = 0
        /// When `samples[head]` starts, monotonic seconds.
        var start = 0.0
        var isEmpty: Bool { head == samples.count }

        /// Appends a block that came at `arrival`: played at once (after `delay`) when the samples
        /// before it have run out by then, else right after them.
        mutating func append(_ block: [Double], arrival: Double, delay: Double, rate: Double, now clock: Double) {
            let end = start + Double(samples.count - head) / rate
            if isEmpty || end < arrival + delay {
                if isEmpty {
                    samples.removeAll(keepingCapacity: true)
                    head = 0
                    start = max(arrival + delay, clock)
                } else {
                    // An underrun: silence until the block plays.
                    samples.append(contentsOf: repeatElement(0, count: Int(((arrival + delay - end) * rate).rounded())))
                }
            }
            samples.append(contentsOf: block)
        }

        mutating func pop(rate: Double) {
            head += 1
            start += 1 / rate
            if head >= 48_000 {
                samples.removeFirst(head)
                head = 0
            }
        }
    }

    private func world(reader: Int32) {
        let rate = Double(preset.rate)
        var coil = LinearResonator(parameters: preset.coil)
        var clock = HapticInstant.monotonicNow().seconds
        var conversions = SensorConversions(files: files, seed: seed &+ 0x5EED, from: clock)
        var queue = Queue()
        var bytes = [UInt8](repeating: 0, count: 65_536)
        var carried: UInt8?
        let volts = preset.fullScaleVoltage / 32_767

        // Each sample held for its period; silence in steps of at most 50 µs.
        func advance(to time: Double) {
            while clock < time {
                var voltage = 0.0
                var stepEnd = min(clock + 50e-6, time)
                if !queue.isEmpty {
                    if clock + 1e-9 < queue.start {
                        stepEnd = min(stepEnd, queue.start)
                    } else {
                        voltage = queue.samples[queue.head] * volts
                        stepEnd = min(queue.start + 1 / rate, time)
                    }
                }
                let h = stepEnd - clock
                if h > 0 {
                    coil.advance(by: h, voltage: voltage)
                    conversions.accumulate(coil.acceleration, over: h)
                }
                clock = max(stepEnd, clock)
                if !queue.isEmpty, clock + 1e-9 >= queue.start + 1 / rate { queue.pop(rate: rate) }
            }
        }

        while runner.isRunning {
            let ready = BenchWorld.waitReadable(reader, until: conversions.next)
            let now = HapticInstant.monotonicNow().seconds
            while conversions.next <= now {
                advance(to: conversions.next)
                conversions.convert(current: coil.acceleration)
            }
            guard ready else { continue }
            advance(to: now)
            var block: [Double] = []
            while true {
                let count = bytes.withUnsafeMutableBytes { read(reader, $0.baseAddress, $0.count) }
                guard count > 0 else { break }
                // Signed 16-bit little-endian, one channel (the PCM's first format).
                var index = 0
                if let low = carried {
                    block.append(Double(Int16(bitPattern: UInt16(low) | UInt16(bytes[0]) << 8)))
                    carried = nil
                    index = 1
                }
                while index + 1 < count {
                    block.append(Double(Int16(bitPattern: UInt16(bytes[index]) | UInt16(bytes[index + 1]) << 8)))
                    index += 2
                }
                if index < count { carried = bytes[index] }
            }
            guard !block.isEmpty else { continue }
            let peak = block.reduce(0) { max($0, abs($1)) } / 32_767
            played.withLock { played in
                played.frames += block.count
                played.peak = max(played.peak, peak)
                played.lastBlockPeak = peak
            }
            queue.append(block, arrival: now, delay: Self.playbackDelay, rate: rate, now: clock)
        }
    }
}
