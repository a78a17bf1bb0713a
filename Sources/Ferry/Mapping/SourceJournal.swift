import FerrySQLite

/// Switches a source file that uses a rollback journal to WAL when a plan registers it (or
/// registers it again: apps register their plan at every launch), unless its
/// `MigrationSource.keepsJournalMode` is set.
///
/// Every statement that reads a pending row opens a read transaction on the source. With a rollback
/// journal that is a file lock, a look for a hot journal, a read of the change counter and the
/// unlock; in WAL mode, a lock of a read mark in shared memory. ferry-bench at 200k rows half-way: a
/// lookup of a pending key 17.4 µs against 11.4 µs, an app insert (its redirect triggers name the
/// source) 32 µs against 25 µs. The file stays in WAL afterwards, as the target does.
enum SourceJournal {
    /// The journal modes of a file with a rollback journal.
    static let rollbackModes: Set<String> = ["delete", "truncate", "persist"]

    /// Switches the file attached as `schema` to WAL when it uses a rollback journal. Outside a
    /// transaction. Leaves the file as it is, without waiting, while another connection reads or
    /// writes it, and whenever SQLite refuses the switch: the migration works in either mode, only
    /// slower.
    static func switchToWAL(schema: String, on db: Connection) {
        let pragma = "PRAGMA \(Connection.quoteIdentifier(schema)).journal_mode"
        guard let mode = (try? db.scalar(pragma, as: String.self))?.lowercased(), rollbackModes.contains(mode) else { return }
        // No wait: the switch needs the file to itself for a moment. (Without the connection's
        // timeout to restore, no switch.)
        guard let timeout = try? db.scalar("PRAGMA busy_timeout", as: Int.self) else { return }
        try? db.execute("PRAGMA busy_timeout = 0")
        defer { try? db.execute("PRAGMA busy_timeout = \(timeout)") }
        // The switch takes the file's exclusive lock first: when it cannot (SQLITE_BUSY), nothing
        // began, and the file is as it was.
        _ = try? db.scalar(pragma + " = WAL", as: String.self)
    }
}
