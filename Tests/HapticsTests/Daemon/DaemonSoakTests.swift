import Foundation
import Haptics
import HapticsBus
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// hapticsd under 50 hostile clients beside 5 ordinary ones for a minute (`HAPTICS_SOAK_SECONDS`
/// shortens it): floods of play calls, the largest documents over and over, clients that make
/// players and vanish, loops of a nanosecond, feedbackd events ended by strangers. Every ordinary
/// call is served (their round trips are printed: a figure, not a bound), the service stays up,
/// nothing of the hostile clients remains once they have left and the resident size comes back
/// within 10 % of its level after a warm-up under the same crowd; and one client's parse budget.
/// Scripts/test runs it alone, against the release build the packaging pass makes.
@Suite("hapticsd: a soak under 50 hostile clients beside 5 ordinary ones", .serialized)
struct DaemonSoakTests {
    /// Each client runs on its own thread with its own connection until `stop`.
    final class Crowd: Sendable {
        let address: String
        let stop = Atomic<Bool>(false)
        let roundTrips = Mutex<[Double]>([])
        let refusals = Mutex<[String: Int]>([:])
        private let running = Atomic<Int>(0)

        init(address: String) { self.address = address }

        func spawn(_ body: @escaping @Sendable (Crowd) -> Void) {
            running.add(1, ordering: .sequentiallyConsistent)
            let thread = Thread { [self] in
                body(self)
                running.subtract(1, ordering: .sequentiallyConsistent)
            }
            thread.stackSize = 1 << 20
            thread.start()
        }

        var stopping: Bool { stop.load(ordering: .relaxed) }

        func refused(_ error: BusError) { refusals.withLock { $0[String(error.name.split(separator: ".").last ?? ""), default: 0] += 1 } }

        /// Stops every client and waits for them to leave.
        func end(timeout: Double = 60) -> Bool {
            stop.store(true, ordering: .sequentiallyConsistent)
            return ChildProcess.waitUntil(timeout: timeout) { running.load(ordering: .sequentiallyConsistent) == 0 }
        }

        /// A new connection (subscribed to no signal, as most clients are), or nil when the bus
        /// refused it.
        func connect() -> Client? { try? Client(address: address) }
    }

    /// A plain client: calls and replies, no signals.
    final class Client {
        let bus: BusConnection
        init(address: String) throws { bus = try BusConnection(.address(address), description: "soak") }

        @discardableResult
        func call(
            _ member: String, _ arguments: [BusValue], path: String = "/org/swifthaptics/Haptics1", interface: String = "org.swifthaptics.Haptics1",
            destination: String = "org.swifthaptics.Haptics1"
        ) throws(BusError) -> BusMessage {
            try bus.call(destination: destination, path: path, interface: interface, member: member, timeout: 30) { writer throws(BusError) in
                for argument in arguments { try writer.append(argument) }
            }
        }

        /// Lets `seconds` pass (what arrives meanwhile stays queued).
        func pump(for seconds: Double) { usleep(UInt32(seconds * 1e6)) }
    }

    /// The service as it ships: the release build the packaging pass makes (Scripts/test builds it
    /// before this suite runs), the debug build's when there is none.
    static var executable: String {
        let release = TestSupport.packageRoot + "/.build/packaging/release/hapticsd"
        return ProcessInfo.processInfo.environment["HAPTICS_SOAK_HAPTICSD"]
            ?? (FileManager.default.isExecutableFile(atPath: release) ? release : DaemonRig.hapticsd)
    }

    static func playEffect(_ client: Client, app: String, effect: String) throws(BusError) {
        try client.call("PlayEffect", [.string(app), .string(""), .string(effect), .double(0.5)])
    }

    @Test("a client that owes its parse budget (8 MiB of documents a second) is refused before its next document is read")
    func parseBudget() throws {
        let rig = try DaemonRig(executable: Self.executable)
        let client = try TestBusClient(address: rig.address)
        let text = try DaemonBoundsTests.transients(22_000)
        let size = Double(text.utf8.count), rate = Double(8 << 20), calls = 12
        let huge = BusValue.string(text)
        let start = HapticInstant.monotonicNow()
        var accepted = 0
        var refusal: BusError?
        for _ in 0..<calls {
            do throws(BusError) {
                let reply = try client.call("CreatePlayer", [.string("org.example.Budget"), .string(""), huge])
                accepted += 1
                if let path = reply.first?.stringValue { try client.player(path, "Release") }
            } catch {
                refusal = error
                break
            }
        }
        let elapsed = HapticInstant.monotonicNow().seconds(since: start)
        // Read at most: the burst, what the budget refilled meanwhile, and the one document that
        // took it into debt (a document's size is known only once it is read).
        #expect(Double(accepted) * size <= rate + elapsed * rate + size, "\(accepted) documents of \(Int(size)) bytes read in \(elapsed) s")
        if let refusal {
            #expect(refusal.name == "org.swifthaptics.Haptics1.Error.Throttled" && refusal.message.contains("bytes of patterns per second"), "\(refusal)")
        } else {
            // Only a service slower than the budget reads them all (a debug build: about a second a document).
            #expect(elapsed >= (Double(calls) * size - rate - size) / rate, "\(calls) documents of \(Int(size)) bytes read in \(elapsed) s, none refused")
        }
        // Paid back at the budget's rate: a second later documents are read again.
        usleep(1_200_000)
        let path = try #require(try client.call("CreatePlayer", [.string("org.example.Budget"), .string(""), huge]).first?.stringValue)
        try client.player(path, "Release")
        print("parse budget: \(accepted) documents of \(Int(size) / 1024) KiB read in \(String(format: "%.2f", elapsed)) s before \(refusal?.name ?? "no refusal")")
    }

    @Test("among 50 hostile clients every ordinary call is served, nothing of the hostile clients remains and the resident size comes back within 10 % of warm-up")
    func soak() throws {
        let seconds = Double(ProcessInfo.processInfo.environment["HAPTICS_SOAK_SECONDS"] ?? "") ?? 60
        let executable = Self.executable
        let rig = try DaemonRig(arguments: ["--max-calls-per-second", "200"], executable: executable)
        let pid = try #require(rig.daemonPID)
        let observer = try TestBusClient(address: rig.address)
        // The largest document accepted (4 MiB) of transients, compact: about 22,000 events.
        let huge = try DaemonBoundsTests.transients(22_000)
        let tap = try DaemonBoundsTests.transients(1)
        let continuous = try HapticPattern(events: [
            HapticEvent(
                eventType: .hapticContinuous, parameters: [.init(parameterID: .hapticIntensity, value: 1), .init(parameterID: .hapticSharpness, value: 0.5)],
                relativeTime: 0, duration: 5)
        ]).ahapText(pretty: false)

        // The hostile kinds, each one round of what a hostile client does.
        let kinds: [(String, @Sendable (Crowd, Int) -> Void)] = [
            ("flood", { crowd, index in
                guard let client = crowd.connect() else { return }
                for _ in 0..<400 where !crowd.stopping {
                    do throws(BusError) { try Self.playEffect(client, app: "org.example.Flood\(index)", effect: "impact.light") } catch { crowd.refused(error) }
                    usleep(1000)
                }
            }),
            ("huge", { crowd, index in
                guard let client = crowd.connect() else { return }
                for _ in 0..<3 where !crowd.stopping {
                    do throws(BusError) { try client.call("CreatePlayer", [.string("org.example.Huge\(index)"), .string(""), .string(huge)]) } catch { crowd.refused(error) }
                }
                client.pump(for: 0.05)
            }),
            ("vanish", { crowd, index in
                guard let client = crowd.connect() else { return }
                for _ in 0..<20 where !crowd.stopping {
                    do throws(BusError) { try client.call("CreatePlayer", [.string("org.example.Vanish\(index)"), .string(""), .string(tap)]) } catch { crowd.refused(error) }
                }
                client.pump(for: 0.05)
            }),
            ("loop", { crowd, index in
                guard let client = crowd.connect() else { return }
                for _ in 0..<3 where !crowd.stopping {
                    do throws(BusError) {
                        try client.call("PlayPattern", [
                            .string("org.example.Loop\(index)"), .string(""), .string(continuous), .double(1),
                            .dictionary([("loop", .variant(.bool(true))), ("loop-end", .variant(.double(1e-9)))]),
                        ])
                    } catch { crowd.refused(error) }
                }
                client.pump(for: 0.3)
            }),
            ("feedbackd", { crowd, index in
                guard let client = crowd.connect() else { return }
                do throws(BusError) {
                    try client.call(
                        "TriggerFeedback", [.string("org.example.Event\(index)"), .string("phone-incoming-call"), .dictionary([]), .int32(0)],
                        path: "/org/sigxcpu/Feedback", interface: "org.sigxcpu.Feedback", destination: "org.sigxcpu.Feedback")
                    for id in UInt32(1)...20 {
                        try client.call("EndFeedback", [.uint32(id)], path: "/org/sigxcpu/Feedback", interface: "org.sigxcpu.Feedback", destination: "org.sigxcpu.Feedback")
                    }
                } catch { crowd.refused(error) }
                client.pump(for: 0.1)
            }),
        ]
        // Kinds run only when named in HAPTICS_SOAK_KINDS, to tell where the largest documents'
        // cost lies: the same 4 MiB sent to a member hapticsd does not have (sd-bus reads the
        // message and answers UnknownMethod; none of the service's code runs), or to dbus-daemon
        // itself (hapticsd never sees it; only the bus relays and refuses it).
        let diagnostic: [(String, @Sendable (Crowd, Int) -> Void)] = [
            ("huge-unknown", { crowd, index in
                guard let client = crowd.connect() else { return }
                for _ in 0..<3 where !crowd.stopping {
                    do throws(BusError) { try client.call("NoSuchMember", [.string("org.example.Huge\(index)"), .string(""), .string(huge)]) } catch { crowd.refused(error) }
                }
            }),
            ("huge-bus", { crowd, index in
                guard let client = crowd.connect() else { return }
                for _ in 0..<3 where !crowd.stopping {
                    do throws(BusError) {
                        try client.call("NoSuchMember", [.string(huge)], path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", destination: "org.freedesktop.DBus")
                    } catch { crowd.refused(error) }
                }
            }),
        ]
        func settled() -> Bool {
            guard let statistics = (try? observer.call("GetStatistics"))?.first?.entries else { return false }
            return statistics.first { $0.key == "players" }?.value.unwrapped == .uint32(0)
                && statistics.first { $0.key == "clients" }?.value.unwrapped == .uint32(0)
        }

        // The soak (HAPTICS_SOAK_KINDS=flood,huge,… runs only those kinds, to find which costs what),
        // first for a warm-up of a tenth of its length: the service settles and trims after it,
        // and that resident size is what it must come back to.
        let chosen = ProcessInfo.processInfo.environment["HAPTICS_SOAK_KINDS"].map { Set($0.split(separator: ",").map(String.init)) }
        func startCrowd() -> Crowd {
            let crowd = Crowd(address: rig.address)
            for (name, round) in kinds + diagnostic where chosen?.contains(name) ?? !diagnostic.contains(where: { $0.0 == name }) {
                for index in 0..<10 {
                    crowd.spawn { crowd in
                        while !crowd.stopping { round(crowd, index) }
                    }
                }
            }
            return crowd
        }
        let warmUp = startCrowd()
        observer.pump(for: max(seconds / 10, 2))
        #expect(warmUp.end())
        #expect(ChildProcess.waitUntil(timeout: 30, settled), "the warm-up's clients left something behind")
        observer.pump(for: 2)
        let warm = try DaemonBoundsTests.residentBytes(pid)

        let crowd = startCrowd()
        for index in 0..<5 {
            crowd.spawn { crowd in
                guard let client = crowd.connect() else { return }
                while !crowd.stopping {
                    let start = HapticInstant.monotonicNow()
                    do throws(BusError) {
                        try Self.playEffect(client, app: "org.example.Ordinary\(index)", effect: "selection")
                        let trip = HapticInstant.monotonicNow().seconds(since: start)
                        crowd.roundTrips.withLock { $0.append(trip) }
                    } catch {
                        crowd.refused(error)
                        crowd.roundTrips.withLock { $0.append(.infinity) }
                    }
                    usleep(20_000)
                }
            }
        }
        var peak = warm
        let cpuBefore = try DaemonBoundsTests.cpuSeconds(pid)
        let soakStart = HapticInstant.monotonicNow()
        let deadline = HapticInstant.monotonicNow().nanoseconds + UInt64(seconds * 1e9)
        while HapticInstant.monotonicNow().nanoseconds < deadline {
            observer.pump(for: 1)
            peak = max(peak, (try? DaemonBoundsTests.residentBytes(pid)) ?? 0)
        }
        let cpu = (try DaemonBoundsTests.cpuSeconds(pid) - cpuBefore) / HapticInstant.monotonicNow().seconds(since: soakStart)
        #expect(crowd.end(), "the clients did not stop")
        #expect(kill(pid, 0) == 0, "hapticsd died under the soak: \(rig.daemonLog.suffix(2000))")

        let trips = crowd.roundTrips.withLock { $0 }.sorted()
        try #require(trips.count > Int(seconds * 5 * 5), "only \(trips.count) ordinary round trips")
        let p50 = trips[trips.count / 2], p99 = trips[Int(Double(trips.count) * 0.99)]
        let refusals = crowd.refusals.withLock { $0 }
        print("soak: \(executable); \(String(format: "%.0f", Double(huge.utf8.count) / 1024)) KiB documents; \(trips.count) ordinary round trips, p50 \(p50 * 1000) ms, p99 \(p99 * 1000) ms, max \(trips.last! * 1000) ms; refusals \(refusals.sorted { $0.key < $1.key }); resident warm \(warm / 1024) KiB, peak \(peak / 1024) KiB; hapticsd used \(Int(cpu * 100)) % of a core")
        // The ordinary clients were all served (a refusal counts as an endless round trip); how
        // fast is a figure, printed above and quoted in Docs/Daemon.md, not a bound here: on two
        // cores the crowd, dbus-daemon and the service share the machine.
        #expect(trips.last!.isFinite, "an ordinary client's call was refused: \(refusals)")

        #expect(ChildProcess.waitUntil(timeout: 30, settled), "players or clients of the hostile crowd remain")
        observer.pump(for: 2)
        let after = try DaemonBoundsTests.residentBytes(pid)
        print("soak: resident after \(after / 1024) KiB")
        #expect(Double(after) <= Double(warm) * 1.10, "resident \(warm / 1024) KiB at warm-up, \(peak / 1024) KiB at the peak, \(after / 1024) KiB after")
    }
}
