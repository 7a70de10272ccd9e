import ArgumentParser
import Foundation
import HapticsSupport

/// What both races take: how many rounds, and whether SDL2 runs beside.
struct RaceOptions: ParsableArguments {
    @Option(help: "Rounds; each client triggers once per round, the clients alternated.") var rounds = 150
    @Flag(name: .customLong("no-sdl"), help: "Leave SDL2 out (when libSDL2 is not installed).") var noSDL = false

    func validate() throws {
        guard rounds > 0 else { throw ValidationError("--rounds takes a positive number, not \(rounds)") }
    }
}

/// The results of a latency race (`hid-race`, `evdev-race`): each client's trigger-to-hardware times,
/// printed as one table against the bare write and SDL2, and the issue's goals judged from them.
struct RaceResults {
    /// Each client's statistics, by name, in microseconds.
    let stats: [String: Stats]
    /// The bare write's median, µs.
    let bare: Double
    /// SDL2's median, µs, when SDL2 ran.
    let sdl: Double?

    /// Prints the table titled `title`: per client (in `names` order) the samples, p50, p99, p50
    /// against the bare client's and SDL's, and the rounds it missed.
    init(title: String, names: [String], samples: [[Double]], missed: [Int], bareClient: String, sdlClient: String) {
        stats = Dictionary(uniqueKeysWithValues: zip(names, samples.map { Stats($0) }))
        bare = stats[bareClient]!.p50
        sdl = stats[sdlClient]?.p50
        var rows: [[String]] = []
        for (index, name) in names.enumerated() {
            let median = stats[name]!.p50
            rows.append([
                name, "\(samples[index].count)", us(median), us(stats[name]!.p99), String(format: "%.2f×", median / bare),
                sdl.map { String(format: "%.2f×", median / $0) } ?? "–", "\(missed[index])",
            ])
        }
        table(title, ["client", "n", "p50", "p99", "p50 / bare", "p50 / SDL", "missed"], rows)
    }

    /// Prints the goals for `clients` (label, client name): p50 ≤ 1.5× the bare write (called
    /// `bareLabel`), and faster than SDL2 when it ran.
    func printGoals(bareLabel: String, _ clients: [(label: String, name: String)]) {
        func verdict(_ label: String, _ value: Double, _ reference: Double, met: Bool) -> String {
            "\(label) \(String(format: "%.2f", value / reference))× (\(met ? "met" : "not met"))"
        }
        let medians = clients.map { (label: $0.label, value: stats[$0.name]!.p50) }
        print("goal ≤ 1.5× \(bareLabel): " + medians.map { verdict($0.label, $0.value, bare, met: $0.value / bare <= 1.5) }.joined(separator: ", "))
        if let sdl {
            print("goal faster than SDL2: " + medians.map { verdict($0.label, $0.value, sdl, met: $0.value < sdl) }.joined(separator: ", "))
        }
    }
}

/// What a race's virtual device received, each with the time its reader read it
/// (`CLOCK_MONOTONIC` ns), and one armed wait for the first arrival that matches: the measuring
/// thread arms, triggers and waits; the device's reader thread records.
final class ArrivalWatch<Event: Sendable>: @unchecked Sendable {
    // Everything is behind `lock`; `arrival` is signalled once per hit.
    private let lock = NSLock()
    private var received: [(time: UInt64, event: Event)] = []
    private var armed: (after: UInt64, match: @Sendable (Event) -> Bool)?
    private var hit: UInt64?
    private let arrival = DispatchSemaphore(value: 0)

    /// Records `event`, read at `time`; a hit if it matches the armed wait.
    func record(_ event: Event, at time: UInt64) {
        lock.lock()
        defer { lock.unlock() }
        received.append((time, event))
        if let armed, time >= armed.after, armed.match(event) {
            self.armed = nil
            hit = time
            arrival.signal()
        }
    }

    /// Everything received so far.
    var all: [(time: UInt64, event: Event)] {
        lock.lock()
        defer { lock.unlock() }
        return received
    }

    /// Waits for the first event matching `match` read after `after` (default: now; one that came
    /// after `after` already counts) and returns the time it was armed.
    @discardableResult
    func arm(after: UInt64? = nil, _ match: @escaping @Sendable (Event) -> Bool) -> UInt64 {
        lock.lock()
        defer { lock.unlock() }
        while arrival.wait(timeout: .now()) == .success {}  // drop a stale signal
        let now = Monotonic.now()
        hit = nil
        armed = nil
        if let after, let early = received.first(where: { $0.time >= after && match($0.event) }) {
            hit = early.time  // it came before we armed
            arrival.signal()
        } else {
            armed = (after ?? now, match)
        }
        return now
    }

    /// The arrival time of the armed match, or nil after `timeout` seconds.
    func wait(timeout: Double) -> UInt64? {
        guard arrival.wait(timeout: .now() + timeout) == .success else {
            lock.lock()
            armed = nil
            lock.unlock()
            return nil
        }
        lock.lock()
        defer { lock.unlock() }
        return hit
    }
}
