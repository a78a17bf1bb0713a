import Synchronization

/// Whether the app wants the writer: a write waits for it now, or the app wrote recently.
///
/// A step that may go on moving batches (`Stepper.runChunks`) asks it between batches. A waiting
/// write ends the step at once. A recent one does too: an app that wrote within the last
/// `quietPeriod` is likely to write again during a long step, which would then make it wait for a
/// batch and a larger commit; while it writes, steps stay one batch long (measured with ferry-bench:
/// a drain-mode migration under app writes moves as fast either way, and its writes wait less).
final class WriterContention: Sendable {
    private let waiting: @Sendable () -> Int
    /// When the app's latest write ended, in nanoseconds of `clock` (`Int64.min`: never).
    private let lastAppWrite = Atomic<Int64>(Int64.min)
    /// Set when the task that runs the steps was cancelled: the running step ends after its batch.
    private let handoverRequested = Atomic<Bool>(false)
    private let clock = ContinuousClock()
    private let origin: ContinuousClock.Instant

    /// - Parameter waiting: the number of writes waiting for the writer (the pool's).
    init(waiting: @escaping @Sendable () -> Int) {
        self.waiting = waiting
        origin = clock.now
    }

    /// The app's write ended now.
    func noteAppWrite() { lastAppWrite.store(nanosecondsNow(), ordering: .relaxed) }

    /// Nanoseconds of `clock` since this value was made.
    private func nanosecondsNow() -> Int64 {
        let elapsed = clock.now - origin
        return elapsed.components.seconds * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000
    }

    /// Asks the running step to end after its batch (the task running the steps was cancelled).
    func requestHandover() { handoverRequested.store(true, ordering: .relaxed) }

    /// A step begins: an earlier request to hand over is done with.
    func stepBegins() { handoverRequested.store(false, ordering: .relaxed) }

    /// Called each time a step asks whether it may go on, or run its next piece (tests: to act in
    /// the middle of a step).
    let onQuietCheck = Mutex<(@Sendable () -> Void)?>(nil)

    /// True when no write waits, no handover was asked for, and the app has not written for
    /// `quietPeriod`.
    func isQuiet(for quietPeriod: Duration) -> Bool {
        onQuietCheck.withLock { $0 }?()
        return !appIsActive(within: quietPeriod)
    }

    /// True when a write waits, a handover was asked for, or the app wrote within the last
    /// `period`.
    func appIsActive(within period: Duration) -> Bool {
        guard !writeWaits else { return true }
        let last = lastAppWrite.load(ordering: .relaxed)
        guard last != Int64.min else { return false }
        return .nanoseconds(nanosecondsNow() - last) < period
    }

    /// True when a step running a batch in pieces may run the next one: no write waits for the
    /// writer, and no handover was asked for.
    func mayRunNextPiece() -> Bool {
        onQuietCheck.withLock { $0 }?()
        return !writeWaits
    }

    /// True when a write waits for the writer now, or a handover was asked for.
    private var writeWaits: Bool { waiting() > 0 || handoverRequested.load(ordering: .relaxed) }
}
