import Foundation
import HIDReports
import Haptics
import Testing
import VMRig

#if canImport(Glibc)
import Glibc
#endif

extension GuestKernelTests {
    /// Guest side: which thread makes a rumble write, told by the kernel's per-thread count of
    /// write system calls (`syscw` in `/proc/thread-self/io`, task I/O accounting).
    ///
    /// - Bluetooth: hidraw only queues the report (hidp, uhid), so a submit the spacing allows is
    ///   written by the calling thread itself, one `write(2)` before `submit` returns; a submit
    ///   inside the spacing is left to the writer thread (no write on the caller), which sends it
    ///   once the spacing has passed.
    /// - USB: a write is a synchronous transfer, so the calling thread never writes: every report
    ///   is the writer thread's.
    ///
    /// Either way every report arrives, in order, with the counter advancing by one.
    @Suite struct HIDBackendWriteThread {
        @Test(
            "Bluetooth writes on the caller when the spacing allows; USB always hands over to the writer",
            arguments: [VirtualController.xboxSeriesBluetooth, .dualShock4USB])
        func writingThread(_ controller: VirtualController) async throws {
            let facts = PadFacts(controller)
            let pad = try await HIDGuest.plug(controller)
            defer { try? pad.destroy() }
            let system = HIDGuest.system()
            let id = try HIDGuest.expectedID(pad, controller)
            _ = try await HIDGuest.description(system, id: id)
            let backend = try HIDGuest.backend(system)
            let start = HIDGuest.now()
            let interval = UInt64(facts.interval * 1e9)
            @Sendable func frame(_ level: Double) -> DriveFrame {
                DriveFrame(time: .monotonicNow(), channels: Array(repeating: ChannelDrive(amplitude: level), count: facts.channels.count))
            }
            let (submitted, calls, attempts) = try await HIDGuest.onThread { () -> ([DriveFrame], [Int], Int) in
                let device = try backend.open(deviceID: id)
                try device.wake()
                var submitted: [DriveFrame] = []
                var calls: [Int] = []
                // A pair of submits: the first once the spacing has passed, the second at once after
                // it. Only a pair whose second submit came within the spacing of the first's start
                // tells the hand-over apart; on a busy emulated CPU a pair can take longer, and is
                // then tried again, spread over up to 6 s: the other suites that share the guest's
                // CPU load it in bursts (ten attempts within a third of a second all failed in one CI run).
                var attempts = 0
                let giveUp = HIDGuest.now() + 6_000_000_000
                repeat {
                    attempts += 1
                    HIDGuest.pause(facts.interval * 2 + (attempts > 1 ? 0.05 : 0))
                    // A fresh time slice for the pair.
                    sched_yield()
                    // Each state differs from the one before it: firsts in 0.2…0.45, seconds in 0.55…0.8.
                    let step = Double(attempts % 11)
                    let first = frame(0.2 + 0.025 * step), second = frame(0.8 - 0.025 * step)
                    let before = try Self.writeCalls()
                    let firstStarted = HIDGuest.now()
                    try device.submit(first)
                    let between = try Self.writeCalls()
                    try device.submit(second)
                    let secondCalled = HIDGuest.now()
                    let after = try Self.writeCalls()
                    submitted += [first, second]
                    if secondCalled - firstStarted < interval {
                        calls = [between - before, after - between]
                        break
                    }
                } while HIDGuest.now() < giveUp
                try HIDGuest.block(for: "\(controller): the last state", timeout: 5) {
                    ReportCheck.ours(pad, facts, since: start).last.map { facts.encode(facts.state(submitted.last!), sequence: ReportCheck.sequence($0.data, facts)) == $0.data } ?? false
                }
                HIDGuest.pause(facts.interval * 2)
                let before = try Self.writeCalls()
                try device.stop()
                calls.append(try Self.writeCalls() - before)
                try device.sleep()
                device.close()
                try HIDGuest.block(for: "\(controller): the off report", timeout: 5) {
                    ReportCheck.ours(pad, facts, since: start).last.map { ReportCheck.isOff($0, facts) } ?? false
                }
                return (submitted, calls, attempts)
            }
            let reports = ReportCheck.ours(pad, facts, since: start)
            ReportCheck.stream(reports, facts: facts, states: submitted.map(facts.state) + [.off], setup: facts.setupReports())
            try #require(calls.count == 3, "no pair of submits came within the spacing in \(attempts) attempts")
            if facts.transport == .bluetooth {
                #expect(calls == [1, 0, 1], "write calls on the calling thread for submit, submit within the spacing, stop: \(calls)")
            } else {
                #expect(calls == [0, 0, 0], "write calls on the calling thread for submit, submit within the spacing, stop: \(calls)")
            }
            print("hid-backend: \(controller): write calls on the caller for submit, submit within the spacing, stop: \(calls) (\(attempts) attempt(s))")
        }

        /// The calling thread's count of write system calls so far (`syscw`), read with plain system
        /// calls (reads, which it does not count).
        static func writeCalls() throws -> Int {
            let fd = open("/proc/thread-self/io", O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw RigError.system(operation: "open", path: "/proc/thread-self/io", errno: errno) }
            defer { close(fd) }
            var buffer = [UInt8](repeating: 0, count: 512)
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { throw RigError.system(operation: "read", path: "/proc/thread-self/io", errno: errno) }
            let text = String(decoding: buffer.prefix(count), as: UTF8.self)
            guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("syscw:") }),
                let calls = Int(line.dropFirst("syscw:".count).trimmingCharacters(in: .whitespaces))
            else { throw RigError.notFound(what: "the syscw line in /proc/thread-self/io (task I/O accounting): \(text)") }
            return calls
        }
    }
}
