import Haptics
import HapticsTools

/// SVG of a replayed trace: for a pointer, the targets (visible frames and hit regions), the raw and
/// the displayed path and where each feedback fired; for a knob, the position over time against its
/// detents. When the device recorded its frames, they are drawn below on the same time axis.
public enum TracePlot {
    /// The SVG document.
    public static func svg(
        trace: InteractionTrace, fired: [TraceReplay.Fired], parameters: InteractionParameters = InteractionParameters(),
        recording: (Recording, deviceID: String)? = nil
    ) -> String {
        var parts: [(canvas: SVGCanvas, height: Double)] = []
        switch trace.content {
        case .pointer(let targets, let guides, let samples):
            parts.append(pointerCanvas(targets: targets, guides: guides, samples: samples, fired: fired, parameters: parameters))
        case .knob(let configuration, let samples):
            let start = samples.first?.time ?? 0
            let positions = samples.map { (x: ($0.time - start) * 1000, y: $0.position) }
            let end = max((samples.last?.time ?? start) - start, 0.001) * 1000
            let detentLines = configuration.detents.map { detent in
                SVGChart.Series(label: "", points: [(0, detent), (end, detent)], color: "#ddd")
            }
            let low = min(configuration.range.lowerBound, positions.map(\.y).min() ?? 0)
            let high = max(configuration.range.upperBound, positions.map(\.y).max() ?? 1)
            let chart = SVGChart(
                title: "knob \(trace.source): \(configuration.detents.count) detents, \(fired.filter { $0.effect != nil }.count) feedback events",
                xLabel: "time (ms)", xRange: 0...end,
                panels: [SVGChart.Panel(title: "position", yRange: low...high, series: detentLines + [.init(label: "position", points: positions, color: "#1f77b4")])],
                markers: fired.filter { $0.effect != nil }.map { .init(x: ($0.time - start) * 1000, label: $0.event.description, color: color(for: $0)) })
            parts.append(chart.draw(panelHeight: 260))
        }
        if let (recording, deviceID) = recording {
            parts.append(RecordingPlot.chart(recording: recording, deviceID: deviceID).draw())
        }
        var document = SVGCanvas()
        var offset = 0.0
        for part in parts {
            document.group(translatedBy: offset, part.canvas)
            offset += part.height
        }
        return document.document(width: 900, height: offset)
    }

    private static func color(for fired: TraceReplay.Fired) -> String {
        switch fired.decision {
        case .played?: "#2ca02c"
        case .deferred?: "#ff7f0e"
        default: "#bbb"
        }
    }

    private static func pointerCanvas(
        targets: [PointerTarget], guides: [AlignmentSnapper.Guide], samples: [PointerSample], fired: [TraceReplay.Fired],
        parameters: InteractionParameters
    ) -> (canvas: SVGCanvas, height: Double) {
        let regions = HitRegions(targets: targets, parameters: parameters)
        let frames = PointerModel.process(samples, targets: targets, parameters: parameters).frames
        let bounds = targets.map { regions.regions[$0.id]!.bounds } + samples.map { Rect(x: $0.position.x, y: $0.position.y, width: 0, height: 0) }
        let minX = (bounds.map(\.x).min() ?? 0) - 20, minY = (bounds.map(\.y).min() ?? 0) - 20
        let maxX = (bounds.map(\.maxX).max() ?? 100) + 20, maxY = (bounds.map(\.maxY).max() ?? 100) + 20
        let scale = min(860 / max(maxX - minX, 1), 600 / max(maxY - minY, 1))
        func x(_ value: Double) -> Double { 20 + (value - minX) * scale }
        func y(_ value: Double) -> Double { 40 + (value - minY) * scale }
        var svg = SVGCanvas()
        svg.text("pointer trace: \(samples.count) samples, \(fired.filter { $0.effect != nil }.count) feedback events", x: 20, y: 22, size: 14, bold: true)
        for target in targets {
            let region = regions.regions[target.id]!.bounds
            svg.rect(x: x(region.x), y: y(region.y), width: region.width * scale, height: region.height * scale, stroke: "#999", dash: "4,3")
            let style: String
            switch target.effect {
            case .highlight: style = "highlight"
            case .lift: style = "lift"
            case .hover: style = "hover"
            case .beam: style = "beam"
            }
            if case .circle = target.shape {
                svg.circle(
                    cx: x(target.frame.center.x), cy: y(target.frame.center.y), r: min(target.frame.width, target.frame.height) / 2 * scale, fill: "#eef",
                    stroke: "#447")
            } else {
                svg.rect(
                    x: x(target.frame.x), y: y(target.frame.y), width: target.frame.width * scale, height: target.frame.height * scale, fill: "#eef",
                    stroke: "#447", rx: 4)
            }
            svg.text("\(target.id) (\(style))", x: x(target.frame.x + 3), y: y(target.frame.y + 12), size: 10)
        }
        for guide in guides {
            if guide.vertical {
                svg.line(x1: x(guide.position), y1: y(minY), x2: x(guide.position), y2: y(maxY), stroke: "#c6c", dash: "2,4")
            } else {
                svg.line(x1: x(minX), y1: y(guide.position), x2: x(maxX), y2: y(guide.position), stroke: "#c6c", dash: "2,4")
            }
        }
        svg.polyline(frames.map { (x($0.raw.x), y($0.raw.y)) }, stroke: "#aaa", width: 1)
        svg.polyline(frames.map { (x($0.displayed.x), y($0.displayed.y)) }, stroke: "#1f77b4", width: 1.5)
        for event in fired where event.effect != nil {
            guard let frame = frames.last(where: { $0.time <= event.time }) else { continue }
            svg.circle(cx: x(frame.displayed.x), cy: y(frame.displayed.y), r: 5, fill: color(for: event))
            svg.text(
                "\(JSONValue.format((event.time * 1000).rounded())) ms \(event.effect!)", x: x(frame.displayed.x), y: y(frame.displayed.y), size: 9, dx: 7)
        }
        svg.text(
            "grey: raw path; blue: displayed (magnetism, line keeping); dashed: hit regions; dots: feedback (green played, orange deferred, grey coalesced)",
            x: 20, y: 660, size: 10)
        return (svg, 680)
    }
}
