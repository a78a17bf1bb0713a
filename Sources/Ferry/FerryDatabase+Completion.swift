import FerrySQLite

extension FerryDatabase {
    /// Suspends until no registered table is migrating any more (every matching source row is in
    /// its target; cleanup of the sources may still be under way): at once when none is.
    ///
    /// Race-free, unlike a loop over `events()` that waits for `.allFinished`: it subscribes to the
    /// events first and reads the persisted state after, so a completion that happened before the
    /// call, or between the subscription and the read, is never missed. It moves nothing itself:
    /// pair it with `startAutoMigration(_:)` (or steps run elsewhere).
    /// - Throws: the last error when auto-migration stopped after too many failed steps
    ///   (`MigrationEvent.autoMigrationStopped`); `FerryError.connectionClosed` when the database
    ///   closed first; `FerryError.cancelled` when the calling task was cancelled.
    public func waitUntilMigrated() async throws(FerryError) {
        let events = hub.stream()
        if try isMigrated { return }
        for await event in events {
            switch event {
            case .tableFinished, .allFinished:
                if try isMigrated { return }
            case .autoMigrationStopped(let lastError):
                throw lastError
            case .batch, .checkpointWait, .error:
                break
            }
            if Task.isCancelled { throw .cancelled }
        }
        if Task.isCancelled { throw .cancelled }
        throw .connectionClosed
    }
}
