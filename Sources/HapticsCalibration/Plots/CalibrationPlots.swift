import Haptics
import HapticsTools

/// SVG plots of a calibration: the measured responses with the fitted curves, and a verification.
public enum CalibrationPlots {
    /// The height of each chart panel in calibration plots, in SVG user units.
    public static let panelHeight = 220.0

    static let measuredColor = "#1f77b4"
    static let fittedColor = "#d62728"
    static let bandColor = "#2ca02c"

    /// Every chart of `result` (and of `verification`, if given), stacked in one SVG document.
    public static func document(result: CalibrationResult, device: DeviceDescription, unit: OutputUnit, verification: VerificationReport? = nil) -> String {
        var charts: [SVGChart] = []
        for (measurement, fit) in zip(result.measurements, result.fits) {
            let name = device.channels[measurement.channel].name
            if !measurement.frequencySweep.isEmpty { charts.append(frequencyChart(name: name, measurement: measurement, fit: fit, unit: unit)) }
            charts.append(amplitudeChart(name: name, measurement: measurement, fit: fit, unit: unit))
        }
        if let verification { charts.append(verificationChart(verification, device: device)) }
        return SVGChart.stack(charts, panelHeight: panelHeight)
    }

    static func unitLabel(_ unit: OutputUnit) -> String { unit == .acceleration ? "g" : "relative" }

    static func fixed1(_ value: Double) -> String {
        let rounded = (value * 10).rounded() / 10
        return rounded == rounded.rounded() ? "\(Int(rounded)).0" : "\(rounded)"
    }

    /// Output by frequency: the measured sweep, the fitted resonance, and the usable band.
    public static func frequencyChart(name: String, measurement: ChannelMeasurement, fit: ChannelFit, unit: OutputUnit) -> SVGChart {
        let sweep = measurement.frequencySweep
        let low = sweep.first?.input ?? 0, high = sweep.last?.input ?? 1
        var series = [SVGChart.Series(label: "measured", points: sweep.map { ($0.input, $0.output) }, style: .dots, color: measuredColor)]
        if let resonance = fit.resonance {
            let points = (0...200).map { index -> (x: Double, y: Double) in
                let frequency = low + (high - low) * Double(index) / 200
                let value = resonance.output(at: frequency)
                return (frequency, (value * value + measurement.noiseFloor * measurement.noiseFloor).squareRoot())
            }
            series.append(.init(label: "fitted resonance", points: points, color: fittedColor))
        }
        var title = "\(name): output at drive \(format(measurement.sweepDrive)) by frequency"
        if let resonance = fit.resonance { title += " (f0 \(fixed1(resonance.resonantFrequency)) Hz, Q \(fixed1(resonance.qFactor))" + (fit.usableBand.map { ", band \(fixed1($0.lowerBound))–\(fixed1($0.upperBound)) Hz" } ?? "") + ")" }
        let top = (sweep.map(\.output).max() ?? 1) * 1.15
        var markers: [SVGChart.Marker] = []
        if let band = fit.usableBand {
            markers = [.init(x: band.lowerBound, label: "band", color: bandColor), .init(x: band.upperBound, label: "", color: bandColor)]
        }
        return SVGChart(
            title: title, xLabel: "frequency (Hz)", xRange: low...high,
            panels: [.init(title: "output (\(unitLabel(unit)))", yRange: 0...top, series: series)], markers: markers)
    }

    /// Output by drive up to the largest drive the backend holds steadily: the points measured from
    /// rest and while running, the fitted curve, and the dead zone or start threshold.
    public static func amplitudeChart(name: String, measurement: ChannelMeasurement, fit: ChannelFit, unit: OutputUnit) -> SVGChart {
        let points = measurement.amplitude
        let right = max(measurement.largestSteadyDrive, points.map(\.input).max() ?? 0, 0.05)
        let curve = (0...200).map { index -> (x: Double, y: Double) in
            let drive = right * Double(index) / 200
            let value = fit.amplitude.output(atDrive: drive)
            return (drive, (value * value + measurement.noiseFloor * measurement.noiseFloor).squareRoot())
        }
        let top = max(points.map(\.output).max() ?? 1, curve.map(\.y).max() ?? 1) * 1.1
        var title = measurement.amplitudeFrequency > 0 ? "\(name): output by drive at \(fixed1(measurement.amplitudeFrequency)) Hz" : "\(name): output by drive"
        title += " (curve from \(format(fit.amplitude.deadZone)), exponent \(format(fit.amplitude.exponent)), R² \(fixed(fit.amplitude.rSquared, 4)))"
        var series: [SVGChart.Series] = [
            .init(label: "measured from rest", points: points.map { ($0.input, $0.output) }, style: .dots, color: measuredColor),
            .init(label: "fitted curve", points: curve, color: fittedColor),
        ]
        if !measurement.runningAmplitude.isEmpty {
            series.insert(.init(label: "measured while running", points: measurement.runningAmplitude.map { ($0.input, $0.output) }, style: .dots, color: bandColor), at: 1)
        }
        var markers: [SVGChart.Marker] = []
        if let start = fit.amplitude.startDrive {
            markers.append(.init(x: start, label: "starts from rest", color: bandColor))
            // Hysteresis: once running it keeps going down to its stop.
            if let stop = fit.amplitude.stopDrive, stop < start - 1e-9 { markers.append(.init(x: stop, label: "stops", color: fittedColor)) }
            // The floor: the lowest output it starts at from rest, on the curve at the start.
            series.append(
                .init(
                    label: "floor from rest (\(format(fit.amplitude.output(atDrive: start))))",
                    points: [(0, fit.amplitude.output(atDrive: start)), (start, fit.amplitude.output(atDrive: start))], color: bandColor))
        } else if fit.amplitude.deadZone > 0 {
            markers.append(.init(x: fit.amplitude.deadZone, label: "dead zone", color: bandColor))
        }
        return SVGChart(
            title: title, xLabel: "drive (0…1)", xRange: 0...right, panels: [.init(title: "output (\(unitLabel(unit)))", yRange: 0...top, series: series)],
            markers: markers)
    }

    /// Requested against measured output for every reference played, with the ideal line.
    public static func verificationChart(_ report: VerificationReport, device: DeviceDescription) -> SVGChart {
        let top = max(report.all.map(\.measured).max() ?? 1, report.all.map(\.requested).max() ?? 1) * 1.1
        return SVGChart(
            title: "\(device.id): requested against measured (tones R² \(format(report.toneLinearity.rSquared)))", xLabel: "requested (g)",
            xRange: 0...top,
            panels: [
                .init(
                    title: "measured (g)", yRange: 0...top,
                    series: [
                        .init(label: "ideal", points: [(0, 0), (top, top)], color: "#888"),
                        .init(label: "tones", points: report.tones.map { ($0.requested, $0.measured) }, style: .dots, color: measuredColor),
                        .init(label: "taps", points: report.taps.map { ($0.requested, $0.measured) }, style: .dots, color: fittedColor),
                        .init(label: "effects", points: report.effects.map { ($0.requested, $0.measured) }, style: .dots, color: bandColor),
                    ])
            ])
    }
}
