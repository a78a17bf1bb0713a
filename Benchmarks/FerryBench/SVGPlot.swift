import Foundation

/// Step latency over time as an SVG: one polyline per strategy, time since the strategy started on
/// x, latency in ms on y. Each pixel column keeps its highest sample, so spikes stay visible;
/// samples above the y range are drawn at the top edge (the label says where it was clipped).
enum SVGPlot {
    struct Series {
        let name: String
        let samples: [(at: Double, seconds: Double)]
    }

    static let colors = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"]

    static func render(_ series: [Series], title: String) -> String {
        let width = 1100.0, height = 560.0
        let left = 70.0, right = 220.0, top = 40.0, bottom = 60.0
        let plotWidth = width - left - right, plotHeight = height - top - bottom
        let drawn = series.filter { !$0.samples.isEmpty }
        let maxTime = max(drawn.flatMap { $0.samples.map(\.at) }.max() ?? 1, 0.001)
        let maxLatency = (drawn.flatMap { $0.samples.map(\.seconds) }.max() ?? 0.01) * 1000
        let yTop = axisTop(min(maxLatency, 100))
        let xTop = axisTop(maxTime)
        func x(_ t: Double) -> Double { left + t / xTop * plotWidth }
        func y(_ ms: Double) -> Double { top + plotHeight - min(ms, yTop) / yTop * plotHeight }

        var svg: [String] = []
        svg.append(##"<svg xmlns="http://www.w3.org/2000/svg" width="\##(Int(width))" height="\##(Int(height))" viewBox="0 0 \##(Int(width)) \##(Int(height))" font-family="sans-serif" font-size="12">"##)
        svg.append(##"<rect x="0" y="0" width="\##(Int(width))" height="\##(Int(height))" fill="white"/>"##)
        svg.append(##"<text x="\##(left)" y="22" font-size="15" font-weight="bold">\##(escape(title))</text>"##)
        // Grid and ticks.
        let yTick = niceCeiling(yTop / 10), xTick = niceCeiling(xTop / 10)
        for i in 0...Int((yTop / yTick).rounded()) {
            let ms = yTick * Double(i)
            let yy = y(ms)
            svg.append(##"<line x1="\##(left)" y1="\##(f(yy))" x2="\##(left + plotWidth)" y2="\##(f(yy))" stroke="#e5e5e5"/>"##)
            svg.append(##"<text x="\##(left - 8)" y="\##(f(yy + 4))" text-anchor="end">\##(label(ms))</text>"##)
        }
        for i in 0...Int((xTop / xTick).rounded()) {
            let t = xTick * Double(i)
            let xx = x(t)
            svg.append(##"<line x1="\##(f(xx))" y1="\##(top)" x2="\##(f(xx))" y2="\##(top + plotHeight)" stroke="#f0f0f0"/>"##)
            svg.append(##"<text x="\##(f(xx))" y="\##(top + plotHeight + 18)" text-anchor="middle">\##(label(t))</text>"##)
        }
        // Axes and their labels.
        svg.append(##"<line x1="\##(left)" y1="\##(top + plotHeight)" x2="\##(left + plotWidth)" y2="\##(top + plotHeight)" stroke="black"/>"##)
        svg.append(##"<line x1="\##(left)" y1="\##(top)" x2="\##(left)" y2="\##(top + plotHeight)" stroke="black"/>"##)
        svg.append(##"<text x="\##(left + plotWidth / 2)" y="\##(height - 15)" text-anchor="middle">time since the strategy started (s)</text>"##)
        svg.append(##"<text transform="translate(18 \##(top + plotHeight / 2)) rotate(-90)" text-anchor="middle">step / batch latency (ms)\##(maxLatency > yTop ? ", clipped at \(label(yTop))" : "")</text>"##)
        // One polyline per strategy: the highest sample of each pixel column.
        for (index, s) in drawn.enumerated() {
            let color = colors[index % colors.count]
            var columns: [Int: Double] = [:]
            for sample in s.samples {
                let column = Int(x(sample.at).rounded())
                columns[column] = max(columns[column] ?? 0, sample.seconds * 1000)
            }
            let points = columns.keys.sorted().map { "\($0),\(f(y(columns[$0]!)))" }.joined(separator: " ")
            svg.append(##"<polyline fill="none" stroke="\##(color)" stroke-opacity="0.8" stroke-width="1" stroke-linejoin="round" points="\##(points)"/>"##)
            let ly = top + 10 + Double(index) * 20
            svg.append(##"<line x1="\##(left + plotWidth + 15)" y1="\##(f(ly))" x2="\##(left + plotWidth + 40)" y2="\##(f(ly))" stroke="\##(color)" stroke-width="3"/>"##)
            svg.append(##"<text x="\##(left + plotWidth + 46)" y="\##(f(ly + 4))">\##(escape(s.name))</text>"##)
        }
        svg.append("</svg>")
        return svg.joined(separator: "\n") + "\n"
    }

    /// The top of an axis: the first multiple of a 1-2-5 tick (about a tenth of `value`) at or above it.
    static func axisTop(_ value: Double) -> Double {
        let tick = niceCeiling(value / 10)
        return max(tick, (value / tick).rounded(.up) * tick)
    }

    /// 1, 2 or 5 times a power of ten, at least `value`.
    static func niceCeiling(_ value: Double) -> Double {
        guard value > 0 else { return 1 }
        let power = pow(10, floor(log10(value)))
        for step in [1.0, 2, 5, 10] where step * power >= value { return step * power }
        return 10 * power
    }

    static func f(_ value: Double) -> String { String(format: "%.1f", value) }
    static func label(_ value: Double) -> String { value == value.rounded() ? String(Int(value)) : String(format: "%g", value) }
    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }
}
