import HapticsSupport
import Synchronization

/// The thread that feeds a device that takes samples (``DeviceDescription/sampleStream``) while
/// it is awake: it renders the frames the engine posts into samples (``WaveformSynth``) one period
/// at a time and writes each block to the backend, whose `write_samples` blocks while the device's
/// buffer is full. The device's clock paces the thread, so the stream never drifts from it.
///
/// Timing: every frame is felt a constant ``latency`` (the buffer and a millisecond) after it was
/// meant, and frames keep their spacing to the sample, however late this thread runs. The thread
/// renders each block just in time. Where the device offers `wait_samples` (ABI 1.5: the alsa
/// backend, for a PCM it paces itself), it waits there until a period has freed in the device's
/// buffer, then takes the frames posted meanwhile, renders and writes a block that does not
/// block: one wake-up per period. Otherwise, once the device's clock is known, it sleeps until a period
/// is about to free in the device's buffer (``renderSlack`` before), and only then takes the
/// frames posted meanwhile, renders and writes (two wake-ups: the timer, and the write's wait for
/// the last of the period). Rendered before blocking in the write, a frame
/// that came just after a render would wait a whole period more (the buffer and a period: the
/// worst case of a bare client that renders, then blocks). After each
/// write the backend says how much the device holds (ALSA's delay), which tells when the stream's
/// first frame played on the monotonic clock (the stream's *origin*; the earliest of the recent
/// estimates, since a coarse hardware pointer only ever makes one late); a frame meant at *t* goes
/// to the stream position that plays at *t* + latency. (The first frame after a wake may come
/// later than that allows, when the thread started slowly: that run's latency grows to fit it, so
/// the pattern is felt whole, a little late, rather than with its start cut.) A device that cannot tell falls back to one
/// period after what is written, shifted back by the frame's age. A stop is a frame of silence
/// like any other, so a pattern sounds exactly as long as it lasts, and falls silent one latency
/// after the stop (a few milliseconds).
///
/// ``post(_:)`` never blocks (the engine calls it under its lock). ``finish(then:)`` does not
/// block either: the thread plays out what was posted, pushes the tail out of the device's buffer
/// with silence, runs the backend's sleep and ends; a ``start(deviceID:)`` before that keeps it
/// running. ``end()`` ends it at once and waits (at most one blocked write: a period).
final class SampleStream: Sendable {
    /// Writes one block (samples, frames, the time its first frame is meant to be felt): the
    /// underruns recovered and the frames then queued in the device (nil: it cannot tell), or the failure.
    typealias Writer = @Sendable (UnsafeBufferPointer<Float>, Int, UInt64) -> Result<Written, DeviceError>

    /// Waits until the device can take a number of frames without blocking, or a timeout in
    /// nanoseconds: true when it waited, false when the backend does not offer the wait, or the failure.
    typealias Waiter = @Sendable (Int, UInt64) -> Result<Bool, DeviceError>

    /// What a write did.
    struct Written {
        var underruns: Int
        var delayFrames: Int?
    }

    let format: SampleStreamFormat
    let channels: [ChannelDescription]
    private let write: Writer
    private let wait: Waiter?
    private let inbox: Mutex<Inbox>
    private let thread = Mutex<PosixThread?>(nil)

    private struct Change {
        var time: UInt64
        var drives: InlineDrives
        /// The frame's clip voices (their start frames not yet known: 0).
        var clips = InlineClips.none
    }

    private enum Ending {
        /// Running.
        case none
        /// Play out what was posted, then run the closure (the backend's sleep) and end.
        case drain(@Sendable () -> Void)
        /// End now.
        case now
    }

    private struct Inbox {
        var changes: [Change]
        var count = 0
        var ending = Ending.none
        /// The thread has decided to end (under this lock): a start must wait for it and begin anew.
        var exiting = false
        var failure: DeviceError?
        var underruns = 0
    }

    /// Most frames posted between two blocks that are kept apart (the engine sends at most one a
    /// millisecond; a later one replaces the last when the inbox is full).
    static let inboxCapacity = 64

    /// Told the failure that ended the stream (from a thread of its own, not the stream thread).
    private let failed: @Sendable (DeviceError) -> Void

    init(
        format: SampleStreamFormat, channels: [ChannelDescription], write: @escaping Writer, wait: Waiter? = nil,
        failed: @escaping @Sendable (DeviceError) -> Void
    ) {
        self.format = format
        self.channels = channels
        self.write = write
        self.wait = wait
        self.failed = failed
        inbox = Mutex(Inbox(changes: Array(repeating: Change(time: 0, drives: .silence), count: Self.inboxCapacity)))
    }

    /// From a frame's time to the samples it shaped being written to the device: the buffer and
    /// ``renderSlack``, in seconds (plus the device's own ``SampleStreamFormat/latency`` to the
    /// actuator). A frame that comes just after a render waits for the next one, at most a period
    /// less ``renderSlack`` away, which is written behind the rest of the buffer.
    var latency: Double { Double(format.bufferFrames) / Double(format.rate) + Self.renderSlack }

    /// How long before a period frees in the device's buffer the thread wakes to render it, in
    /// seconds: room for the wake-up's own lateness, so the buffer stays as deep as without it.
    static let renderSlack = 0.001

    /// Underruns the device recovered from since the stream was created.
    var underruns: Int { inbox.withLock { $0.underruns } }

    /// Starts the thread, or keeps a draining one running; a failure of an ended run is cleared.
    func start(deviceID: String) throws(DeviceError) {
        try thread.withLock { (running: inout PosixThread?) throws(DeviceError) in
            let kept = inbox.withLock { inbox -> Bool in
                guard running != nil, !inbox.exiting else { return false }
                inbox.ending = .none
                return true
            }
            if kept { return }
            running?.join()
            running = nil
            inbox.withLock { $0 = Inbox(changes: $0.changes, underruns: $0.underruns) }
            do throws(ThreadStartError) {
                running = try PosixThread.start(name: "haptics-samples") { [self] in run() }
            } catch {
                throw DeviceError.backendFailure(deviceID: deviceID, backend: "core", operation: .wake, errno: error.errno, message: error.description)
            }
        }
    }

    /// Whether the stream takes frames: its thread runs and is not ending.
    var isRunning: Bool {
        thread.withLock { running in
            running != nil && inbox.withLock { inbox in
                if case .none = inbox.ending { return !inbox.exiting }
                return false
            }
        }
    }

    /// Whether the thread runs and will render what is posted, ending or not (a drain still plays
    /// a frame posted before it ends).
    var isActive: Bool {
        thread.withLock { running in running != nil && inbox.withLock { !$0.exiting } }
    }

    /// Hands a frame to the thread; throws the failure that ended the stream, if one did.
    func post(_ frame: DriveFrame) throws(DeviceError) {
        var change = Change(time: frame.time.nanoseconds, drives: InlineDrives(frame.channels))
        for voice in frame.clips where !change.clips.append(voice, startFrame: 0) { break }
        let failure: DeviceError? = inbox.withLock { inbox in
            if let failure = inbox.failure { return failure }
            if inbox.count == inbox.changes.count {
                inbox.changes[inbox.count - 1] = change
            } else {
                inbox.changes[inbox.count] = change
                inbox.count += 1
            }
            return nil
        }
        if let failure { throw failure }
    }

    /// Asks the thread to play out what was posted, then run `then` (the backend's sleep) and end;
    /// returns at once. A frame of silence now is posted first, so the drain ends one latency
    /// later whatever was posted before. With no thread running, runs `then` now.
    func finish(then: @escaping @Sendable () -> Void) {
        let silence = DriveFrame.silence(channelCount: channels.count, at: .monotonicNow())
        let running = thread.withLock { running in
            running != nil && inbox.withLock { inbox in
                guard !inbox.exiting else { return false }
                inbox.ending = .drain(then)
                return true
            }
        }
        if running { try? post(silence) } else { then() }
    }

    /// Ends the thread and waits for it: a draining thread plays out first (one ``latency`` and a
    /// buffer, a few tens of milliseconds at most), so a program that plays an effect and closes
    /// the device feels all of it; any other ends at once (at most one blocked write: a period).
    func end() {
        thread.withLock { running in
            guard let current = running else { return }
            inbox.withLock { inbox in
                if case .drain = inbox.ending { return }
                inbox.ending = .now
            }
            if !current.isCurrent { current.join() } else { current.detach() }
            running = nil
        }
    }

    /// Recent estimates of when the stream's first frame played, in monotonic seconds.
    private struct OriginWindow {
        var estimates: [Double]
        var count = 0
        var next = 0

        init(capacity: Int) { estimates = Array(repeating: 0, count: capacity) }

        mutating func add(_ estimate: Double) {
            estimates[next] = estimate
            next = (next + 1) % estimates.count
            count = min(count + 1, estimates.count)
        }

        mutating func clear() { count = 0 }

        /// The earliest recent estimate: a hardware pointer updated a period at a time only ever
        /// reports more queued than is, so every estimate is late by up to a period.
        var origin: Double? {
            guard count > 0 else { return nil }
            var earliest = Double.infinity
            for index in 0..<count { earliest = min(earliest, estimates[index]) }
            return earliest
        }
    }

    private func run() {
        PosixThread.requestRealtimeForCurrentThread(priority: 20)
        let period = format.periodFrames
        let rate = Double(format.rate)
        var synth = WaveformSynth(rate: format.rate, channels: channels)
        var buffer = [Float](repeating: 0, count: period * channels.count)
        var local = [Change]()
        local.reserveCapacity(Self.inboxCapacity)
        let lead = Double(format.bufferFrames) / rate + format.latency
        let latency = self.latency
        // About half a second of writes.
        var window = OriginWindow(capacity: max(format.rate / 2 / period, 4))
        /// Frames of silence still to write before a drained stream ends (the device's buffer).
        var tail: Int?
        /// The latency of this run, set by its first frame: the stream's own (``latency``), or more
        /// when that frame came later than the stream could place it (the thread started late,
        /// under load): the whole run is then felt later rather than its start cut short.
        var runLatency: Double?
        /// When this run began, for holding a backend that does not wait to real time.
        let runStart = HapticInstant.monotonicNow().seconds
        /// Whether to ask the backend to wait for room in the device's buffer (until it says it does not).
        var asksToWait = wait != nil
        /// Whether it has waited: then its wait, not this thread's clock, times the next block.
        var backendWaits = false

        /// Renders and writes the next period; false when the stream failed (recorded).
        func writeBlock(at now: UInt64) -> Bool {
            let result = buffer.withUnsafeMutableBufferPointer { samples in
                synth.render(into: samples, frames: period)
                return write(UnsafeBufferPointer(samples), period, now &+ UInt64(lead * 1e9))
            }
            switch result {
            case .success(let written):
                if written.underruns > 0 {
                    inbox.withLock { $0.underruns += written.underruns }
                    window.clear()
                }
                let after = HapticInstant.monotonicNow().seconds
                if let delay = written.delayFrames {
                    window.add(after + Double(delay) / rate - Double(synth.position) / rate)
                }
                // A backend whose writes do not wait (its contract says they do) must not make this
                // real-time thread spin: it is held to real time, with slack for a card's clock.
                let ahead = Double(synth.position) / rate - (after - runStart) * 1.01 - Double(format.bufferFrames) / rate - 0.05
                if ahead > 0 {
                    Monotonic.sleep(until: Monotonic.now() + Monotonic.nanoseconds(min(ahead, 1)))
                } else if !backendWaits, let origin = window.origin {
                    // Just in time: the next block is rendered when a period is about to free, so the
                    // frames posted until then are in it (``latency``). At most a period's sleep.
                    let frees = origin + Double(synth.position + Int64(period) - Int64(format.bufferFrames)) / rate - Self.renderSlack
                    let now = HapticInstant.monotonicNow().seconds
                    if frees > now { Monotonic.sleep(until: Monotonic.now() + Monotonic.nanoseconds(min(frees - now, format.periodDuration))) }
                }
                return true
            case .failure(let failure):
                fail(failure)
                return false
            }
        }

        /// Records the failure that ends the stream and tells of it.
        func fail(_ failure: DeviceError) {
            let owed = inbox.withLock { inbox -> (@Sendable () -> Void)? in
                inbox.failure = failure
                inbox.exiting = true
                if case .drain(let then) = inbox.ending { return then }
                return nil
            }
            owed?()
            // A device closed under the stream is no news to the one who closed it.
            if case .closed = failure { return }
            // Told from a thread of its own: the handler takes the device's lock, under which a
            // wake may be joining this very thread. Not a task: a blocked cooperative pool (one
            // thread on a one-CPU machine) would hold the news back indefinitely.
            let failed = self.failed
            if let teller = try? PosixThread.start(name: "haptics-failed", { failed(failure) }) { teller.detach() }
        }

        // Fill the device's buffer with silence first: the stream starts steady.
        var prefill = format.bufferFrames
        while prefill > 0 {
            guard writeBlock(at: HapticInstant.monotonicNow().nanoseconds) else { return }
            prefill -= period
        }
        // A device whose clock stopped still lets the stream end: the wait gives up after two buffers.
        let waitTimeout = UInt64(2 * Double(format.bufferFrames) / rate * 1e9)
        while true {
            if asksToWait, let wait {
                switch wait(period, waitTimeout) {
                case .success(let waited):
                    asksToWait = waited
                    backendWaits = waited
                case .failure(let failure):
                    fail(failure)
                    return
                }
            }
            let now = HapticInstant.monotonicNow().nanoseconds
            var ending = Ending.none
            inbox.withLock { inbox in
                local.append(contentsOf: inbox.changes[0..<inbox.count])
                inbox.count = 0
                ending = inbox.ending
            }
            switch ending {
            case .now:
                return
            case .drain(let then):
                // Silent with nothing to come, and the buffer pushed out: sleep and end, unless a
                // start came meanwhile (decided under the lock).
                if local.isEmpty, synth.isSilent {
                    let left = (tail ?? format.bufferFrames) - period
                    tail = left
                    if left < 0 {
                        let exits = inbox.withLock { inbox -> Bool in
                            guard case .drain = inbox.ending else { return false }
                            inbox.exiting = true
                            return true
                        }
                        if exits {
                            then()
                            return
                        }
                        tail = nil
                    }
                }
            case .none:
                tail = nil
            }
            let origin = window.origin
            for change in local {
                let frame: Int64
                if let origin {
                    let meant = Double(change.time) / 1e9
                    // When the next frame to render plays, on the monotonic clock.
                    let next = origin + Double(synth.position) / rate
                    let chosen = runLatency ?? max(latency, next - meant)
                    runLatency = chosen
                    frame = Int64(((meant + chosen - origin) * rate).rounded())
                } else {
                    // One period ahead of what is written, shifted back by the frame's age.
                    let age = Double(Int64(bitPattern: now &- change.time)) / 1e9
                    frame = synth.position + Int64(period) - Int64((age * rate).rounded())
                }
                var clips = InlineClips.none
                for index in 0..<change.clips.count {
                    // Its first frame plays as far from this change's frame as its start is from the change's time.
                    let voice = change.clips[index].voice
                    clips.append(voice, startFrame: Double(frame) + Double(Int64(bitPattern: voice.start.nanoseconds &- change.time)) / 1e9 * rate)
                }
                synth.schedule(at: frame, drives: change.drives, clips: clips)
            }
            local.removeAll(keepingCapacity: true)
            guard writeBlock(at: now) else { return }
        }
    }
}
