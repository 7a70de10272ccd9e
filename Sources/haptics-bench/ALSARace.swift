import ArgumentParser
import Foundation
import Haptics
import HapticsSupport
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// `haptics-bench alsa-race`: how long a tap takes from the trigger call to its first non-zero
/// sample arriving at the far side of a sound card, on `snd-aloop` (two playback substreams, each
/// captured on its loopback twin), measured alternately in rounds in one process, for:
/// - swift-haptics: `ImpactFeedbackGenerator.impactOccurred()` on a prepared coil (`libhaptics-alsa.so`
///   on substream 0; the stream runs, writing silence, while the device is prepared);
/// - a bare client: a thread of its own blocked in `snd_pcm_writei` on substream 1, writing
///   silence period after period with the same period settings (5 ms × 3, start threshold and
///   `avail_min` one period, as the backend sets them); the trigger marks the next period to carry
///   the burst. That is what a game's audio thread does when it mixes a sound in.
///
/// Both captures run the whole time on threads of their own, with the playbacks' period settings
/// (snd-aloop gives both sides of a loopback the same); the first non-zero
/// frame after a silence is stamped with the time its period was read, less the frames after it in
/// that period, the same way for both. Then a stream plays a continuous event for `--xrun-seconds`
/// while a thread spins on the other CPU, and its underruns are counted.
///
/// Runs inside the VM rig (`snd-aloop` loaded as card `BLoop` with two substreams):
/// `Scripts/bench-alsa` builds it in release mode, boots the VM and runs it. alsa-lib is loaded
/// with `dlopen`, so the bench links no hardware library.
enum ALSARace {
    /// `--rounds N`, `--xrun-seconds S`.
    struct Options: ParsableArguments {
        @Option(help: "Rounds; each client triggers once per round, the clients alternated.") var rounds = 100
        @Option(help: "Seconds of the xrun count (a continuous event with the other CPU busy); 0 skips it.") var xrunSeconds = 60.0

        func validate() throws {
            guard rounds > 0 else { throw ValidationError("--rounds takes a positive number, not \(rounds)") }
            guard xrunSeconds.isFinite, (0...3600).contains(xrunSeconds) else { throw ValidationError("--xrun-seconds takes 0…3600, not \(xrunSeconds)") }
        }
    }

    static let card = "BLoop"
    static let rate = 48_000
    static let periodFrames = 240
    static let periods = 3

    static func run(_ options: Options) throws {
        print("haptics-bench alsa-race — \(ProcessInfo.processInfo.activeProcessorCount) CPU(s), kernel \(HIDRace.kernelRelease()), \(options.rounds) rounds\n")
        let alsa = try AlsaLib()
        // Captures first: snd-aloop gives the playback side the capture's format.
        let captures = try (0..<2).map { substream in try Capture(alsa, device: "hw:CARD=\(card),DEV=1,SUBDEV=\(substream)") }
        defer { captures.forEach { $0.stop() } }

        let directory = NSTemporaryDirectory() + "haptics-bench-alsa-\(getpid())"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try """
            {"format": 1, "name": "race", "description": "A coil on snd-aloop", "pcm": "hw:CARD=\(card),DEV=0,SUBDEV=0", "channels": 2,
             "rate_hz": \(rate), "period_us": \(periodFrames * 1_000_000 / rate), "periods": \(periods),
             "actuators": [{"name": "coil", "channel": 1, "actuator": "voice-coil", "resonant_frequency_hz": 150, "frequency_min_hz": 75, "frequency_max_hz": 300}]}
            """.write(toFile: directory + "/race.json", atomically: true, encoding: .utf8)
        let system = HapticSystem(configuration: .init(settings: ["alsa.devices": directory, "alsa.dualsense": "off", "recording.devices": "none"], daemon: .never))
        let device = try system.openDevice("alsa:race")
        defer { device.close() }
        let engine = try HapticEngine(devices: [device], profileStore: nil, policy: HapticPolicy())
        engine.isAutoShutdownEnabled = false
        try engine.start()
        let generator = ImpactFeedbackGenerator(style: .heavy, engine: engine)
        let bare = try BareWriter(alsa, device: "hw:CARD=\(card),DEV=0,SUBDEV=1")
        defer { bare.stop() }
        print("swift-haptics: alsa:race on substream 0; bare snd_pcm_writei on substream 1; both \(periods) × \(periodFrames) frames at \(rate) Hz\n")

        func ours() -> UInt64? {
            generator.prepare()
            HIDRace.pause(0.05)
            let start = captures[0].watch.arm { _ in true }
            generator.impactOccurred()
            return captures[0].watch.wait(timeout: 1).map { $0 &- start }
        }
        func bareRound() -> UInt64? {
            let start = captures[1].watch.arm { _ in true }
            bare.trigger()
            return captures[1].watch.wait(timeout: 1).map { $0 &- start }
        }
        for _ in 0..<5 {
            _ = ours()
            HIDRace.pause(0.15)
            _ = bareRound()
            HIDRace.pause(0.15)
        }
        let underrunsBefore = (device.actuator as? PluginActuator)?.underruns ?? 0
        let bareUnderrunsBefore = bare.underruns
        var samples: [[Double]] = [[], []]
        var missed = [0, 0]
        for round in 0..<options.rounds {
            // Alternate which goes first, so neither always follows the other's rest.
            for client in round.isMultiple(of: 2) ? [0, 1] : [1, 0] {
                if let latency = client == 0 ? ours() : bareRound() { samples[client].append(Double(latency) / 1e3) } else { missed[client] += 1 }
                HIDRace.pause(0.15)
            }
        }
        let names = ["swift-haptics: impactOccurred(), prepared", "bare snd_pcm_writei, next period"]
        let results = RaceResults(
            title: "Trigger → first non-zero sample at the loopback's capture (\(rate / 1000) kHz, \(periods) × \(periodFrames / (rate / 1000)) ms)", names: names,
            samples: samples, missed: missed, bareClient: names[1], sdlClient: "")
        let ratio = results.stats[names[0]]!.p50 / results.bare
        print("goal ≤ 1.2× the bare write: \(String(format: "%.2f", ratio))× (\(ratio <= 1.2 ? "met" : "not met"))")
        print("underruns during the race: swift-haptics \(((device.actuator as? PluginActuator)?.underruns ?? 0) - underrunsBefore), bare \(bare.underruns - bareUnderrunsBefore)\n")

        guard options.xrunSeconds > 0 else { return }
        // The bare client keeps streaming beside it, so the two are counted in the same window.
        let spinning = Atomic<Bool>(true)
        let spinner = try PosixThread.start(name: "race-spin") {
            var x = 0.0
            while spinning.load(ordering: .relaxed) { x = x * 1.000001 + 1 }
            _ = x
        }
        // Back-to-back events of at most 10 s: one continuous event lasts at most 30 s
        // (HapticEvent.maximumContinuousDuration), and a longer run would measure a stream that ended.
        let pieces = Int((options.xrunSeconds / 10).rounded(.up))
        let player = try engine.makePlayer(
            with: try HapticPattern(
                events: (0..<pieces).map { piece in
                    HapticEvent(
                        eventType: .hapticContinuous,
                        parameters: [.init(parameterID: .hapticIntensity, value: 0.8), .init(parameterID: .hapticSharpness, value: 0.5)],
                        relativeTime: Double(piece) * 10, duration: min(10, options.xrunSeconds - Double(piece) * 10))
                }))
        let before = (device.actuator as? PluginActuator)?.underruns ?? 0
        let bareBefore = bare.underruns
        try player.start(atTime: 0)
        HIDRace.pause(0.5)
        let threadBefore = WaveformBenchmarks.threadCPU("haptics-samples"), start = Monotonic.now()
        HIDRace.pause(options.xrunSeconds - 0.5)
        let share = (WaveformBenchmarks.threadCPU("haptics-samples") - threadBefore) / Double(Monotonic.now() - start)
        spinning.store(false, ordering: .relaxed)
        spinner.join()
        let underruns = ((device.actuator as? PluginActuator)?.underruns ?? 0) - before
        let bareUnderruns = bare.underruns - bareBefore
        table(
            "One stream over \(String(format: "%.0f", options.xrunSeconds)) s, a thread spinning beside it (the bare client streaming on the other substream)",
            ["period", "periods", "underruns", "the bare client's, same window", "goal", "stream thread CPU (schedstat)"],
            [["\(periodFrames * 1000 / rate) ms", "\(periods)", "\(underruns)", "\(bareUnderruns)", "0 at ≤ 5 ms", String(format: "%.2f %%", share * 100)]])
        engine.stop()
    }
}

/// alsa-lib, loaded with `dlopen`: the calls a bare client makes.
final class AlsaLib: @unchecked Sendable {
    typealias Open = @convention(c) (UnsafeMutablePointer<OpaquePointer?>, UnsafePointer<CChar>, Int32, Int32) -> Int32
    typealias Params = @convention(c) (UnsafeMutablePointer<OpaquePointer?>) -> Int32
    typealias Free = @convention(c) (OpaquePointer?) -> Void
    typealias Apply = @convention(c) (OpaquePointer?, OpaquePointer?) -> Int32
    typealias SetValue = @convention(c) (OpaquePointer?, OpaquePointer?, UInt32) -> Int32
    typealias SetRate = @convention(c) (OpaquePointer?, OpaquePointer?, UInt32, Int32) -> Int32
    typealias SetPeriod = @convention(c) (OpaquePointer?, OpaquePointer?, UnsafeMutablePointer<UInt>, UnsafeMutablePointer<Int32>?) -> Int32
    typealias SetBuffer = @convention(c) (OpaquePointer?, OpaquePointer?, UnsafeMutablePointer<UInt>) -> Int32
    typealias SetFrames = @convention(c) (OpaquePointer?, OpaquePointer?, UInt) -> Int32
    typealias Transfer = @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, UInt) -> Int
    typealias Recover = @convention(c) (OpaquePointer?, Int32, Int32) -> Int32
    typealias Close = @convention(c) (OpaquePointer?) -> Int32

    let open: Open, hwMalloc: Params, hwFree: Free, hwAny: Apply, setAccess: SetValue, setFormat: SetValue, setChannels: SetValue
    let setRate: SetRate, setPeriod: SetPeriod, setBuffer: SetBuffer, hwParams: Apply
    let swMalloc: Params, swFree: Free, swCurrent: Apply, setStart: SetFrames, setAvailMin: SetFrames, swParams: Apply
    let writei: Transfer, readi: Transfer, recover: Recover, close: Close

    init() throws {
        guard let library = dlopen("libasound.so.2", RTLD_NOW) else { throw BenchError("alsa-race needs alsa-lib (libasound2): \(String(cString: dlerror()))") }
        func symbol<T>(_ name: String) throws -> T {
            guard let pointer = dlsym(library, name) else { throw BenchError("alsa-lib has no \(name)") }
            return unsafeBitCast(pointer, to: T.self)
        }
        open = try symbol("snd_pcm_open")
        hwMalloc = try symbol("snd_pcm_hw_params_malloc")
        hwFree = try symbol("snd_pcm_hw_params_free")
        hwAny = try symbol("snd_pcm_hw_params_any")
        setAccess = try symbol("snd_pcm_hw_params_set_access")
        setFormat = try symbol("snd_pcm_hw_params_set_format")
        setChannels = try symbol("snd_pcm_hw_params_set_channels")
        setRate = try symbol("snd_pcm_hw_params_set_rate")
        setPeriod = try symbol("snd_pcm_hw_params_set_period_size_near")
        setBuffer = try symbol("snd_pcm_hw_params_set_buffer_size_near")
        hwParams = try symbol("snd_pcm_hw_params")
        swMalloc = try symbol("snd_pcm_sw_params_malloc")
        swFree = try symbol("snd_pcm_sw_params_free")
        swCurrent = try symbol("snd_pcm_sw_params_current")
        setStart = try symbol("snd_pcm_sw_params_set_start_threshold")
        setAvailMin = try symbol("snd_pcm_sw_params_set_avail_min")
        swParams = try symbol("snd_pcm_sw_params")
        writei = try symbol("snd_pcm_writei")
        readi = try symbol("snd_pcm_readi")
        recover = try symbol("snd_pcm_recover")
        close = try symbol("snd_pcm_close")
    }

    /// Opens `name` (`capture`: the capture stream) as 2 channels of S16 at 48 kHz, interleaved, with
    /// `period` frames a period and `periods` of them, the start threshold and `avail_min` one period.
    func openPCM(_ name: String, capture: Bool, period: Int, periods: Int) throws -> OpaquePointer {
        var pcm: OpaquePointer?
        var rc = open(&pcm, name, capture ? 1 : 0, 0)
        guard rc == 0, let pcm else { throw BenchError("snd_pcm_open \(name): \(rc) (is snd-aloop loaded as card \(ALSARace.card) with 2 substreams?)") }
        var hw: OpaquePointer?
        _ = hwMalloc(&hw)
        defer { hwFree(hw) }
        var periodFrames = UInt(period), bufferFrames = UInt(period * periods)
        // SND_PCM_ACCESS_RW_INTERLEAVED 3, SND_PCM_FORMAT_S16_LE 2.
        rc = hwAny(pcm, hw)
        if rc == 0 { rc = setAccess(pcm, hw, 3) }
        if rc == 0 { rc = setFormat(pcm, hw, 2) }
        if rc == 0 { rc = setChannels(pcm, hw, 2) }
        if rc == 0 { rc = setRate(pcm, hw, UInt32(ALSARace.rate), 0) }
        if rc == 0 { rc = setPeriod(pcm, hw, &periodFrames, nil) }
        if rc == 0 { rc = setBuffer(pcm, hw, &bufferFrames) }
        if rc == 0 { rc = hwParams(pcm, hw) }
        guard rc == 0 else {
            _ = close(pcm)
            throw BenchError("hw params of \(name): \(rc)")
        }
        var sw: OpaquePointer?
        _ = swMalloc(&sw)
        defer { swFree(sw) }
        _ = swCurrent(pcm, sw)
        _ = setStart(pcm, sw, UInt(period))
        _ = setAvailMin(pcm, sw, UInt(period))
        _ = swParams(pcm, sw)
        print("\(name) (\(capture ? "capture" : "playback")): period \(periodFrames) frames, buffer \(bufferFrames) frames")
        return pcm
    }
}

/// An open PCM handed to the one thread that uses and closes it.
struct PCMHandle: @unchecked Sendable {
    let pointer: OpaquePointer
    init(_ pointer: OpaquePointer) { self.pointer = pointer }
}

/// A capture read a period at a time on a thread of its own; each first non-zero frame after 20 ms
/// of silence is recorded with the time it arrived (the read's return, less the frames after it).
final class Capture: @unchecked Sendable {
    let watch = ArrivalWatch<Int>()
    private let flags = RaceFlags()
    private var thread: PosixThread?

    init(_ alsa: AlsaLib, device: String) throws {
        // The playback's period and buffer: snd-aloop gives the second side of a loopback the
        // first side's (a 1 ms capture would have made every playback a 1 ms × 20 one).
        let period = ALSARace.periodFrames
        let handle = PCMHandle(try alsa.openPCM(device, capture: true, period: period, periods: ALSARace.periods))
        let watch = self.watch, flags = self.flags
        thread = try PosixThread.start(name: "race-capture") {
            let pcm = handle.pointer
            _ = PosixThread.requestRealtimeForCurrentThread(priority: 30)
            var buffer = [Int16](repeating: 0, count: period * 2)
            var silent = Int.max
            while flags.running.load(ordering: .relaxed) {
                let read = buffer.withUnsafeMutableBytes { alsa.readi(pcm, $0.baseAddress, UInt(period)) }
                let now = Monotonic.now()
                guard read > 0 else {
                    if read < 0 { _ = alsa.recover(pcm, Int32(read), 1) }
                    continue
                }
                for frame in 0..<read {
                    if buffer[frame * 2] != 0 || buffer[frame * 2 + 1] != 0 {
                        if silent >= ALSARace.rate / 50 {
                            watch.record(frame, at: now &- UInt64(read - frame) * 1_000_000_000 / UInt64(ALSARace.rate))
                        }
                        silent = 0
                    } else if silent < Int.max {
                        silent += 1
                    }
                }
            }
            _ = alsa.close(pcm)
        }
    }

    func stop() {
        flags.running.store(false, ordering: .relaxed)
        thread?.join()
        thread = nil
    }
}

/// What a race thread and its owner share.
final class RaceFlags: Sendable {
    /// Cleared to end the thread.
    let running = Atomic<Bool>(true)
    /// A trigger not yet taken by the thread.
    let pending = Atomic<Bool>(false)
    /// Underruns the thread recovered.
    let underruns = Atomic<Int>(0)
}

/// A bare playback client: a thread blocked in `snd_pcm_writei`, a period of silence at a time;
/// after ``trigger()`` the next period starts a 20 ms burst at full scale.
final class BareWriter: @unchecked Sendable {
    private let flags = RaceFlags()
    private var thread: PosixThread?

    init(_ alsa: AlsaLib, device: String) throws {
        let period = ALSARace.periodFrames
        let handle = PCMHandle(try alsa.openPCM(device, capture: false, period: period, periods: ALSARace.periods))
        let flags = self.flags
        thread = try PosixThread.start(name: "race-bare") {
            let pcm = handle.pointer
            _ = PosixThread.requestRealtimeForCurrentThread(priority: 20)
            var block = [Int16](repeating: 0, count: period * 2)
            let burst = ALSARace.rate / 50
            var left = 0, phase = 0
            while flags.running.load(ordering: .relaxed) {
                if flags.pending.exchange(false, ordering: .acquiring) {
                    left = burst
                    phase = 0
                }
                for frame in 0..<period {
                    var value: Int16 = 0
                    if left > 0 {
                        // A 150 Hz cosine: the first sample is full scale.
                        value = Int16(32_000 * cos(2 * Double.pi * 150 * Double(phase) / Double(ALSARace.rate)))
                        phase += 1
                        left -= 1
                    }
                    block[frame * 2] = value
                    block[frame * 2 + 1] = 0
                }
                let written = block.withUnsafeMutableBytes { alsa.writei(pcm, $0.baseAddress, UInt(period)) }
                if written < 0 {
                    flags.underruns.add(1, ordering: .relaxed)
                    _ = alsa.recover(pcm, Int32(written), 1)
                }
            }
            _ = alsa.close(pcm)
        }
    }

    /// Underruns recovered (writes that failed and were recovered).
    var underruns: Int { flags.underruns.load(ordering: .relaxed) }

    /// Marks the next period to start the burst.
    func trigger() { flags.pending.store(true, ordering: .releasing) }

    func stop() {
        flags.running.store(false, ordering: .relaxed)
        thread?.join()
        thread = nil
    }
}
