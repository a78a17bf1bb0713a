import FerrySQLite
/// The background loop of auto-migration: step, pause, back off on errors, stop when done.
enum AutoMigrator {
    /// Runs until `step` returns nil (nothing left, or the database closed: `.none`), the task is
    /// cancelled, or `maximumConsecutiveFailures` steps in a row failed.
    /// - Parameter step: one batch; `.none` when the database is gone, `.some(nil)` when done.
    static func run(schedule: AutoMigrationSchedule,
                    step: @Sendable () async throws(FerryError) -> StepReport??,
                    report: @Sendable (MigrationEvent) -> Void) async {
        var failures = 0
        var backoff = schedule.initialBackoff
        while !Task.isCancelled {
            do {
                guard let result = try await step() else { return }  // database closed
                guard result != nil else { return }  // everything migrated
                failures = 0
                backoff = schedule.initialBackoff
            } catch {
                if error == .cancelled || error == .connectionClosed { return }
                failures += 1
                if failures >= schedule.maximumConsecutiveFailures {
                    report(.autoMigrationStopped(lastError: error))
                    return
                }
                do { try await Task.sleep(for: backoff) } catch { return }  // cancelled
                backoff = min(backoff * 2, schedule.maximumBackoff)
                continue
            }
            if schedule.drain {
                await Task.yield()
            } else {
                do { try await Task.sleep(for: schedule.interval) } catch { return }  // cancelled
            }
        }
    }
}
