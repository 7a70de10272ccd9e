import Foundation
import Haptics
import HapticsSupport
import Synchronization
import Testing

@Suite("Clocks")
struct ClockTests {
    @Test("the system clock runs actions at their deadlines, in order, and honours cancellation")
    func systemClockOrder() throws {
        let clock = SystemClock(name: "clock-test", realtime: false)
        let ran = Mutex<[(Int, HapticInstant)]>([])
        let start = clock.now()
        let offsets = [0.030, 0.010, 0.020, 0.010]
        var ids: [ScheduledActionID] = []
        for (index, offset) in offsets.enumerated() {
            ids.append(clock.schedule(at: start.advanced(bySeconds: offset)) { ran.withLock { $0.append((index, HapticInstant.monotonicNow())) } })
        }
        clock.cancel(ids[2])
        Thread.sleep(forTimeInterval: 0.1)
        let order = ran.withLock { $0 }
        #expect(order.map(\.0) == [1, 3, 0], "deadline order, ties in scheduling order, the cancelled one never")
        for (index, time) in order {
            #expect(time >= start.advanced(bySeconds: offsets[index]), "never early")
        }
        #expect(clock.wakeUps >= 2)
    }

    @Test("the manual clock runs due actions on advance, including ones scheduled inside the span")
    func manualClock() {
        let clock = ManualClock()
        let start = clock.now()
        let ran = Mutex<[Double]>([])
        clock.schedule(at: start.advanced(bySeconds: 1)) {
            ran.withLock { $0.append(clock.now().seconds(since: start)) }
            clock.schedule(at: clock.now().advanced(bySeconds: 0.5)) { ran.withLock { $0.append(clock.now().seconds(since: start)) } }
        }
        clock.advance(bySeconds: 0.999)
        #expect(ran.withLock { $0 }.isEmpty)
        clock.advance(bySeconds: 2)
        #expect(ran.withLock { $0 } == [1, 1.5])
        #expect(clock.now() == start.advanced(bySeconds: 2.999))
        #expect(clock.nextDeadline == nil)
    }

    @Test("seconds to nanoseconds rounds half away from zero exactly as rounded() does, and saturates")
    func nanosecondRounding() {
        func reference(_ seconds: Double) -> UInt64 {
            let nanoseconds = (seconds * 1e9).rounded()
            guard nanoseconds > 0 else { return 0 }
            return nanoseconds < 0x1p64 ? UInt64(nanoseconds) : .max
        }
        var values: [Double] = [
            0, -0.0, 1e-10, 4.9e-10, 5e-10, 5.000000000000001e-10, 1.5e-9, 2.5e-9, 0.0125, 0.04, 0.5, 1, 2.5,
            4_503_599.627_370_496, 9_007_199.254_740_992, 9_223_372_036.854_775, 9_223_372_036.854_777,
            18_446_744_073.709_55, 18_446_744_073.709_553, 1e300, .infinity, -1, -.infinity, .nan,
            .leastNonzeroMagnitude, .ulpOfOne,
        ]
        // Halves and their neighbours, where a rounding that differs would show.
        for whole in [0.0, 1, 7, 12_345, 1e6, 4_503_599_627_370_495] {
            let half = (whole + 0.5) / 1e9
            values += [half, half.nextUp, half.nextDown]
        }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<100_000 { values.append(Double.random(in: 0...20_000, using: &generator)) }
        for _ in 0..<10_000 { values.append(Double(Int.random(in: 0...1_000_000_000, using: &generator)) / 2e9) }
        for value in values {
            #expect(Monotonic.nanoseconds(value) == reference(value), "\(value) s")
        }
    }

    @Test("instants: arithmetic, clamping at zero, description")
    func instants() {
        let instant = HapticInstant(nanoseconds: 1_500_000_000)
        #expect(instant.seconds == 1.5)
        #expect(instant.advanced(bySeconds: -2).nanoseconds == 0)
        #expect(instant.advanced(byNanoseconds: 250).nanoseconds(since: instant) == 250)
        #expect(HapticInstant(seconds: -1).nanoseconds == 0)
        #expect("\(HapticInstant(nanoseconds: 2_000_000_005))" == "2.000000005s")
    }

    @Test("instants saturate instead of trapping: huge, infinite and NaN seconds, far-apart instants")
    func saturation() {
        let last = HapticInstant(nanoseconds: .max)
        #expect(HapticInstant(seconds: 1e300) == last)
        #expect(HapticInstant(seconds: .infinity) == last)
        #expect(HapticInstant(seconds: 18_446_744_073.709_553) == last, "the first Double past UInt64.max nanoseconds")
        #expect(HapticInstant(seconds: .nan).nanoseconds == 0)
        #expect(HapticInstant(seconds: -.infinity).nanoseconds == 0)

        let instant = HapticInstant(nanoseconds: 5_000_000_000)
        #expect(instant.advanced(bySeconds: 1e300) == last)
        #expect(instant.advanced(bySeconds: .infinity) == last)
        #expect(instant.advanced(bySeconds: -1e300).nanoseconds == 0)
        #expect(instant.advanced(bySeconds: .nan) == instant)
        #expect(instant.advanced(byNanoseconds: .max).advanced(byNanoseconds: .max) == last)
        #expect(instant.advanced(byNanoseconds: .min).nanoseconds == 0)
        #expect(last.nanoseconds(since: HapticInstant(nanoseconds: 0)) == .max)
        #expect(HapticInstant(nanoseconds: 0).nanoseconds(since: last) == .min)
        #expect(HapticInstant(nanoseconds: 0).nanoseconds(since: HapticInstant(nanoseconds: 1 << 63)) == .min)
        #expect(instant.nanoseconds(since: instant.advanced(bySeconds: 2)) == -2_000_000_000)
    }
}
