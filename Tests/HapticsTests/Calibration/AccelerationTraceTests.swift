import Foundation
import HapticsCalibration
import Testing

/// The envelope peak of a short event, read by sensors of every common rate: an ADXL345 or an
/// MPU-6050 read through sysfs converts at 100–800 Hz, far below an LRA's 175 Hz vibration.
@Suite("Acceleration traces: envelope peaks from slow sensors")
struct AccelerationTraceTests {
    /// A 20 ms tap of 1 g at 175 Hz along one axis, read as magnitudes by a sensor converting at
    /// `rate` Hz from 0 to 140 ms (zero at rest), `plays` times with random phases, merged in time as
    /// the accelerometer source pools repetitions.
    /// `stalled`: a span in which every play but the first got no readings (its reader was held up).
    static func tap(rate: Double, plays: Int, seed: UInt64 = 7, clumped: Bool = false, stalled: Range<Double>? = nil) -> AccelerationTrace {
        var state = seed
        func uniform() -> Double {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Double(state >> 11) / Double(1 << 53)
        }
        var readings: [(time: Double, magnitude: Double)] = []
        for play in 0..<plays {
            // Clumped: a reader that starts each capture at the same pace meets the conversions at
            // nearly the same offsets every time.
            let phase = uniform() * 2 * .pi, offset = uniform() / rate * (clumped ? 0.1 : 1)
            var time = offset
            while time < 0.14 {
                let value = time < 0.02 ? sin(2 * .pi * 175 * time + phase) : 0
                if play == 0 || !(stalled?.contains(time) ?? false) { readings.append((time, abs(value))) }
                time += 1 / rate
            }
        }
        readings.sort { $0.time < $1.time }
        return AccelerationTrace(times: readings.map(\.time), magnitudes: readings.map(\.magnitude))
    }

    @Test("a tap read by a slow sensor peaks where a fast one puts it, pooled or read once", arguments: [100.0, 200, 400, 800])
    func slowSensor(rate: Double) {
        let reference = Self.tap(rate: 4000, plays: 10).envelopePeak()
        let pooled = Self.tap(rate: rate, plays: 10).envelopePeak()
        #expect(reference > 0.3, "a 4 kHz sensor: \(reference) g")
        #expect(abs(pooled / reference - 1) <= 0.2, "\(rate) Hz, 10 plays pooled: \(pooled) g, 4 kHz: \(reference) g")
        // Read once, a few readings at random phases: no accuracy to expect, but never nothing.
        let once = Self.tap(rate: rate, plays: 1, seed: 11).envelopePeak()
        #expect(once > 0, "\(rate) Hz, one play: \(once) g")
        // Three plays whose readings come in clumps.
        let clumps = Self.tap(rate: rate, plays: 3, seed: 5, clumped: true).envelopePeak()
        #expect(clumps > 0.3 * reference, "\(rate) Hz, three clumped plays: \(clumps) g, 4 kHz: \(reference) g")
    }

    /// Ten plays pooled at 400 Hz, where a busy machine held the reader up over the tap in nine of
    /// them: the trace is dense around the tap and sparse over it (one play's readings), so no window
    /// over the tap held readings in most of its 1 ms bins. Measured as nothing before each reading
    /// stood for the time halfway to its neighbours; a guest under emulation read 3 of 29 short events so.
    @Test("a tap over which the reader was held up in most plays still reads")
    func heldUpReader() {
        let reference = Self.tap(rate: 4000, plays: 10).envelopePeak()
        for seed: UInt64 in [3, 5, 7, 11, 13] {
            let trace = Self.tap(rate: 400, plays: 10, seed: seed, stalled: 0..<0.05)
            let peak = trace.envelopePeak()
            #expect(peak > 0.3 * reference, "seed \(seed): \(peak) g, 4 kHz: \(reference) g")
            #expect(peak < 1.5 * reference, "seed \(seed): \(peak) g, 4 kHz: \(reference) g")
        }
    }

    /// A drive whose vibration grows in a straight line to its full level at 51 ms, read every
    /// 1.25 ms: it passes 90 % at 45.9 ms. The smoothed amplitude is checked every quarter of a
    /// 12.5 ms window, so the first check at or past 90 % comes at 46.9 ms; the crossing between the
    /// checks is where the rise is.
    @Test("a spin-up is read where the vibration crosses 90 %, not at the next step of the analysis")
    func riseBetweenSteps() {
        let times = stride(from: 0.0, to: 0.3, by: 0.00125).map { $0 }
        // Magnitudes of a vibration of amplitude A read without phase: A / √2.
        let trace = AccelerationTrace(times: times, magnitudes: times.map { min($0 / 0.051, 1) / 2.0.squareRoot() })
        let reading = trace.steadyPart(end: 0.3, window: 0.1, noise: 0.001)
        let rise = reading.riseTime ?? 0
        #expect(abs(rise - 0.0459) < 0.0004, "rise \(rise) s")
        #expect(reading.settled && abs(reading.amplitude - 1) < 0.01)
    }
}
