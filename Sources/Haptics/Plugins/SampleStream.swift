import HapticsSupport
import Synchronization

/// The thread that feeds a device that takes samples (``DeviceDescription/sampleStream``) while
/// it is awake: it renders the frames the engine posts into samples (``WaveformSynth``) one period
/// at a time and writes each block to the backend, whose `write_samples` blocks while the device's
/// buffer is full. The device's clock paces the thread, so the stream never drifts from it.
///
/// Timing: a frame posted at time *t* is placed in the stream one period after the frames written
/// so far, shifted by its age when the block is rendered, so every frame is felt a constant
/// buffer and one period after it was meant, and frames keep their spacing to the sample.
///
/// ``post(_:)`` never blocks (the engine calls it under its lock); ``flush()`` asks the thread to
/// drop what the device has queued (the backend's `stop`) and go silent; ``finish()`` ends the
/// thread and waits for it, at most one period.
final class SampleStream: Sendable {
    /// Writes one block (samples, the time its first frame is meant to be felt): the underruns
    /// recovered, or the failure.
    typealias Writer = @Sendable (UnsafeBufferPointer<Float>, Int, UInt64) -> Result<Int, DeviceError>
    /// Drops what the device has queued.
    typealias Dropper = @Sendable () -> DeviceError?

    let format: SampleStreamFormat
    let channels: [ChannelDescription]
    private let write: Writer
    private let drop: Dropper
    private let inbox: Mutex<Inbox>
    private let thread = Mutex<PosixThread?>(nil)

    private struct Change {
        var time: UInt64
        var drives: InlineDrives
    }

    private struct Inbox {
        var changes: [Change]
        var count = 0
        var flush = false
        var finish = false
        var failure: DeviceError?
        var underruns = 0
    }

    /// Most frames posted between two blocks that are kept apart (the engine sends at most one a
    /// millisecond; a later one replaces the last when the inbox is full).
    static let inboxCapacity = 64

    init(format: SampleStreamFormat, channels: [ChannelDescription], write: @escaping Writer, drop: @escaping Dropper) {
        self.format = format
        self.channels = channels
        self.write = write
        self.drop = drop
        inbox = Mutex(Inbox(changes: Array(repeating: Change(time: 0, drives: .silence), count: Self.inboxCapacity)))
    }

    /// Underruns the device recovered from since the stream was created.
    var underruns: Int { inbox.withLock { $0.underruns } }

    /// Starts the thread (once per wake); a failure of the last run is cleared.
    func start(deviceID: String) throws(DeviceError) {
        try thread.withLock { (running: inout PosixThread?) throws(DeviceError) in
            guard running == nil else { return }
            inbox.withLock {
                $0 = Inbox(changes: $0.changes, underruns: $0.underruns)
            }
            do throws(ThreadStartError) {
                running = try PosixThread.start(name: "haptics-samples") { [self] in run() }
            } catch {
                throw DeviceError.backendFailure(deviceID: deviceID, backend: "core", operation: .wake, errno: error.errno, message: error.description)
            }
        }
    }

    /// Hands a frame to the thread; throws the failure that ended the stream, if one did.
    func post(_ frame: DriveFrame) throws(DeviceError) {
        let drives = InlineDrives(frame.channels)
        let failure: DeviceError? = inbox.withLock { inbox in
            if let failure = inbox.failure { return failure }
            if inbox.count == inbox.changes.count {
                inbox.changes[inbox.count - 1] = Change(time: frame.time.nanoseconds, drives: drives)
            } else {
                inbox.changes[inbox.count] = Change(time: frame.time.nanoseconds, drives: drives)
                inbox.count += 1
            }
            return nil
        }
        if let failure { throw failure }
    }

    /// Asks the thread to drop what the device holds and go silent before its next block.
    func flush() {
        inbox.withLock {
            $0.count = 0
            $0.flush = true
        }
    }

    /// Whether the thread runs.
    var isRunning: Bool { thread.withLock { $0 != nil } }

    /// Ends the thread and waits for it (at most one blocked write: a period).
    func finish() {
        thread.withLock { running in
            guard let current = running else { return }
            inbox.withLock { $0.finish = true }
            if !current.isCurrent { current.join() } else { current.detach() }
            running = nil
        }
    }

    private func run() {
        PosixThread.requestRealtimeForCurrentThread(priority: 20)
        let period = format.periodFrames
        var synth = WaveformSynth(rate: format.rate, channels: channels)
        var buffer = [Float](repeating: 0, count: period * channels.count)
        var local = [Change]()
        local.reserveCapacity(Self.inboxCapacity)
        let lead = Double(format.bufferFrames) / Double(format.rate) + format.latency
        while true {
            let now = HapticInstant.monotonicNow().nanoseconds
            var flush = false, finish = false
            inbox.withLock { inbox in
                local.append(contentsOf: inbox.changes[0..<inbox.count])
                inbox.count = 0
                flush = inbox.flush
                inbox.flush = false
                finish = inbox.finish
            }
            if finish { return }
            if flush {
                local.removeAll(keepingCapacity: true)
                synth.reset()
                if let failure = drop() {
                    inbox.withLock { $0.failure = failure }
                    return
                }
            }
            // One period ahead of what is written, shifted back by each frame's age.
            for change in local {
                let age = Double(Int64(bitPattern: now &- change.time)) / 1e9
                let frame = synth.position + Int64(period) - Int64((age * Double(format.rate)).rounded())
                synth.schedule(at: frame, drives: change.drives)
            }
            local.removeAll(keepingCapacity: true)
            let result = buffer.withUnsafeMutableBufferPointer { samples in
                synth.render(into: samples, frames: period)
                return write(UnsafeBufferPointer(samples), period, now &+ UInt64(lead * 1e9))
            }
            switch result {
            case .success(let underruns):
                if underruns > 0 { inbox.withLock { $0.underruns += underruns } }
            case .failure(let failure):
                inbox.withLock { $0.failure = failure }
                return
            }
        }
    }
}
