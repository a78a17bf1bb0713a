import FerrySQLite

/// Whether a source row is one a table moved, as recorded when it moved: in a batch's record
/// (`MovedRows`) or in the moved set (moved ahead by an app write, not yet passed by the cursor).
/// Never the filter: a row of a filtered source that no batch recorded was not moved, whatever
/// the filter says of it now.
///
/// SQL reads it as `ferry_moved_row(source_id, source_table, identity)` (1 or 0), from the temp
/// triggers that retire a same-file source's moved rows ahead of a parent's delete
/// (`MigratingTableSQL.sourceForeignKeyTriggerSQL`): the records are compact rowid lists, which
/// SQL cannot search. The lists are decoded once per target and kept; each call checks them
/// against the last recorded batch (records only grow, in order; a batch undone by a rollback
/// and recorded again differently shows as another last batch) and reads only the batches
/// recorded since.
final class MovedRowIndex {
    /// The SQL function's name.
    static let function = "ferry_moved_row"

    /// The decoded records of one target, up to `lastBatch`.
    private struct Decoded {
        var lastBatch: Int64 = 0
        var lastCount: Int64 = 0
        var lastDigest: Int64 = 0
        var rowids: Set<Int64> = []
        var keys: Set<[UInt8]> = []
    }

    private var decoded: [String: Decoded] = [:]

    /// Defines `ferry_moved_row` on `db`, once, with an index of its own.
    static func define(on db: Connection) throws(FerryError) {
        guard !db.hasProcedure(function) else { return }
        let index = MovedRowIndex()
        try sqlite(db.defineQueryFunction(function) { db, arguments throws(SQLiteError) in
            guard arguments.count == 3, case .integer(let sourceID) = arguments[0], case .text(let sourceTable) = arguments[1] else {
                throw .misuse("\(function) takes a source's id, its table and a row's identity")
            }
            do throws(FerryError) {
                return .integer(try index.contains(arguments[2], sourceID: sourceID, sourceTable: sourceTable, on: db) ? 1 : 0)
            } catch {
                throw .sqlite(code: error.resultCode ?? .error, message: "\(error)", sql: nil)
            }
        })
    }

    /// True when a table fed by `sourceTable` of source `sourceID`, not cleaned yet, moved the
    /// source row `identity` (its rowid, or its row key for a source without rowid).
    func contains(_ identity: Value, sourceID: Int64, sourceTable: String, on db: Connection) throws(FerryError) -> Bool {
        let targets = try sqlite(db.fetchAll("""
            SELECT target FROM main.\(MigrationState.tablesTable) WHERE source_id = ?1 AND source_table = ?2 AND source_cleaned = 0
            """, [.integer(sourceID), .text(sourceTable)])).map { row throws(FerryError) in try sqlite(row.column(0, as: String.self)) }
        for target in targets {
            if try sqlite(db.scalar("""
                SELECT EXISTS (SELECT 1 FROM main.\(MigrationState.movedTable) WHERE target = ?1 AND source_rowid = ?2)
                """, [.text(target), identity], as: Int.self)) == 1 { return true }
            let records = try refreshed(target, on: db)
            switch identity {
            case .integer(let rowid): if records.rowids.contains(rowid) { return true }
            case .blob(let key): if records.keys.contains(key) { return true }
            default: break
            }
        }
        return false
    }

    /// The decoded records of `target`, brought up to date.
    private func refreshed(_ target: String, on db: Connection) throws(FerryError) -> Decoded {
        let last = try sqlite(db.fetchOne("""
            SELECT batch, row_count, digest FROM main.\(MigrationState.movedRowsTable) WHERE target = ?1 ORDER BY batch DESC LIMIT 1
            """, [.text(target)]))
        guard let last else {
            decoded[target] = nil
            return Decoded()
        }
        let batch: Int64 = try sqlite(last.column(0)), count: Int64 = try sqlite(last.column(1)), digest: Int64 = try sqlite(last.column(2))
        var entry = decoded[target] ?? Decoded()
        if entry.lastBatch == batch && entry.lastCount == count && entry.lastDigest == digest { return entry }
        // Batches since: read on from the last one decoded, if it is still the one recorded.
        if entry.lastBatch > 0 {
            let kept = try sqlite(db.fetchOne("""
                SELECT row_count, digest FROM main.\(MigrationState.movedRowsTable) WHERE target = ?1 AND batch = ?2
                """, [.text(target), .integer(entry.lastBatch)]))
            if entry.lastBatch > batch || kept?[0] != .integer(entry.lastCount) || kept?[1] != .integer(entry.lastDigest) { entry = Decoded() }
        }
        var next = entry.lastBatch + 1
        while let record = try MigrationState.movedRows(of: target, from: next, on: db) {
            entry.rowids.formUnion(record.rows.rowids)
            entry.keys.formUnion(record.rows.keys)
            entry.lastBatch = record.batch
            entry.lastCount = Int64(record.rows.count)
            entry.lastDigest = Int64(bitPattern: record.rows.digest)
            next = record.batch + 1
        }
        decoded[target] = entry
        return entry
    }
}
