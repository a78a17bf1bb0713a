import FerrySQLite
import Synchronization

/// The moved rows the app edited in its committed transactions, kept in memory until Ferry writes
/// them to `ferry_migration_edited` (`MigrationState.recordEdits`) at its next step, before a
/// `verify`, or at `close`: one write per step instead of one per app transaction, so an app
/// write pays for a trigger call and no page more. A crash before they are written loses them:
/// `verify` then reports those rows as differing, and nothing else.
final class AppEditLog: Sendable {
    private let pending = Mutex<[String: Set<Int64>]>([:])

    /// The rowids waiting to be written.
    var count: Int { pending.withLock { $0.values.reduce(0) { $0 + $1.count } } }

    /// After an app transaction on the writer `db`: keeps what its statements recorded, and moves
    /// the edits kept of a table it renamed to the table's new name (`MigrationState` moves those
    /// written already, in the transaction). (A transaction that rolled back left nothing: the
    /// recorder forgets its rows and renames on rollback.)
    func transactionEnded(on db: Connection) {
        guard let recorder = db.editRecorder, !recorder.isEmpty else { return }
        let (edits, renames) = recorder.take()
        pending.withLock { pending in
            for (old, new) in renames {
                for name in pending.keys where name.lowercased() == old.lowercased() {
                    pending[new, default: []].formUnion(pending.removeValue(forKey: name) ?? [])
                }
            }
            for (target, rowids) in edits { pending[target, default: []].formUnion(rowids) }
        }
    }

    /// Forgets the edits waiting (the database was erased: the tables they name are gone).
    func discard() {
        pending.withLock { $0 = [:] }
    }

    /// Writes the edits waiting, in a transaction of their own on the writer `db` (between the
    /// app's transactions), invisibly to the app's `changes()` and `lastInsertRowid`. On failure
    /// they wait for the next time.
    func persist(on db: Connection) throws(FerryError) {
        let edits = pending.withLock { pending in
            defer { pending = [:] }
            return pending
        }
        guard !edits.isEmpty else { return }
        do {
            try db.invisibly { () throws(FerryError) in
                try MigrationState.writingMain(on: db) { () throws(FerryError) in try MigrationState.recordEdits(edits, on: db) }
            }
        } catch {
            pending.withLock { pending in
                for (target, rowids) in edits { pending[target, default: []].formUnion(rowids) }
            }
            throw error
        }
    }
}
