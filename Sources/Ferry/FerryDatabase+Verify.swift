import FerrySQLite
import Foundation

/// What `FerryDatabase.verify()` found: whether every source row that moved is in its target,
/// once, with the source's values, and whether the target file passes SQLite's integrity check.
public struct MigrationVerification: Sendable, Hashable {
    /// How thoroughly a table could be checked.
    public enum Scope: String, Sendable, Hashable {
        /// The source rows are still there: each row that moved was compared with its target row.
        case rows
        /// The source was cleaned (moved rows deleted, or the table dropped): only the target's
        /// integrity and its row count can be checked.
        case countsOnly
    }

    /// The verification of one registered target table.
    public struct Table: Sendable, Hashable {
        /// The target table.
        public let name: String
        /// The source table.
        public let sourceTable: String
        /// The filter, if any.
        public let filter: String?
        /// The table's migration state.
        public let state: MigrationProgress.State
        /// How thoroughly it was checked.
        public let scope: Scope
        /// Source rows that moved (cursor and moved set, quarantined rows excluded) and were compared.
        public let rowsChecked: Int64
        /// Rows that moved but have no target row with their rowid.
        public let rowsMissing: Int64
        /// Rows whose target row (same rowid) holds other values than the source row.
        public let rowsDiffering: Int64
        /// Up to five source rowids of missing or differing rows.
        public let sampleRowids: [Int64]
        /// Moved rows the app updated, deleted or replaced since they moved (recorded as it wrote
        /// them): not compared with their source, not counted as missing or differing.
        public var rowsEditedByApp: Int64 = 0
        /// Rows in the target table.
        public let targetRows: Int64
        /// Rows moved, as the catalog records them.
        public let rowsMoved: Int64
        /// Rows set aside in the quarantine table.
        public let rowsQuarantined: Int64
        /// The difference between the source rows the mapping matches now (up to the cursor) and
        /// the rows that moved (by steps, ahead by app writes, or into quarantine): rows that match
        /// but never moved (a filter whose meaning changed), or moved rows gone from the source.
        /// Cleanup would leave such rows in neither file: it refuses to run while any exist
        /// (`FerryError.cleanupRefused`). 0 when it cannot be counted (the source is being
        /// cleaned, or the catalog predates the count).
        public var rowsUnaccounted: Int64 = 0

        /// True when no moved row is missing or differs, and every matching source row is accounted for.
        public var isConsistent: Bool { rowsMissing == 0 && rowsDiffering == 0 && rowsUnaccounted == 0 }
    }

    /// The output of `PRAGMA main.integrity_check` (`["ok"]` for a sound file).
    public let integrityCheck: [String]
    /// Every registered table, in registration order.
    public let tables: [Table]

    /// True when the integrity check passed and every table is consistent.
    public var isConsistent: Bool { integrityCheck == ["ok"] && tables.allSatisfy(\.isConsistent) }
}

extension FerryDatabase {
    /// Checks the migrated data against its sources, in one read transaction (one snapshot).
    ///
    /// For each registered table whose source rows are still present, every source row that
    /// matches the mapping and has moved (at or below the cursor, or in the moved set, and not
    /// quarantined) must be in the target under the same rowid with the same values (compared
    /// column by column with `IS`, so SQLite applies the target column's affinity as the copy
    /// did). The comparison runs in rowid ranges of `chunkRows` source rows. Tables whose source was
    /// cleaned are checked for counts only. Rows the app updated, deleted or replaced through Ferry
    /// after they moved are recorded as it writes them (for a target whose rows a source rowid
    /// identifies) and not compared: `rowsEditedByApp` counts them. A row changed behind Ferry's
    /// back (another tool, another connection) is a difference.
    public func verify(chunkRows: Int = 10_000) throws(FerryError) -> MigrationVerification {
        let mappings = engine.migratingMappings + engine.mappingsAwaitingCleanup
        // The app's edits held in memory first: verify leaves them out.
        if !isReadOnly && appEdits.count > 0 { try pool.writeWithoutTransaction { db throws(FerryError) in try appEdits.persist(on: db) } }
        return try pool.read { db throws(FerryError) in
            let integrity = try sqlite(db.fetchAll("PRAGMA main.integrity_check")).map { row throws(FerryError) in try sqlite(row.column(0, as: String.self)) }
            var tables: [MigrationVerification.Table] = []
            let unavailableSources = engine.attacher.unavailableSources(on: db)
            for record in try MigrationState.loadTables(on: db) {
                let mapping = mappings.first { $0.targetName.lowercased() == record.target.lowercased() }
                // A source this reader could not attach (missing, unreadable, corrupt): its error names the file.
                if let mapping, let unavailable = unavailableSources[mapping.source.schema], !record.sourceCleaned {
                    throw unavailable
                }
                do throws(FerryError) {
                    tables.append(try verifyTable(record, mapping: mapping, chunkRows: max(1, chunkRows), on: db))
                } catch {
                    throw Self.corruptionNamingItsFile(error, mapping: mapping, path: mapping?.source.path.map(engine.paths.resolvedPath),
                                                       targetIntegrity: integrity, on: db)
                }
            }
            return MigrationVerification(integrityCheck: integrity, tables: tables)
        }
    }

    /// A corruption error met while comparing a table's rows, naming the file it is in: SQLite's
    /// message names none, and an operator would look at the target. When the source is another
    /// file, the target passed its integrity check and the source does not pass its own, the error
    /// is `FerryError.sourceUnavailable` naming the source file; otherwise it stays as it is.
    /// - Parameter path: the source file's path (nil for a source in the target file).
    static func corruptionNamingItsFile(_ error: FerryError, mapping: ResolvedMapping?, path: String?, targetIntegrity: [String],
                                        on db: Connection) -> FerryError {
        guard error.resultCode?.primary == .corrupt, targetIntegrity == ["ok"], let mapping, let path else { return error }
        let sourceCheck = try? db.fetchAll("PRAGMA \(q(mapping.source.schema)).quick_check").map { try $0.column(0, as: String.self) }
        guard sourceCheck != ["ok"] else { return error }
        let message: String
        if case .sqlite(_, let text, _) = error { message = text } else { message = "\(error)" }
        return .sourceUnavailable(path: path, reason: "the source file is corrupt (\(message)); the target passed its integrity check")
    }

    private func verifyTable(_ record: TableRecord, mapping resolved: ResolvedMapping?, chunkRows: Int,
                             on db: Connection) throws(FerryError) -> MigrationVerification.Table {
        let state: MigrationProgress.State = record.state == .finished ? .finished : (record.cursor == nil && record.rowsMoved == 0 ? .pending : .migrating)
        let targetExists = try sqlite(db.tableExists(record.target))
        let targetRows: Int64 = targetExists ? try sqlite(db.scalar("SELECT count(*) FROM main.\(q(record.target))")) ?? 0 : 0
        func result(_ scope: MigrationVerification.Scope, checked: Int64 = 0, missing: Int64 = 0, differing: Int64 = 0,
                    samples: [Int64] = []) -> MigrationVerification.Table {
            .init(name: record.target, sourceTable: record.sourceTable, filter: record.filter, state: state, scope: scope,
                  rowsChecked: checked, rowsMissing: missing, rowsDiffering: differing, sampleRowids: samples,
                  targetRows: targetRows, rowsMoved: record.rowsMoved, rowsQuarantined: record.rowsQuarantined)
        }
        guard var mapping = resolved, !record.sourceCleaned, targetExists else { return result(.countsOnly) }
        let sourceExists = try sqlite(db.tableExists(mapping.sourceShape.name, schema: mapping.source.schema))
        guard sourceExists else { return result(.countsOnly) }
        mapping.record = record  // this snapshot's cursor

        // The moved rows of the mapping: at or below the cursor (before the key cursor, for a
        // source without rowid), or in the moved set, not quarantined.
        let identity = mapping.sourceIdentity
        var moved = "\(identity) IN (\(MigrationState.movedRowidsSQL(target: record.target)))"
        if mapping.sourceHasRowid {
            if let cursor = record.cursor { moved = "(\(identity) <= \(cursor) OR \(moved))" }
        } else {
            let passed = record.keyCursor.map { "\(mapping.sourceKeyTuple) < (\(mapping.keyParts(of: SourceCursor.blobLiteral($0))))" } ?? "1"
            moved = "(\(passed) OR \(moved))"
        }
        let quarantine = Quarantine.tableName(for: record.target)
        var notQuarantined = ""
        if try sqlite(db.tableExists(quarantine)) {
            notQuarantined = " AND \(identity) NOT IN (SELECT ferry_source_rowid FROM main.\(q(quarantine)) WHERE ferry_source_rowid IS NOT NULL)"
            moved += notQuarantined
        }
        let alias = "ferry_verify_target"
        // The target row of a source row: the same rowid (or the rowid its INTEGER PRIMARY KEY's
        // feed gives), else the same primary key; with neither, a row with the same values.
        let sameValuesList = mapping.feeds.map { "\(alias).\(q($0.column)) IS \(mapping.correlatedSourceValue(of: $0))" }
        // (The key compares under the collation that makes it unique.)
        var sameRowid: String
        // The moved rows the app edited since (by the rowid the source row gives its target row).
        var edited = "0"
        if mapping.target.hasRowid, let rowid = MigratingTableSQL(mapping: mapping).pendingRowidValue {
            sameRowid = "\(alias).\(mapping.target.rowidName) = \(rowid)"
            edited = MigrationState.editedCondition(target: record.target, rowid: rowid)
        } else if let targetKey = mapping.targetMatchKey, let keyDigest = mapping.sourceMatchKeyDigest {
            // The moved rows the app edited since, by the digest of their key.
            edited = MigrationState.editedCondition(target: record.target, rowid: keyDigest)
            sameRowid = targetKey.map { key in
                "\(alias).\(q(key.column))\(key.collation.map { " COLLATE \(q($0))" } ?? "") = \(mapping.correlatedSourceValue(of: mapping.feed(of: key.column)!))"
            }.joined(separator: " AND ")
        } else {
            sameRowid = sameValuesList.joined(separator: " AND ")
        }
        if sameRowid.isEmpty { sameRowid = "1" }
        let sameValues = ([sameRowid] + sameValuesList).joined(separator: " AND ")
        let present = "EXISTS (SELECT 1 FROM \(mapping.qualifiedTarget) AS \(alias) WHERE \(sameRowid))"
        let equal = "EXISTS (SELECT 1 FROM \(mapping.qualifiedTarget) AS \(alias) WHERE \(sameValues))"
        if mapping.recordsMovedRows {
            return try verifyRecorded(mapping, present: present, equal: equal, edited: edited, notQuarantined: notQuarantined, on: db) { compared in
                var table = result(.rows, checked: compared.count, missing: compared.missing, differing: compared.differing, samples: compared.samples)
                table.rowsEditedByApp = compared.edited
                return table
            }
        }
        // Range after range of the source rows of this mapping, in the source's order (samples
        // name rowids, which a source without rowid has not).
        let cursor = SourceCursor(mapping)
        var checked: Int64 = 0
        var missing: Int64 = 0
        var differing: Int64 = 0
        var editedByApp: Int64 = 0
        var samples: [Int64] = []
        var span = cursor.everyRow
        while let high = try cursor.lastOfFirst(chunkRows, in: span, on: db) {
            let range = cursor.matching(span.through(high))
            let compared = try compareRows(mapping, from: cursor.scan, where: "\(range.sql) AND \(moved)", .positional(range.arguments),
                                           present: present, equal: equal, edited: edited,
                                           sampleRoom: mapping.sourceHasRowid ? 5 - samples.count : 0, on: db)
            checked += compared.count
            editedByApp += compared.edited
            missing += compared.missing
            differing += compared.differing
            samples += compared.samples
            span = span.after(high)
        }
        var table = result(.rows, checked: checked, missing: missing, differing: differing, samples: samples)
        table.rowsEditedByApp = editedByApp
        if !record.cleanupChecked, let ahead = record.rowsMovedAhead, !mapping.sourceHasRowid || record.cursor != nil {
            let matching = try cursor.matchingCount(in: cursor.passed(record), on: db)
            let retiredEarly = try MigrationState.rowsRetiredEarly(target: record.target, on: db)
            table.rowsUnaccounted = abs(matching - (record.rowsMoved + record.rowsQuarantined + ahead - retiredEarly))
        }
        return table
    }

    /// `verifyTable` for a table whose batches recorded the rows they moved (`MovedRows`): the rows
    /// checked are the recorded ones and the moved set's (moved ahead since), never the rows the
    /// filter matches now. `rowsUnaccounted` counts what the record cannot account for: the
    /// difference between the recorded rows and the counts the batches kept, and recorded rows
    /// gone from the source before cleanup began (edited or replaced behind Ferry's back).
    private func verifyRecorded(_ mapping: ResolvedMapping, present: String, equal: String, edited: String, notQuarantined: String,
                                on db: Connection, result: (ComparedRows) -> MigrationVerification.Table) throws(FerryError) -> MigrationVerification.Table {
        let record = mapping.record
        var lists: [(sql: String, argument: Value?, rows: Int64?)] = []
        var batch: Int64 = 0
        var recorded: Int64 = 0
        while let entry = try MigrationState.movedRows(of: record.target, from: batch, on: db) {
            // Rows retired early (a same-file source's own foreign key) left the source accounted for.
            let retired = try MigrationState.retiredRows(of: entry.rows, record, on: db)
            if mapping.sourceHasRowid {
                lists.append(("\(mapping.sourceRowid) IN (SELECT value FROM json_each(?1))", .text(Stepper.jsonArray(entry.rows.rowids[...])),
                              Int64(entry.rows.count - retired.count)))
            } else {
                // A source without rowid: a row key at a time, through the primary key.
                for key in entry.rows.keys where !retired.identities.contains(.blob(key)) {
                    lists.append((mapping.sourceRow(identifiedBy: "?1"), .blob(key), 1))
                }
            }
            recorded += Int64(entry.rows.count)
            batch = entry.batch + 1
        }
        lists.append((mapping.sourceRows(identifiedIn: "(\(MigrationState.movedRowidsSQL(target: record.target)))", column: "source_rowid"), nil, nil))
        var total = ComparedRows()
        var gone: Int64 = 0
        for list in lists {
            let arguments: StatementArguments = list.argument.map { [$0] } ?? []
            if let rows = list.rows, !record.cleanupChecked {
                let found = try sqlite(db.scalar("SELECT count(*) FROM \(mapping.qualifiedSource) WHERE \(list.sql)", arguments, as: Int64.self)) ?? 0
                gone += rows - found
            }
            let compared = try compareRows(mapping, from: mapping.qualifiedSource, where: list.sql + notQuarantined, arguments,
                                           present: present, equal: equal, edited: edited, sampleRoom: 5 - total.samples.count, on: db)
            total.add(compared)
        }
        var table = result(total)
        let counted = record.rowsMoved + record.rowsQuarantined + (record.rowsMovedAhead ?? 0)
        table.rowsUnaccounted = abs(recorded - counted) + gone
        return table
    }

    /// What `compareRows` found.
    struct ComparedRows {
        /// Rows compared (the app's edits not included).
        var count: Int64 = 0
        var missing: Int64 = 0
        var differing: Int64 = 0
        /// Rows the app edited since they moved (not compared).
        var edited: Int64 = 0
        var samples: [Int64] = []

        mutating func add(_ other: ComparedRows) {
            count += other.count
            missing += other.missing
            differing += other.differing
            edited += other.edited
            samples += other.samples
        }
    }

    /// Compares the source rows `condition` selects in `source` (with `arguments`) with their
    /// target rows, leaving out those whose target row the app edited since they moved
    /// (`edited`, a condition on the source row): how many, how many have none (`present`
    /// false), how many differ (`equal` false), and the rowids of up to `sampleRoom` of those (a
    /// rowid source; none otherwise).
    private func compareRows(_ mapping: ResolvedMapping, from source: String, where condition: String, _ arguments: StatementArguments,
                             present: String, equal: String, edited: String, sampleRoom: Int, on db: Connection) throws(FerryError) -> ComparedRows {
        let row = try sqlite(db.fetchOne("""
            SELECT count(*), total(NOT \(present)), total(\(present) AND NOT \(equal))
            FROM \(source) WHERE \(condition) AND NOT \(edited)
            """, arguments))
        let editedCount: Int64 = edited == "0" ? 0 : try sqlite(db.scalar("""
            SELECT count(*) FROM \(source) WHERE \(condition) AND \(edited)
            """, arguments)) ?? 0
        var compared = ComparedRows(count: try sqlite(row?.column(0)) ?? 0, missing: Int64(try sqlite(row?.column(1, as: Double.self)) ?? 0),
                                    differing: Int64(try sqlite(row?.column(2, as: Double.self)) ?? 0), edited: editedCount)
        if compared.missing + compared.differing > 0 && sampleRoom > 0 && mapping.sourceHasRowid {
            compared.samples = try sqlite(db.fetchAll("""
                SELECT \(mapping.sourceRowid) FROM \(source) WHERE \(condition) AND NOT \(edited) AND NOT \(equal) ORDER BY 1 LIMIT \(sampleRoom)
                """, arguments)).map { row throws(FerryError) in try sqlite(row.column(0, as: Int64.self)) }
        }
        return compared
    }
}
