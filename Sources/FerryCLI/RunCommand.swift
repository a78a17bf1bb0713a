#if CommandLineTool
import ArgumentParser
import Dispatch
import Foundation
import Ferry

/// `ferry run DB [--key K] [--budget-ms N] [--drain]`: migrates every table to completion, then
/// cleans the sources, with a live progress line. Ctrl-C stops between batches (a batch in flight
/// rolls back); the next run resumes where this one stopped.
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Migrate every table to completion and clean the sources (Ctrl-C stops; run again to resume)."
    )

    @OptionGroup var target: DatabaseOptions

    /// The library's default pacing (`AutoMigrationSchedule()`), used when neither the command
    /// line nor the plan file sets one.
    static let defaults = AutoMigrationSchedule()

    @Option(name: .customLong("budget-ms"), help: "The time budget of one batch, in milliseconds (default: the plan's, or \(Int(Self.defaults.budget / .milliseconds(1)))).")
    var budgetMilliseconds: Int?

    @Option(name: .customLong("interval-ms"), help: "The pause between batches, in milliseconds, that leaves room for the app's writes (default: the plan's, or \(Int(Self.defaults.interval / .milliseconds(1)))).")
    var intervalMilliseconds: Int?

    @Flag(help: "Run batches back to back, without pauses.")
    var drain = false

    /// Exit status after Ctrl-C (128 + SIGINT).
    static let interruptedStatus: Int32 = 130

    func validate() throws {
        if let budgetMilliseconds, budgetMilliseconds < 1 { throw ValidationError("--budget-ms must be at least 1") }
        if let intervalMilliseconds, intervalMilliseconds < 0 { throw ValidationError("--interval-ms must not be negative") }
    }

    func run() async throws {
        try await reportingErrors {
            let opened = try target.open()
            defer { opened.database.close() }
            let schedule = opened.planFile?.schedule
            // Unset here and in the plan: the library's auto-migration schedule (one default for both).
            let budget = budgetMilliseconds.map { Duration.milliseconds($0) } ?? schedule?.budget ?? Self.defaults.budget
            let pause: Duration = (drain || schedule?.drain == true) ? .zero
                : intervalMilliseconds.map { Duration.milliseconds($0) } ?? schedule?.interval ?? Self.defaults.interval
            let database = opened.database
            let display = ProgressDisplay(interactive: isatty(1) == 1, initial: try database.progress())

            // Ctrl-C cancels the task running the batches; the writer interrupts the batch in flight,
            // which rolls back, and the loop stops. A second Ctrl-C kills the process. The handler is
            // in place before the first batch starts.
            let cancellation = Cancellation()
            signal(SIGINT, SIG_IGN)
            let interrupt = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
            interrupt.setEventHandler {
                cancellation.cancel()
                signal(SIGINT, SIG_DFL)
            }
            interrupt.resume()
            let task = Task { () async throws -> Summary in
                var summary = Summary()
                while true {
                    try Task.checkCancellation()
                    guard let report = try await database.step(budget: budget) else { break }
                    summary.record(report)
                    display.update(with: report)
                    if pause > .zero { try await Task.sleep(for: pause) } else { await Task.yield() }
                }
                return summary
            }
            cancellation.attach(task)
            let result = await task.result
            interrupt.cancel()
            signal(SIGINT, SIG_DFL)
            display.finish()

            switch result {
            case .success(let summary):
                print("done: \(summary.rowsMoved) row(s) moved\(summary.quarantined > 0 ? ", \(summary.quarantined) quarantined" : ""), "
                      + "\(summary.sourceRowsDeleted) source row(s) cleaned, in \(summary.batches) step(s) "
                      + String(format: "(%.2f s)", (ContinuousClock.now - summary.start).seconds))
            case .failure(let error):
                let cancelled = error is CancellationError || (error as? FerryError) == .cancelled
                guard cancelled else { throw error }
                let progress = try? database.progress()
                StandardError.print("interrupted: \(progress?.rowsMoved ?? 0) row(s) moved so far, \(progress?.rowsLeft ?? 0) left; run again to resume")
                throw ExitCode(Self.interruptedStatus)
            }
        }
    }

    /// Totals of one run.
    struct Summary: Sendable {
        var start = ContinuousClock.now
        var rowsMoved = 0
        var quarantined = 0
        var sourceRowsDeleted = 0
        var batches = 0

        mutating func record(_ report: StepReport) {
            batches += 1
            rowsMoved += report.rowsMoved
            quarantined += report.rowsQuarantined
            sourceRowsDeleted += report.sourceRowsDeleted
        }
    }
}

/// Cancels a task once it is attached, whether the request came before or after.
final class Cancellation: @unchecked Sendable {
    private let lock = NSLock()
    private var requested = false
    private var task: Task<RunCommand.Summary, any Error>?

    /// Requests cancellation: cancels the attached task, or the task attached later.
    func cancel() {
        lock.lock()
        requested = true
        let task = self.task
        lock.unlock()
        task?.cancel()
    }

    /// Attaches the task to cancel (at once if cancellation was already requested).
    func attach(_ task: Task<RunCommand.Summary, any Error>) {
        lock.lock()
        self.task = task
        let cancelNow = requested
        lock.unlock()
        if cancelNow { task.cancel() }
    }
}

/// The progress line of `ferry run`: rewritten in place with carriage returns on a terminal, plain
/// lines (at most one a second, plus one per finished table) otherwise.
final class ProgressDisplay: @unchecked Sendable {
    /// One table's progress in this run.
    private struct TableState {
        var moved: Int64 = 0
        var left: Int64
        var started: ContinuousClock.Instant?
        var finished = false
    }

    private let lock = NSLock()
    private let interactive: Bool
    private var tables: [(name: String, state: TableState)] = []
    private var lastPrint: ContinuousClock.Instant?
    private var lineShown = false
    private var cleaned = 0

    /// A display for the tables of `initial`.
    init(interactive: Bool, initial: MigrationProgress) {
        self.interactive = interactive
        tables = initial.tables.map { ($0.name, TableState(left: $0.rowsLeft, finished: $0.state == .finished)) }
    }

    /// Records a batch and refreshes the display when due.
    func update(with report: StepReport) {
        guard report.kind != .checkpoint else { return }  // a wait for the WAL: no table's progress
        lock.lock()
        defer { lock.unlock() }
        let now = ContinuousClock.now
        var index = tables.firstIndex { $0.name.lowercased() == report.table.lowercased() }
        if index == nil {
            tables.append((report.table, TableState(left: report.rowsLeft)))
            index = tables.count - 1
        }
        var state = tables[index!].state
        var force = false
        switch report.kind {
        case .move:
            if state.started == nil { state.started = now - report.elapsed; force = true }
            state.moved += Int64(report.rowsMoved)
            state.left = report.rowsLeft
            if report.tableFinished { state.finished = true; state.left = 0; force = true }
        case .cleanup:
            cleaned += report.sourceRowsDeleted
        case .checkpoint:
            break
        }
        tables[index!].state = state
        let interval: Duration = interactive ? .milliseconds(100) : .seconds(1)
        if force || lastPrint.map({ now - $0 >= interval }) ?? true {
            lastPrint = now
            show(line(now: now))
        }
    }

    /// Ends the in-place line.
    func finish() {
        lock.lock()
        defer { lock.unlock() }
        guard !tables.isEmpty || cleaned > 0 else { return }
        show(line(now: .now))
        if interactive && lineShown { print("") }
    }

    private func show(_ text: String) {
        if interactive {
            // One terminal row: a wrapped line could not be rewritten in place.
            var size = winsize()
            let width = ioctl(1, UInt(TIOCGWINSZ), &size) == 0 && size.ws_col > 0 ? Int(size.ws_col) : 80
            let shown = text.count < width ? text : String(text.prefix(max(1, width - 2))) + "…"
            print("\r\u{1B}[K" + shown, terminator: "")
            fflush(nil)
            lineShown = true
        } else {
            print(text)
            fflush(nil)
        }
    }

    private func line(now: ContinuousClock.Instant) -> String {
        var parts: [String] = []
        for (name, state) in tables {
            if state.finished {
                parts.append("\(name): \(state.moved) moved, finished")
                continue
            }
            guard let started = state.started else {
                parts.append("\(name): pending, \(state.left) left")
                continue
            }
            let seconds = (now - started).seconds
            let rate = seconds > 0 ? Double(state.moved) / seconds : 0
            let eta = StatusCommand.eta(rowsLeft: state.left, finished: false, rate: rate)
            parts.append("\(name): \(state.moved) moved, \(state.left) left, " + String(format: "%.0f rows/s", rate)
                         + ", ETA \(StatusCommand.formatETA(eta))")
        }
        if cleaned > 0 { parts.append("\(cleaned) source row(s) cleaned") }
        return parts.joined(separator: " | ")
    }
}
#endif
