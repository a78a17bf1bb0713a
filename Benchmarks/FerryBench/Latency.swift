import Foundation
import Histogram

/// Monotonic time in seconds.
@inline(__always)
func now() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// Latencies of steps, batches or app operations: an HdrHistogram (nanosecond resolution, three
/// significant digits) for the percentiles, and the samples over time for the plot.
struct LatencyRecorder: Sendable {
    /// Latencies in nanoseconds: a primary-key read takes 6-7 µs, so microseconds would round its
    /// median, and the ratios of two medians, by up to 15%.
    private(set) var histogram = Histogram<UInt64>(highestTrackableValue: 600_000_000_000, numberOfSignificantValueDigits: .three)
    /// (seconds since the recorder's start, latency in seconds), in order.
    private(set) var samples: [(at: Double, seconds: Double)] = []
    private let keepsSamples: Bool
    let start: Double

    init(keepsSamples: Bool = true, start: Double = now()) {
        self.keepsSamples = keepsSamples
        self.start = start
        histogram.autoResize = true
    }

    /// Records a latency that ended at `end` (monotonic seconds).
    mutating func record(_ seconds: Double, endingAt end: Double = now()) {
        _ = histogram.record(UInt64(max(1, (seconds * 1e9).rounded())))
        if keepsSamples { samples.append((end - start, seconds)) }
    }

    var count: Int { Int(histogram.totalCount) }

    /// The summary in milliseconds.
    var summary: LatencySummary {
        guard histogram.totalCount > 0 else { return LatencySummary(count: 0, mean: 0, p50: 0, p90: 0, p99: 0, p999: 0, max: 0) }
        func ms(_ percentile: Double) -> Double { Double(histogram.valueAtPercentile(percentile)) / 1e6 }
        return LatencySummary(count: count, mean: histogram.mean / 1e6, p50: ms(50), p90: ms(90), p99: ms(99), p999: ms(99.9),
                              max: Double(histogram.maxRecorded) / 1e6)
    }
}

/// Percentiles of a latency distribution, in milliseconds.
struct LatencySummary: Encodable, Sendable {
    let count: Int
    let mean: Double
    let p50: Double
    let p90: Double
    let p99: Double
    let p999: Double
    let max: Double
}

/// A thread-safe `LatencyRecorder` (the auto-migration events and the app thread record into it).
final class SharedRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var recorder: LatencyRecorder

    init(keepsSamples: Bool = true, start: Double = now()) { recorder = LatencyRecorder(keepsSamples: keepsSamples, start: start) }

    func record(_ seconds: Double, endingAt end: Double = now()) {
        lock.lock()
        recorder.record(seconds, endingAt: end)
        lock.unlock()
    }

    var value: LatencyRecorder {
        lock.lock()
        defer { lock.unlock() }
        return recorder
    }
}

/// The slowest steps of a run, with when they happened and what they did.
struct SlowestSteps: Sendable {
    private(set) var entries: [(seconds: Double, at: Double, what: String)] = []
    let keep: Int

    init(keep: Int = 3) { self.keep = keep }

    mutating func consider(_ seconds: Double, at: Double, what: String) {
        guard entries.count < keep || seconds > entries[entries.count - 1].seconds else { return }
        entries.append((seconds, at, what))
        entries.sort { $0.seconds > $1.seconds }
        if entries.count > keep { entries.removeLast() }
    }

    var description: String {
        "slowest steps: " + entries.map { String(format: "%.1f ms at %.2f s (", $0.seconds * 1000, $0.at) + $0.what + ")" }.joined(separator: ", ")
    }
}

/// The largest size each watched WAL file reached.
struct WALWatch: Sendable {
    let files: [(label: String, path: String)]
    private(set) var largest: [Int]

    init(_ files: [(label: String, path: String)]) {
        self.files = files
        largest = Array(repeating: 0, count: files.count)
    }

    mutating func sample() {
        for (i, file) in files.enumerated() {
            var info = stat()
            if stat(file.path, &info) == 0 { largest[i] = max(largest[i], Int(info.st_size)) }
        }
    }

    var description: String {
        "largest WAL: " + zip(files, largest).map { file, size in file.label + String(format: " %.1f MB", Double(size) / 1_048_576) }.joined(separator: ", ")
    }
}
