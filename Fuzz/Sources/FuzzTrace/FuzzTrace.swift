import FuzzSupport
import Haptics
import HapticsInteraction

/// Pointer and knob traces: any text gives a trace or an `InteractionError` naming the line. An
/// accepted trace yields events at finite times, replays on a real engine (manual clock) with one
/// outcome per event, and plots.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTrace(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let trace: InteractionTrace
    do {
        trace = try InteractionTrace(text: String(decoding: input(data, size), as: UTF8.self), source: "fuzz.trace")
    } catch {
        require(!error.description.isEmpty, "an error without a message")
        return 0
    }
    let events = trace.events()
    for (time, event) in events { require(time.isFinite, "\(event) at \(time)") }
    do {
        let rig = try FuzzEngine()
        let clock = rig.clock
        let fired = TraceReplay.run(trace, on: rig.engine, tail: 0.05) { end in clock.advance(to: end) }
        require(fired.count == events.count, "\(events.count) events, \(fired.count) replayed")
        for entry in fired {
            require(entry.strength.isFinite && (0...1).contains(entry.strength), "strength \(entry.strength)")
            _ = entry.description
        }
        _ = TracePlot.svg(trace: trace, fired: fired)
        rig.finish(after: 0.5)
    } catch {
        require(false, "no engine: \(error)")
    }
    return 0
}
