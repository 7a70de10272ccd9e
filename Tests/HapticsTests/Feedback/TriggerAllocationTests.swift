import CMallocCounter
import Foundation
import Haptics
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The trigger path's structural promise: a trigger on a prepared device allocates nothing on the
/// calling thread (the cost of a trigger is the write it makes, not the core's bookkeeping).
/// Counted, not timed: the test executable counts the calling thread's heap allocations
/// (`Tests/CMallocCounter`), on the null backend loaded through dlopen, with the engine's own
/// scheduler thread running as in an app.
@Suite("Trigger path: no allocation on the calling thread")
struct TriggerAllocationTests {
    /// An engine on the null backend's device, its generators and a player, warmed up so that
    /// what is built once (the first frame of each effect, the guard's kinds) is built.
    final class Rig {
        let device: HapticDevice
        let engine: HapticEngine

        init() throws {
            let system = HapticSystem(
                configuration: .init(searchPath: PluginSearchPath(directories: [TestSupport.buildDirectory]), logger: TestSupport.quietLogger, daemon: .never))
            device = try system.openDevice("null:0")
            engine = try HapticEngine(devices: [device], profileStore: nil, policy: HapticPolicy(), logger: TestSupport.quietLogger)
        }

        deinit {
            engine.stop()
            device.close()
        }

        /// Waits (up to 2 s) for the device to reach `state`: the engine's thread ends a tap on its own.
        func wait(for state: PowerState) throws {
            let deadline = Date().addingTimeInterval(2)
            while device.powerState != state {
                guard Date() < deadline else { throw RigFailure("the device stayed \(device.powerState), expected \(state)") }
                usleep(2_000)
            }
        }

        /// Prepares through `prepare`, checks the device is prepared, counts the allocations `trigger`
        /// makes on this thread, then lets the effect play out and the device idle (and the overuse
        /// guard's interval pass).
        func allocations(prepare: () -> Void, trigger: () throws -> Void) throws -> UInt64 {
            prepare()
            try wait(for: .prepared)
            malloc_counter_begin()
            let failure: (any Error)?
            do {
                try trigger()
                failure = nil
            } catch {
                failure = error
            }
            let count = malloc_counter_end()
            if let failure { throw failure }
            try wait(for: .idle)
            usleep(40_000)
            return count
        }
    }

    struct RigFailure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    @Test("the counter sees this thread's allocations, and only while counting")
    func counterWorks() {
        malloc_counter_begin()
        let pointer = malloc(64)
        let counted = malloc_counter_end()
        free(pointer)
        #expect(counted == 1)
        let after = malloc(64)
        free(after)
        malloc_counter_begin()
        #expect(malloc_counter_end() == 0)
    }

    @Test("a prepared impactOccurred() and selectionChanged() allocate nothing on the calling thread")
    func feedbackTrigger() throws {
        let rig = try Rig()
        let impact = ImpactFeedbackGenerator(style: .rigid, engine: rig.engine)
        let selection = SelectionFeedbackGenerator(engine: rig.engine)
        for _ in 0..<2 {
            _ = try rig.allocations(prepare: impact.prepare) { impact.impactOccurred() }
            _ = try rig.allocations(prepare: selection.prepare) { selection.selectionChanged() }
        }
        for _ in 0..<3 {
            #expect(try rig.allocations(prepare: impact.prepare) { impact.impactOccurred() } == 0)
            #expect(try rig.allocations(prepare: selection.prepare) { selection.selectionChanged() } == 0)
        }
    }

    @Test("player.start(atTime: 0) of a pattern played before allocates nothing on the calling thread")
    func playerStart() throws {
        let rig = try Rig()
        let hold = rig.device.hold()
        let player = try rig.engine.makeAdvancedPlayer(with: HapticPattern(events: [
            HapticEvent(
                eventType: .hapticContinuous,
                parameters: [.init(parameterID: .hapticIntensity, value: 1), .init(parameterID: .hapticSharpness, value: 0)],
                relativeTime: 0, duration: 0.04)
        ]))
        for _ in 0..<2 { _ = try rig.allocations(prepare: hold.prepare) { try player.start(atTime: 0) } }
        for _ in 0..<3 {
            #expect(try rig.allocations(prepare: hold.prepare) { try player.start(atTime: 0) } == 0)
        }
    }
}
