import Ferry
import Foundation

/// Every step of an auto-migration run, kept compactly (24 bytes a step), to say what the migration
/// was doing while one of the app's operations was slow.
///
/// Times are monotonic seconds since the run's start; a step's end is when its event arrived
/// (shortly after its commit), its length the transaction's (`StepReport.elapsed`).
struct StepLog: Sendable {
    enum Kind: UInt8, Sendable {
        case move, moveFinished, count, cleanup, cleanupLast, checkpointWait
    }

    struct Entry: Sendable {
        let end: Double
        let seconds: Float
        let rows: Int32
        let kind: Kind

        var start: Double { end - Double(seconds) }

        var description: String {
            switch kind {
            case .move: return "move of \(rows) rows"
            case .moveFinished: return "move, table finished"
            case .count: return "cleanup, counting"
            case .cleanup: return "cleanup of \(rows) rows"
            case .cleanupLast: return "cleanup, last"
            case .checkpointWait: return "checkpoint wait"
            }
        }
    }

    private(set) var entries: [Entry] = []

    mutating func record(_ report: StepReport, seconds: Double, endingAt end: Double) {
        let kind: Kind
        var rows = report.rowsMoved
        switch report.kind {
        case .move: kind = report.tableFinished ? .moveFinished : .move
        case .cleanup:
            rows = report.sourceRowsDeleted
            kind = report.sourceCleaned ? .cleanupLast : rows == 0 ? .count : .cleanup
        case .checkpoint: kind = .checkpointWait
        }
        entries.append(Entry(end: end, seconds: Float(seconds), rows: Int32(clamping: rows), kind: kind))
    }

    mutating func recordCheckpointWait(seconds: Double, endingAt end: Double) {
        entries.append(Entry(end: end, seconds: Float(seconds), rows: 0, kind: .checkpointWait))
    }

    /// The steps that ran while an operation that ended at `end` and took `seconds` ran (or ended
    /// at most 1 ms before it began), in order.
    func steps(overlappingOperationEndingAt end: Double, seconds: Double) -> [Entry] {
        let begin = end - seconds
        // Entries are in order of their end: find the first that ends after the window opens.
        var low = 0, high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if entries[middle].end < begin - 0.001 { low = middle + 1 } else { high = middle }
        }
        var found: [Entry] = []
        var index = low
        while index < entries.count, entries[index].start <= end + 0.001 {
            found.append(entries[index])
            index += 1
        }
        return found
    }

    /// How much of the run the steps' transactions took, and the median gap from one step's end
    /// to the next one's start (what the loop between steps costs when nothing else wants the
    /// writer).
    var occupancy: String {
        guard let first = entries.first, let last = entries.last, last.end > first.start else { return "steps' occupancy: no steps" }
        let busy = entries.reduce(0.0) { $0 + Double($1.seconds) }
        var gaps: [Double] = []
        gaps.reserveCapacity(entries.count)
        for index in entries.indices.dropFirst() { gaps.append(entries[index].start - entries[index - 1].end) }
        gaps.sort()
        let median = gaps.isEmpty ? 0 : gaps[gaps.count / 2]
        return String(format: "steps' transactions took %.0f%% of the run (%d steps); median gap between steps %.3f ms", 100 * busy / (last.end - first.start),
                      entries.count, median * 1000)
    }

    /// One line per slow operation: how long, when, and the steps in its window (each: when it
    /// began relative to the operation, how long it took).
    func attribution(of operations: [(seconds: Double, at: Double, what: String)]) -> String {
        let lines = operations.map { operation -> String in
            let begin = operation.at - operation.seconds
            let steps = steps(overlappingOperationEndingAt: operation.at, seconds: operation.seconds)
            let covered = steps.reduce(0.0) { sum, step in
                sum + max(0, min(step.end, operation.at) - max(step.start, begin))
            }
            let list = steps.map { String(format: "%@ %.1f ms from %+.1f ms", $0.description, Double($0.seconds) * 1000, ($0.start - begin) * 1000) }
            return String(format: "%.1f ms %@ ending at %.2f s, %.0f%% of it under steps: ", operation.seconds * 1000, operation.what,
                          operation.at, operation.seconds > 0 ? 100 * covered / operation.seconds : 0)
                + (list.isEmpty ? "none" : list.joined(separator: "; "))
        }
        return "slowest app operations and the steps in their window: " + lines.joined(separator: " | ")
    }
}
