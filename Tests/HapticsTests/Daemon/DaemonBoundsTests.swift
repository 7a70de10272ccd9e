import Foundation
import Haptics
import HapticsBus
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What one client can make hapticsd hold or do, bounded (Docs/Daemon.md, "Budgets"): the pattern
/// elements its players pin, the scheduler thread's share of a core whatever the loop or rate,
/// and the size of the settings it stores.
@Suite("hapticsd: per-client budgets and bounded work")
struct DaemonBoundsTests {
    static let app = BusValue.string("org.example.Bounds")

    /// A pattern of `count` transients, 10 ms apart.
    static func transients(_ count: Int) throws -> String {
        let events = (0..<count).map { index in
            HapticEvent(
                eventType: .hapticTransient,
                parameters: [.init(parameterID: .hapticIntensity, value: 0.5), .init(parameterID: .hapticSharpness, value: 0.5)],
                relativeTime: Double(index) * 0.01)
        }
        return try HapticPattern(events: events).ahapText(pretty: false)
    }

    @Test("a client's players hold at most --max-events-per-client elements together: OverBudget names the figures; releasing a player makes room")
    func elementBudget() throws {
        let rig = try DaemonRig(arguments: ["--max-events-per-client", "1000"])
        let client = try TestBusClient(address: rig.address)
        let other = try TestBusClient(address: rig.address)
        let four = BusValue.string(try Self.transients(400))
        let first = try #require(try client.call("CreatePlayer", [Self.app, .string(""), four]).first?.stringValue)
        try client.call("CreatePlayer", [Self.app, .string(""), four])
        do throws(BusError) {
            try client.call("CreatePlayer", [Self.app, .string(""), four])
            Issue.record("a third 400-event player was accepted under a budget of 1000")
        } catch {
            #expect(error.name == "org.swifthaptics.Haptics1.Error.OverBudget", "\(error)")
            #expect(error.message.contains("holds 800") && error.message.contains("adds 400") && error.message.contains("at most 1000"), "\(error.message)")
        }
        // The budget is the client's own: another connection still has all of its own.
        try other.call("CreatePlayer", [Self.app, .string(""), four])
        try client.player(first, "Release")
        try client.call("CreatePlayer", [Self.app, .string(""), four])
    }

    @Test("one user has at most --max-clients-per-user connections playing at once: TooManyClients; a connection that leaves frees its place")
    func clientsPerUser() throws {
        let rig = try DaemonRig(arguments: ["--max-clients-per-user", "3"])
        let tap = BusValue.string(try Self.transients(1))
        var clients = try (0..<3).map { _ in try TestBusClient(address: rig.address) }
        for client in clients { try client.call("CreatePlayer", [Self.app, .string(""), tap]) }
        let fourth = try TestBusClient(address: rig.address)
        do throws(BusError) {
            try fourth.call("CreatePlayer", [Self.app, .string(""), tap])
            Issue.record("a fourth connection of the user was served")
        } catch {
            #expect(error.name == "org.swifthaptics.Haptics1.Error.TooManyClients", "\(error)")
            #expect(error.message.contains("user \(getuid()) has 3 connections"), "\(error.message)")
        }
        clients.removeLast()
        let served = ChildProcess.waitUntil(timeout: 10) { (try? fourth.call("CreatePlayer", [Self.app, .string(""), tap])) != nil }
        #expect(served, "the place of the connection that left was not freed")
    }

    /// hapticsd's resident set size, in bytes.
    static func residentBytes(_ pid: pid_t) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") })
        return (Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0) * 1024
    }

    @Test("memory departed clients' players held goes back (malloc_trim): the resident size returns within 10 % of its warm-up level")
    func memoryReturns() throws {
        let rig = try DaemonRig()
        let pid = try #require(rig.daemonPID)
        let big = BusValue.string(try Self.transients(10_000))
        func holdAndLeave() throws {
            let client = try TestBusClient(address: rig.address)
            // Each is parsed on hapticsd's worker at nice 19 (a debug build here): on a machine
            // busy with other suites one took over 10 s. Memory is this test's question, not speed.
            for _ in 0..<10 { try client.call("CreatePlayer", [Self.app, .string(""), big], timeout: 120) }
        }
        // Warm-up: a small player made and released (code paged in, the allocator's arenas made).
        let observer = try TestBusClient(address: rig.address)
        let small = try #require(try observer.call("CreatePlayer", [Self.app, .string(""), .string(try Self.transients(10))]).first?.stringValue)
        try observer.player(small, "Release")
        func settled() -> Bool {
            (try? observer.call("GetStatistics"))?.first?.entries.first { $0.key == "players" }?.value.unwrapped == .uint32(0)
        }
        #expect(ChildProcess.waitUntil(timeout: 10, settled))
        observer.pump(for: 0.5)
        let before = try Self.residentBytes(pid)
        var peak = before
        for _ in 0..<3 {
            try holdAndLeave()
            peak = max(peak, try Self.residentBytes(pid))
        }
        #expect(ChildProcess.waitUntil(timeout: 10, settled))
        // The trim comes a second after the last client left; on a loaded machine later (once 13 %
        // over at 1.5 s): waited for, up to 15 s. Without the trim it stays up (48 MB against 25).
        var after = try Self.residentBytes(pid)
        _ = ChildProcess.waitUntil(timeout: 15) {
            observer.pump(for: 0.25)
            after = (try? Self.residentBytes(pid)) ?? after
            return Double(after) <= Double(before) * 1.10
        }
        #expect(Double(after) <= Double(before) * 1.10, "resident \(before / 1024) KiB before, \(peak / 1024) KiB at the peak, \(after / 1024) KiB after")
    }

    /// The CPU time hapticsd has used, in seconds (utime + stime of /proc/PID/stat).
    static func cpuSeconds(_ pid: pid_t) throws -> Double {
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        let fields = stat[stat.lastIndex(of: ")")!...].split(separator: " ")
        // After ")": state is field 3, utime field 14 and stime field 15 of the whole line.
        let ticks = (Double(fields[12]) ?? 0) + (Double(fields[13]) ?? 0)
        return ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    @Test("a loop of a nanosecond (and a rate of 100) keeps the scheduler thread far from a busy loop: hapticsd uses under a quarter of a core")
    func tinyLoopDoesNotSpin() throws {
        let rig = try DaemonRig()
        let client = try TestBusClient(address: rig.address)
        let pid = try #require(rig.daemonPID)
        let long = try HapticPattern(events: [
            HapticEvent(
                eventType: .hapticContinuous, parameters: [.init(parameterID: .hapticIntensity, value: 1), .init(parameterID: .hapticSharpness, value: 0.5)],
                relativeTime: 0, duration: 10)
        ]).ahapText(pretty: false)
        let looped = try #require(
            try client.call("PlayPattern", [Self.app, .string("recording:lra"), .string(long), .double(1), .dictionary([("loop", .variant(.bool(true))), ("loop-end", .variant(.double(1e-9)))])]).first?.stringValue)
        let player = try #require(try client.call("CreatePlayer", [Self.app, .string("recording:gamepad"), .string(long)]).first?.stringValue)
        try client.setPlayer(player, "Loop", .bool(true))
        try client.setPlayer(player, "LoopEnd", .double(1e-6))
        try client.setPlayer(player, "Rate", .double(100))
        try client.player(player, "Start", [.uint64(0)])
        client.pump(for: 0.3)
        let before = try Self.cpuSeconds(pid)
        let start = HapticInstant.monotonicNow()
        client.pump(for: 2)
        let share = (try Self.cpuSeconds(pid) - before) / HapticInstant.monotonicNow().seconds(since: start)
        #expect(share < 0.25, "hapticsd used \(share * 100) % of a core while two tiny loops played")
        try client.player(looped, "Stop", [.uint64(0)])
        try client.player(player, "Stop", [.uint64(0)])
    }

    @Test("stored settings stay small: at most 64 interval kinds, kinds are short names, settings for at most 1024 apps; AppPolicies is announced as invalidated")
    func settingsBounded() throws {
        let rig = try DaemonRig()
        let client = try TestBusClient(address: rig.address)
        func setIntervals(_ kinds: [String]) throws(BusError) {
            try client.call(
                "Set", [.string("org.swifthaptics.Haptics1"), .string("MinimumIntervals"),
                        .variant(.array(element: "{sd}", kinds.map { .structure([.string($0), .double(0.01)]) }))],
                path: "/org/swifthaptics/Haptics1", interface: "org.freedesktop.DBus.Properties")
        }
        for (kinds, message) in [
            ((0..<65).map { "kind\($0)" }, "65 kinds; at most 64"),
            ([String(repeating: "k", count: 65)], "a feedback kind is 1…64 characters"),
            (["no spaces"], "a feedback kind is 1…64 characters"),
        ] {
            do throws(BusError) {
                try setIntervals(kinds)
                Issue.record("\(kinds.count) kinds were accepted")
            } catch {
                #expect(error.name == "org.swifthaptics.Haptics1.Error.InvalidArgument", "\(error)")
                #expect(error.message.contains(message), "\(error.message)")
            }
        }
        try setIntervals((0..<64).map { "kind\($0)" })

        for index in 0..<1024 {
            try client.call("SetAppPolicy", [.string("org.example.App\(index)"), .dictionary([("intensity-scale", .variant(.double(0.5)))])])
        }
        do throws(BusError) {
            try client.call("SetAppPolicy", [.string("org.example.OneTooMany"), .dictionary([("intensity-scale", .variant(.double(0.5)))])])
            Issue.record("settings for a 1025th app were kept")
        } catch {
            #expect(error.message.contains("settings are kept for 1024 apps already"), "\(error.message)")
        }
        client.clearSignals()
        try client.call("SetAppPolicy", [.string("org.example.App0"), .dictionary([])])
        let announced = try #require(client.waitForSignal("PropertiesChanged") { $0.count == 3 && $0[2].invalidates("AppPolicies") })
        #expect(announced[1].entries.isEmpty, "AppPolicies' value is not re-sent on every change")
        try client.call("SetAppPolicy", [.string("org.example.OneTooMany"), .dictionary([("intensity-scale", .variant(.double(0.5)))])])
    }
}
