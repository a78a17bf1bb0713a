import FerrySQLite

/// Retiring a fully moved source table in one statement: off the writer for a source of its own
/// file (`SourceRetirer`), on it for a small source in the target file.
extension Stepper {
    /// Where the retirement of a finished table's source table off the writer stands in this step.
    enum Retirement {
        /// None for this table (none runs on its file): cleanup goes on in the step.
        case none
        /// It runs (this table's, or another's on the same file, whose lock it holds): the step
        /// reports nothing done (`waitingReport`).
        case running
        /// It ended with the table retired, holding this many rows.
        case retired(rows: Int)
        /// It ended without a change: a row lies above the cursor (cleanup goes on row by row).
        case declined
    }

    /// Retires `mapping`'s source table in one statement when `whole` (every row moved, nothing else
    /// reads it): off the writer for a source of its own file (`retirement(of:)`), on it for a
    /// source in the target file (`retireOnWriter`). Nil while a retirement runs on the table's
    /// file (the step reports nothing done); otherwise the rows retired and whether it retired (not
    /// when it declined or did not apply: cleanup then deletes chunk by chunk).
    func retiringWholeTable(_ mapping: ResolvedMapping, whole: Bool, cursor: Int64?, record: TableRecord, budget: Duration,
                            on db: Connection) throws(FerryError) -> (rows: Int, retired: Bool)? {
        switch try retirement(of: mapping, startingIf: whole, cursor: cursor, record: record, budget: budget, on: db) {
        case .running: return nil
        case .retired(let rows): return (rows, true)
        case .none where whole: return try retireOnWriter(mapping, cursor: cursor, record: record, on: db)
        case .none, .declined: return (0, false)
        }
    }

    /// Whether a fully moved source table may be retired in one `DROP TABLE`: always off the writer
    /// (a source of its own file: the retirer's connection drops it, and nothing the app does waits
    /// for that file); on the writer (a source in the target file) only while it holds no more rows
    /// than one cleanup chunk. A drop costs the table's size (its pages freed, zeroed under
    /// `secure_delete`), and on the writer every app write would wait for it: 1.3 s for 1M rows of
    /// a SQLCipher file. A larger one is deleted in budgeted chunks and dropped once empty.
    func retiresInOneStatement(_ mapping: ResolvedMapping, record: TableRecord, chunkRows: Int) -> Bool {
        if mapping.source.path != nil { return true }
        return record.rowsMoved + record.rowsQuarantined + max(0, record.rowsMovedAhead ?? 0) <= Int64(chunkRows)
    }

    /// Retires `mapping`'s source table on the writer (a source in the target file, which the
    /// retirer does not serve), counting its rows in the same transaction. Returns the rows and
    /// whether it retired (not when a row lies above the cursor).
    func retireOnWriter(_ mapping: ResolvedMapping, cursor: Int64?, record: TableRecord, on db: Connection) throws(FerryError) -> (rows: Int, retired: Bool) {
        guard try mapping.sourceTableExists(on: db) else { return (0, false) }
        let retirement = SourceTableRetirement(mapping, cursor: cursor, keepsTable: engine.keepsSourceTables)
        return try MigrationState.writingMain(on: db) { () throws(FerryError) in
            let rows = try Self.retiredRowCount(mapping, record: record, on: db)
            return try retirement.run(on: db) ? (rows, true) : (0, false)
        }
    }

    /// The retirement of `mapping`'s source table: the one running or ended, or, when none and
    /// `condition` holds (every row moved, nothing else reads the table) for a source of its own
    /// file, one started now. Waits for it at most `budget` (until it ends, with fixed batches).
    func retirement(of mapping: ResolvedMapping, startingIf condition: Bool, cursor: Int64?, record: TableRecord, budget: Duration,
                    on db: Connection) throws(FerryError) -> Retirement {
        guard let retirer else { return .none }
        let key = mapping.targetName.lowercased()
        if !retirer.hasJob(for: key) {
            if retirer.isRetiring(schema: mapping.source.schema) { return .running }
            guard condition, mapping.source.path != nil, try mapping.sourceTableExists(on: db) else { return .none }
            retirer.start(SourceRetirer.Job(schema: mapping.source.schema,
                                            retirement: SourceTableRetirement(mapping, cursor: cursor, keepsTable: engine.keepsSourceTables),
                                            rows: try Self.retiredRowCount(mapping, record: record, on: db)), for: key)
        }
        return try collectRetirement(key, budget: budget)
    }

    /// A cleanup step's report while a retirement runs: nothing done yet.
    static func waitingReport(_ mapping: ResolvedMapping, since start: ContinuousClock.Instant) -> StepReport {
        StepReport(kind: .cleanup, table: mapping.targetName, rowsMoved: 0, rowsQuarantined: 0, sourceRowsDeleted: 0,
                   rowsLeft: 0, elapsed: ContinuousClock.now - start, tableFinished: false, allFinished: false)
    }

    /// The outcome of the retirement of `key`'s source table, waited for at most `budget` (until
    /// it ends, with fixed batches): `.running` while it runs, `.none` without a retirer.
    /// - Throws: the retirement's failure (nothing changed; the next step tries again).
    func collectRetirement(_ key: String, budget: Duration) throws(FerryError) -> Retirement {
        guard let retirer else { return .none }
        switch retirer.collect(key, waiting: fixedBatchRows == nil ? budget : nil) {
        case nil: return .running
        case .retired(let rows)?: return .retired(rows: rows)
        case .declined?: return .declined
        case .failed(let error)?: throw error
        }
    }

    /// The rows a retiring source table holds: the count cleanup checked them against (every moved,
    /// moved-ahead and quarantined row, less those retired early), or, when none was checked (an
    /// older catalog, a table the app dropped), a count of the table, which reads every page as the
    /// DROP does.
    static func retiredRowCount(_ mapping: ResolvedMapping, record: TableRecord, on db: Connection) throws(FerryError) -> Int {
        if record.cleanupChecked, let ahead = record.rowsMovedAhead {
            let retiredEarly = try MigrationState.rowsRetiredEarly(target: record.target, on: db)
            return Int(record.rowsMoved + record.rowsQuarantined + ahead - retiredEarly)
        }
        return try sqlite(db.scalar("SELECT count(*) FROM \(mapping.qualifiedSource)", as: Int.self)) ?? 0
    }
}
