/// The background loop of auto-migration: step, pause, back off on errors, stop when done.
enum AutoMigrator {
    /// Runs until `step` returns nil (nothing left, or the database closed: `.none`), the task is
    /// cancelled, or `maximumConsecutiveFailures` steps in a row failed.
    /// - Parameter step: one batch; `.none` when the database is gone, `.some(nil)` when done.
    static func run(schedule: AutoMigrationSchedule,
                    step: @Sendable () async throws -> StepReport??,
                    report: @Sendable (MigrationEvent) -> Void) async {
        var failures = 0
        var backoff = schedule.initialBackoff
        while !Task.isCancelled {
            do {
                guard let result = try await step() else { return }  // database closed
                guard result != nil else { return }  // everything migrated
                failures = 0
                backoff = schedule.initialBackoff
                if schedule.drain {
                    await Task.yield()
                } else {
                    try await Task.sleep(for: schedule.interval)
                }
            } catch is CancellationError {
                return
            } catch {
                let ferryError = FerryError.wrap(error)
                if ferryError == .cancelled || ferryError == .connectionClosed { return }
                failures += 1
                if failures >= schedule.maximumConsecutiveFailures {
                    report(.autoMigrationStopped(lastError: ferryError))
                    return
                }
                do { try await Task.sleep(for: backoff) } catch { return }
                backoff = min(backoff * 2, schedule.maximumBackoff)
            }
        }
    }
}
