/// A small SVG line chart: the plots `haptic-cal` writes (recordings, measured responses, traces).
///
/// One or more panels share the x axis; each panel has its own y range and series. Output is a
/// standalone SVG document with no scripts or external references.
public struct SVGChart: Sendable {
    /// How a series is drawn.
    public enum Style: Sendable, Hashable {
        /// Straight lines between points.
        case line
        /// Steps: each value holds until the next point (drive frames).
        case step
        /// Dots only (measurements).
        case dots
    }

    /// One series of a panel.
    public struct Series: Sendable {
        /// The legend label.
        public var label: String
        /// The points, in x order.
        public var points: [(x: Double, y: Double)]
        /// How to draw them.
        public var style: Style
        /// An SVG colour.
        public var color: String

        /// A series.
        public init(label: String, points: [(x: Double, y: Double)], style: Style = .line, color: String) {
            self.label = label
            self.points = points
            self.style = style
            self.color = color
        }
    }

    /// A marker on the x axis across all panels (an event, a feedback).
    public struct Marker: Sendable {
        /// Where, in x units.
        public var x: Double
        /// Its label.
        public var label: String
        /// An SVG colour.
        public var color: String

        /// A marker.
        public init(x: Double, label: String, color: String = "#888") {
            self.x = x
            self.label = label
            self.color = color
        }
    }

    /// One panel: a y range and its series.
    public struct Panel: Sendable {
        /// The panel's title (its y quantity and unit).
        public var title: String
        /// The y range shown.
        public var yRange: ClosedRange<Double>
        /// The series.
        public var series: [Series]

        /// A panel.
        public init(title: String, yRange: ClosedRange<Double>, series: [Series]) {
            self.title = title
            self.yRange = yRange.lowerBound < yRange.upperBound ? yRange : yRange.lowerBound...(yRange.lowerBound + 1)
            self.series = series
        }
    }

    /// The chart's title.
    public var title: String
    /// The x axis label (quantity and unit).
    public var xLabel: String
    /// The x range shown.
    public var xRange: ClosedRange<Double>
    /// The panels, top to bottom.
    public var panels: [Panel]
    /// Markers across every panel.
    public var markers: [Marker]

    /// A chart.
    public init(title: String, xLabel: String, xRange: ClosedRange<Double>, panels: [Panel], markers: [Marker] = []) {
        self.title = title
        self.xLabel = xLabel
        self.xRange = xRange.lowerBound < xRange.upperBound ? xRange : xRange.lowerBound...(xRange.lowerBound + 1)
        self.panels = panels
        self.markers = markers
    }

    /// The SVG document.
    public func render(width: Double = 900, panelHeight: Double = 180) -> String {
        let (canvas, height) = draw(width: width, panelHeight: panelHeight)
        return canvas.document(width: width, height: height)
    }

    /// Charts one under the other in one SVG document, `gap` user units apart.
    public static func stack(_ charts: [SVGChart], width: Double = 900, panelHeight: Double = 180, gap: Double = 20) -> String {
        var page = SVGCanvas()
        var offset = 0.0
        for chart in charts {
            let (canvas, height) = chart.draw(width: width, panelHeight: panelHeight)
            page.group(translatedBy: offset, canvas)
            offset += height + gap
        }
        return page.document(width: width, height: max(offset - gap, 0))
    }

    /// The chart's elements on a canvas `width` user units wide, and its height.
    public func draw(width: Double = 900, panelHeight: Double = 180) -> (canvas: SVGCanvas, height: Double) {
        let left = 70.0, right = 170.0, top = 40.0, gap = 40.0, bottom = 50.0
        let plotWidth = width - left - right
        let height = top + Double(panels.count) * (panelHeight + gap) - gap + bottom
        func x(_ value: Double) -> Double { left + (value - xRange.lowerBound) / (xRange.upperBound - xRange.lowerBound) * plotWidth }
        var svg = SVGCanvas()
        svg.text(title, x: left, y: 22, size: 14, bold: true)
        for (index, panel) in panels.enumerated() {
            let panelTop = top + Double(index) * (panelHeight + gap)
            func y(_ value: Double) -> Double {
                let clamped = min(max(value, panel.yRange.lowerBound), panel.yRange.upperBound)
                return panelTop + panelHeight - (clamped - panel.yRange.lowerBound) / (panel.yRange.upperBound - panel.yRange.lowerBound) * panelHeight
            }
            svg.rect(x: left, y: panelTop, width: plotWidth, height: panelHeight, stroke: "#444")
            svg.text(panel.title, x: left - 8, y: panelTop - 6, bold: true)
            for tick in Self.ticks(panel.yRange) {
                svg.line(x1: left, y1: y(tick), x2: left + plotWidth, y2: y(tick), stroke: "#eee")
                svg.text(Self.label(tick), x: left - 6, y: y(tick) + 4, anchor: .end)
            }
            for marker in markers where xRange.contains(marker.x) {
                svg.line(x1: x(marker.x), y1: panelTop, x2: x(marker.x), y2: panelTop + panelHeight, stroke: marker.color, dash: "3,3")
                if index == 0 { svg.text(marker.label, x: x(marker.x) + 2, y: panelTop + 10, size: 9, fill: marker.color) }
            }
            for (number, series) in panel.series.enumerated() {
                let points = series.points.filter { $0.x.isFinite && $0.y.isFinite }
                switch series.style {
                case .dots:
                    for point in points { svg.circle(cx: x(point.x), cy: y(point.y), r: 2.5, fill: series.color) }
                case .line, .step:
                    var path: [(x: Double, y: Double)] = []
                    for (offset, point) in points.enumerated() {
                        if offset > 0, series.style == .step { path.append((x(point.x), y(points[offset - 1].y))) }
                        path.append((x(point.x), y(point.y)))
                    }
                    if series.style == .step, let last = points.last, last.x < xRange.upperBound {
                        path.append((x(xRange.upperBound), y(last.y)))
                    }
                    svg.polyline(path, stroke: series.color)
                }
                let legendY = panelTop + 14 + Double(number) * 16
                svg.rect(x: left + plotWidth + 12, y: legendY - 9, width: 10, height: 10, fill: series.color)
                svg.text(series.label, x: left + plotWidth + 26, y: legendY)
            }
        }
        let axisY = top + Double(panels.count) * (panelHeight + gap) - gap
        for tick in Self.ticks(xRange) { svg.text(Self.label(tick), x: x(tick), y: axisY + 16, anchor: .middle) }
        svg.text(xLabel, x: left + plotWidth / 2, y: axisY + 36, anchor: .middle)
        return (svg, height)
    }

    /// About five round tick values across `range`.
    static func ticks(_ range: ClosedRange<Double>) -> [Double] {
        let span = range.upperBound - range.lowerBound
        guard span > 0, span.isFinite else { return [range.lowerBound] }
        let raw = span / 5
        let magnitude = pow(10, (log10(raw)).rounded(.down))
        let step = [1.0, 2, 5, 10].map { $0 * magnitude }.first { $0 >= raw } ?? raw
        // A span below the resolution of its bounds (1e17...1e17 + 10) has no steps to take.
        guard step > 0, range.lowerBound + step > range.lowerBound else { return [range.lowerBound] }
        var ticks: [Double] = []
        var value = (range.lowerBound / step).rounded(.up) * step
        while value <= range.upperBound + step * 1e-9, ticks.count < 12 {
            ticks.append(value)
            value += step
        }
        return ticks
    }

    static func label(_ value: Double) -> String {
        let rounded = (value * 1000).rounded() / 1000
        return rounded == rounded.rounded() && abs(rounded) < 1e15 ? String(Int64(rounded)) : String(rounded)
    }
}

#if canImport(Glibc)
import Glibc
#endif
