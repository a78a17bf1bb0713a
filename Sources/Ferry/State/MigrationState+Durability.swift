import FerrySQLite

/// Making the target's commits durable before cleanup deletes what they moved.
///
/// In WAL mode with `synchronous = NORMAL` a commit is not synced: a power loss may take back the
/// latest commits of the target, the moves among them. Cleanup deletes source rows because those
/// commits say they moved, so they must be on disk first. A passive checkpoint would sync the WAL,
/// but it also copies every frame not yet copied into the database file (tens of milliseconds on
/// the writer after a migration's last batches); a commit under `synchronous = FULL` syncs the WAL,
/// and with it every earlier commit, and nothing more.
extension MigrationState {
    private static let syncKey = "sync"

    /// Commits a write of main under `synchronous = FULL` (a flag row written and removed in one
    /// transaction), which syncs main's WAL; the connection's level is restored afterwards. Call
    /// it outside a transaction.
    static func syncEarlierCommits(on db: Connection) throws(FerryError) {
        let level = try sqlite(db.scalar("PRAGMA main.synchronous", as: Int.self)) ?? 1
        try sqlite(db.execute("PRAGMA main.synchronous = FULL"))
        defer { try? db.execute("PRAGMA main.synchronous = \(level)") }
        try writingMain(on: db) { () throws(FerryError) in
            try sqlite(db.execute("INSERT OR REPLACE INTO main.\(flagsTable)(key, value) VALUES ('\(syncKey)', 1)"))
            try sqlite(db.execute("DELETE FROM main.\(flagsTable) WHERE key = '\(syncKey)'"))
        }
    }
}
