import FerrySQLite
/// The loop of auto-migration: step, pause, back off on errors, stop when done.
enum AutoMigrator {
    /// How a run of the loop ended.
    enum Outcome: Sendable, Equatable {
        /// Every registered table is migrated.
        case finished
        /// The task was cancelled (after the running batch committed or rolled back).
        case cancelled
        /// The database closed.
        case closed
        /// `maximumConsecutiveFailures` steps in a row failed; the last error is given.
        case stopped(FerryError)
    }

    /// Runs until `step` returns nil (nothing left, or the database closed: `.none`), the task is
    /// cancelled, or `maximumConsecutiveFailures` steps in a row failed.
    ///
    /// A batch runs in a task of its own, so cancelling the loop never interrupts it: the loop ends
    /// after the batch commits, at most about one budget later, and no work is thrown away.
    /// - Parameter step: one batch; `.none` when the database is gone, `.some(nil)` when done.
    static func run(schedule: AutoMigrationSchedule,
                    step: @escaping @Sendable () async throws(FerryError) -> StepReport??,
                    report: @Sendable (MigrationEvent) -> Void) async -> Outcome {
        var failures = 0
        var backoff = schedule.initialBackoff
        while !Task.isCancelled {
            let batch = Task { () async -> Result<StepReport??, FerryError> in
                do throws(FerryError) { return .success(try await step()) } catch { return .failure(error) }
            }
            switch await batch.value {
            case .success(.none):
                return .closed
            case .success(.some(.none)):
                return .finished
            case .success(.some(.some)):
                failures = 0
                backoff = schedule.initialBackoff
            case .failure(let error):
                if error == .connectionClosed { return .closed }
                if error == .cancelled { return .cancelled }
                failures += 1
                if failures >= schedule.maximumConsecutiveFailures {
                    report(.autoMigrationStopped(lastError: error))
                    return .stopped(error)
                }
                do { try await Task.sleep(for: backoff) } catch { return .cancelled }
                backoff = min(backoff * 2, schedule.maximumBackoff)
                continue
            }
            if schedule.drain {
                await Task.yield()
            } else {
                do { try await Task.sleep(for: schedule.interval) } catch { return .cancelled }
            }
        }
        return .cancelled
    }
}
