import FerrySQLite
import Foundation

/// The one owner of the migration state Ferry persists in the target database (tables
/// `main.ferry_migration_*`): every read and write of it goes through this type, as a typed
/// transition (register, advance the cursor, record moved rows, finish, check and clean the source,
/// notify), and every time it records is read from one clock (SQLite's, `now`).
///
/// Everything that describes progress is written in the same transaction as the rows it describes,
/// so the state and the data never disagree after a crash (see `Stepper` for the cross-file case).
/// Some transitions run inside SQLite itself, in the redirect triggers and in the union read: for
/// them this type hands out SQL fragments (`cursorSQL`, `notMovedCondition`, `recordMovedSQL`, ...)
/// rather than values, so that a statement reads the state of its own snapshot.
/// Keys are never stored; cipher *settings* are, so the app only has to supply keys.
enum MigrationState {
    private static let sourcesTable = "ferry_migration_sources"
    static let tablesTable = "ferry_migration_tables"
    static let movedTable = "ferry_migration_moved"
    static let flagsTable = "ferry_migration_flags"
    /// The source rows each batch accounted for (`MovedRows`), for cleanup.
    static let movedRowsTable = "ferry_migration_moved_rows"

    /// The prefix of every table of the migration state (reserved: the app may not write them).
    static let tablePrefix = "ferry_migration_"
    /// SQLite's clock, as UTC ISO-8601 text with milliseconds (`2026-11-28T17:35:10.123Z`): the one
    /// clock and the one format of every time Ferry persists (the catalog, quarantine, the schema
    /// migrator's log), readable as it is in any SQLite shell, and ordered as text.
    static let nowSQL = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')"

    /// A statement that changes nothing but opens a write transaction on main (taking its write
    /// lock, waiting as `BEGIN IMMEDIATE` would): the app's write transactions start with it when
    /// only Ferry's sources are attached, and so do move steps (`Stepper.runChunks`); neither
    /// writes a source file, so neither needs its write lock.
    static let takeMainWriteLockSQL = "DELETE FROM main.\(flagsTable) WHERE 0"

    /// Runs `body` in a transaction that takes main's write lock alone, waiting for it as
    /// `BEGIN IMMEDIATE` would (`takeMainWriteLockSQL` first). `BEGIN IMMEDIATE` takes the write
    /// lock of every attached file: a transaction that writes only Ferry's state (or the app's
    /// schema) in main would then wait for, and hold, the source files' locks too, and a
    /// retirement dropping a source table off the writer, or any writer of a source file, would
    /// stall it or be refused (SQLite does not wait for a transaction that read first).
    static func writingMain<T>(on db: Connection, _ body: () throws(FerryError) -> T) throws(FerryError) -> T {
        try db.transaction(.deferred) { () throws(FerryError) -> T in
            try sqlite(db.executeCached(takeMainWriteLockSQL))
            return try body()
        }
    }

    /// Creates the catalog tables if missing. Idempotent.
    static func create(on db: Connection) throws(FerryError) {
        try sqlite(db.execute("""
            CREATE TABLE IF NOT EXISTS main.\(sourcesTable)(
                id INTEGER PRIMARY KEY,
                path TEXT,                         -- NULL: the target file itself
                encrypted INTEGER NOT NULL,
                cipher_settings TEXT,              -- JSON of CipherSettings, never a key
                fingerprint TEXT                   -- JSON of SourceFingerprint (salt, sampled rows), never a key
            );
            CREATE TABLE IF NOT EXISTS main.\(tablesTable)(
                target TEXT NOT NULL PRIMARY KEY COLLATE NOCASE,
                source_id INTEGER NOT NULL REFERENCES \(sourcesTable)(id),
                source_table TEXT NOT NULL,
                filter TEXT,                       -- normalized, qualified filter SQL, or NULL
                state TEXT NOT NULL,               -- 'migrating' or 'finished'
                cursor INTEGER,                    -- matching source rows with rowid <= cursor are in the target
                rows_moved INTEGER NOT NULL DEFAULT 0,
                rows_quarantined INTEGER NOT NULL DEFAULT 0,
                rows_estimate INTEGER,             -- matching rows counted at registration
                registered_at TEXT NOT NULL,
                finished_at TEXT,
                notified INTEGER NOT NULL DEFAULT 0, -- 1 once 'table finished' was delivered
                source_cleaned INTEGER NOT NULL DEFAULT 0, -- 1 once moved rows left the source (or it was dropped)
                column_feeds TEXT,                 -- JSON array of ColumnFeed, or NULL
                rows_moved_ahead INTEGER DEFAULT 0, -- rows app writes moved (pruned from the moved set); NULL: not counted
                cleanup_checked INTEGER NOT NULL DEFAULT 0, -- 1 once cleanup found the source's matching rows all accounted for
                moves_recorded INTEGER NOT NULL DEFAULT 0, -- 1: each batch records the rows it accounted for (ferry_migration_moved_rows)
                rows_retired_early INTEGER NOT NULL DEFAULT 0 -- moved rows deleted from a same-file source before cleanup (its own foreign key)
            );
            CREATE TABLE IF NOT EXISTS main.\(flagsTable)(
                key TEXT PRIMARY KEY,
                value
            );
            CREATE TABLE IF NOT EXISTS main.\(movedTable)(
                target TEXT NOT NULL,              -- source rows above the cursor already in the target
                source_rowid INTEGER NOT NULL,     -- (moved by a write), pruned as the cursor passes them
                PRIMARY KEY (target, source_rowid)
            ) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS main.\(movedRowsTable)(
                target TEXT NOT NULL,              -- the batches of a table whose moves are recorded, in order:
                batch INTEGER NOT NULL,            -- the source rows each accounted for (moved, quarantined,
                row_count INTEGER NOT NULL,        -- moved ahead), which cleanup deletes and nothing else
                rowids BLOB NOT NULL,              -- MovedRows.encoded
                digest INTEGER NOT NULL,           -- MovedRows.digest: the rows as they were in the source
                PRIMARY KEY (target, batch)
            ) WITHOUT ROWID;
            """))
        try sqlite(db.execute(appTriggerTablesSQL))
        try sqlite(db.execute(triggerWritesTableSQL))
        try upgrade(on: db)
    }

    /// Adds the columns later versions keep to a catalog written by an earlier one. Idempotent;
    /// runs at every writable open (a read-only open reads older catalogs as they are).
    static func upgrade(on db: Connection) throws(FerryError) {
        // Catalogs written before column feeds existed.
        let columns = try self.columns(of: tablesTable, on: db)
        if !columns.contains("column_feeds") {
            try sqlite(db.execute("ALTER TABLE main.\(tablesTable) ADD COLUMN column_feeds TEXT"))
        }
        // Catalogs written before cleanup counted its rows: their tables' moves ahead are unknown
        // (NULL), so their cleanup is not gated by the count (see `Stepper`).
        if !columns.contains("rows_moved_ahead") {
            try sqlite(db.execute("ALTER TABLE main.\(tablesTable) ADD COLUMN rows_moved_ahead INTEGER"))
            try sqlite(db.execute("ALTER TABLE main.\(tablesTable) ADD COLUMN cleanup_checked INTEGER NOT NULL DEFAULT 0"))
        }
        // Catalogs written before batches recorded their rows: their tables clean by the filter.
        if !columns.contains("moves_recorded") {
            try sqlite(db.execute("ALTER TABLE main.\(tablesTable) ADD COLUMN moves_recorded INTEGER NOT NULL DEFAULT 0"))
        }
        // Catalogs written before same-file sources kept their own foreign keys out of the way.
        if !columns.contains("rows_retired_early") {
            try sqlite(db.execute("ALTER TABLE main.\(tablesTable) ADD COLUMN rows_retired_early INTEGER NOT NULL DEFAULT 0"))
        }
        // Catalogs written before the app's edits of moved rows were recorded.
        try sqlite(db.execute(editedRowsTableSQL))
        // Catalogs written before the app's triggers with Ferry's calls were recorded.
        try sqlite(db.execute(triggerWritesTableSQL))
        // Catalogs written before a filtered same-file source's rows could be retired early.
        try sqlite(db.execute(retiredRowsTableSQL))
        // Catalogs written before source fingerprints existed (the fingerprint is recorded at the next open).
        if try !hasFingerprints(on: db) {
            try sqlite(db.execute("ALTER TABLE main.\(sourcesTable) ADD COLUMN fingerprint TEXT"))
        }
    }

    /// The JSON text of column feeds (nil when there are none).
    static func encode(_ feeds: [ColumnFeed]) -> String? {
        guard !feeds.isEmpty, let data = try? JSONEncoder().encode(feeds) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    /// Column feeds from their JSON text.
    static func decodeFeeds(_ json: String?) throws(FerryError) -> [ColumnFeed] {
        guard let json else { return [] }
        do { return try JSONDecoder().decode([ColumnFeed].self, from: Data(json.utf8)) } catch {
            throw .invalidPlan("the catalog's column feeds cannot be read: \(json)")
        }
    }

    /// True when the database has a catalog.
    static func exists(on db: Connection) throws(FerryError) -> Bool { try sqlite(db.tableExists(tablesTable)) }

    /// True when the catalog has its flags table, which `takeMainWriteLockSQL` writes.
    static func hasFlagsTable(on db: Connection) throws(FerryError) -> Bool { try sqlite(db.tableExists(flagsTable)) }

    /// True when the sources table has its `fingerprint` column (catalogs of older versions do
    /// not, until the next writable open adds it).
    static func hasFingerprints(on db: Connection) throws(FerryError) -> Bool {
        try columns(of: sourcesTable, on: db).contains("fingerprint")
    }

    /// The column names of the catalog table `table` (in `main`), as this catalog's version has them.
    static func columns(of table: String, on db: Connection) throws(FerryError) -> [String] {
        try sqlite(db.fetchAll("PRAGMA main.table_info(\(table))")).map { row throws(FerryError) in try sqlite(row.column(1, as: String.self)) }
    }

    /// Loads every source record.
    static func loadSources(on db: Connection) throws(FerryError) -> [SourceRecord] {
        guard try exists(on: db) else { return [] }
        let fingerprint = try hasFingerprints(on: db) ? "fingerprint" : "NULL"
        return try sqlite(db.fetchAll("SELECT id, path, encrypted, cipher_settings, \(fingerprint) FROM main.\(sourcesTable) ORDER BY id")).map { row throws(FerryError) in
            var settings: CipherSettings?
            if let json: String = try sqlite(row.column(3, as: String?.self)) {
                settings = try? JSONDecoder().decode(CipherSettings.self, from: Data(json.utf8))
            }
            return SourceRecord(id: try sqlite(row.column(0)), path: try sqlite(row.column(1, as: String?.self)),
                                encrypted: try sqlite(row.column(2)), cipherSettings: settings,
                                fingerprint: SourceFingerprint.decode(try sqlite(row.column(4, as: String?.self))))
        }
    }

    /// Records a source's fingerprint.
    static func recordFingerprint(_ fingerprint: SourceFingerprint, sourceID: Int64, on db: Connection) throws(FerryError) {
        try sqlite(db.execute("UPDATE main.\(sourcesTable) SET fingerprint = ? WHERE id = ?", [.text(fingerprint.json), .integer(sourceID)]))
    }

    /// Loads every table record.
    static func loadTables(on db: Connection) throws(FerryError) -> [TableRecord] {
        guard try exists(on: db) else { return [] }
        // A catalog written before column feeds existed has no column_feeds (added at the next
        // registration); it is read as NULL, also on read-only connections.
        let columns = try self.columns(of: tablesTable, on: db)
        let hasFeeds = columns.contains("column_feeds")
        let hasCounts = columns.contains("rows_moved_ahead")
        let hasMovesRecorded = columns.contains("moves_recorded")
        return try sqlite(db.fetchAll("""
            SELECT target, source_id, source_table, filter, state, cursor, rows_moved,
                   rows_quarantined, rows_estimate, notified, source_cleaned, \(hasFeeds ? "column_feeds" : "NULL"),
                   \(hasCounts ? "rows_moved_ahead, cleanup_checked" : "NULL, 0"), \(hasMovesRecorded ? "moves_recorded" : "0")
            FROM main.\(tablesTable) ORDER BY rowid
            """)).map { row throws(FerryError) in
            TableRecord(
                target: try sqlite(row.column(0)), sourceID: try sqlite(row.column(1)), sourceTable: try sqlite(row.column(2)),
                filter: try sqlite(row.column(3, as: String?.self)),
                state: TableRecord.State(rawValue: try sqlite(row.column(4))) ?? .migrating,
                cursor: { if case .integer(let cursor) = row[5] { cursor } else { nil } }(),
                rowsMoved: try sqlite(row.column(6)), rowsQuarantined: try sqlite(row.column(7)),
                rowsEstimate: try sqlite(row.column(8, as: Int64?.self)), notified: try sqlite(row.column(9)),
                sourceCleaned: try sqlite(row.column(10)), columnFeeds: try decodeFeeds(try sqlite(row.column(11, as: String?.self))),
                rowsMovedAhead: try sqlite(row.column(12, as: Int64?.self)), cleanupChecked: try sqlite(row.column(13)),
                keyCursor: { if case .blob(let key) = row[5] { key } else { nil } }(),
                movesRecorded: try sqlite(row.column(14)))
        }
    }

    /// Records a new source and returns its id.
    static func recordSource(path: String?, encrypted: Bool, settings: CipherSettings?, on db: Connection) throws(FerryError) -> Int64 {
        var json: Value = .null
        if let settings, let data = try? JSONEncoder().encode(settings) {
            json = .text(String(decoding: data, as: UTF8.self))
        }
        try sqlite(db.execute("INSERT INTO main.\(sourcesTable)(path, encrypted, cipher_settings) VALUES (?, ?, ?)",
                       [path.map { .text($0) } ?? .null, .integer(encrypted ? 1 : 0), json]))
        return db.lastInsertRowid
    }

    /// Records a new table mapping, in state `migrating`.
    /// - Parameter keyCursor: for a source without rowid, the row key of its first row (nil when
    ///   it is empty): no row is passed yet.
    static func recordTable(_ target: String, sourceID: Int64, sourceTable: String, filter: String?, columnFeeds: [ColumnFeed],
                            estimate: Int64?, keyCursor: [UInt8]? = nil, on db: Connection) throws(FerryError) {
        try sqlite(db.execute("""
            INSERT INTO main.\(tablesTable)(target, source_id, source_table, filter, state, rows_estimate, registered_at, column_feeds,
                                            rows_moved_ahead, cursor, moves_recorded)
            VALUES (?, ?, ?, ?, 'migrating', ?, \(nowSQL), ?, 0, ?, 1)
            """, [.text(target), .integer(sourceID), .text(sourceTable), filter.map { .text($0) } ?? .null,
                  estimate.map { .integer($0) } ?? .null, encode(columnFeeds).map { .text($0) } ?? .null, keyCursor.map { .blob($0) } ?? .null]))
    }

    // MARK: Queries

    /// The number of registered tables not finished (0 without a catalog).
    static func unfinishedTableCount(on db: Connection) throws(FerryError) -> Int {
        guard try exists(on: db) else { return 0 }
        return try sqlite(db.scalar("SELECT count(*) FROM main.\(tablesTable) WHERE state != 'finished'", as: Int.self)) ?? 0
    }

    /// The registered target tables not finished (lower-cased); empty without a catalog.
    static func unfinishedTargets(on db: Connection) throws(FerryError) -> Set<String> {
        try registeredTargets(unfinishedOnly: true, on: db) ?? []
    }

    /// The registered target tables (lowercased), only those not finished when `unfinishedOnly`,
    /// or nil when the database has no catalog.
    static func registeredTargets(unfinishedOnly: Bool = false, on db: Connection) throws(FerryError) -> Set<String>? {
        guard try exists(on: db) else { return nil }
        return Set(try sqlite(db.fetchAll("SELECT target FROM main.\(tablesTable) WHERE ?1 = 0 OR state != 'finished'",
                                          [.integer(unfinishedOnly ? 1 : 0)])).map { row throws(FerryError) in
            try sqlite(row.column(0, as: String.self)).lowercased()
        })
    }

    /// The moved rows of `target` deleted from its source before cleanup: a source in the target's
    /// file whose own foreign key referenced a parent row the app deleted or re-keyed
    /// (`MigratingTableSQL.sourceForeignKeyTriggerSQL`). Cleanup's count and verify leave them out.
    /// 0 for a catalog written before they were counted.
    static func rowsRetiredEarly(target: String, on db: Connection) throws(FerryError) -> Int64 {
        guard try columns(of: tablesTable, on: db).contains("rows_retired_early") else { return 0 }
        return try sqlite(db.scalar("SELECT rows_retired_early FROM main.\(tablesTable) WHERE target = ?", [.text(target)], as: Int64.self)) ?? 0
    }

    /// True when the moved set of `target` holds a source rowid in (`low`, `high`].
    static func hasMovedRows(target: String, above low: Int64, upTo high: Int64, on db: Connection) throws(FerryError) -> Bool {
        try sqlite(db.scalar("""
            SELECT EXISTS (SELECT 1 FROM main.\(movedTable) WHERE target = ?1 AND source_rowid > ?2 AND source_rowid <= ?3)
            """, [.text(target), .integer(low), .integer(high)], as: Int.self)) == 1
    }

    // MARK: Transitions

    /// A batch moved the matching source rows it passed: the cursor moves to `cursor` (a rowid
    /// source's last row passed; a source without rowid's first row not passed, nil when none is
    /// left: see `SourceCursor`), the counts grow by `moved` and `quarantined`, and the moved set
    /// forgets the rows the batch passed, which `pruning` (an SQL condition on a moved-set entry's
    /// `source_rowid`) tells (counted as moved ahead by app writes, for cleanup's check). Updates
    /// `record` to match.
    /// - Parameter accounted: when the table records its moves, the source rows the batch accounted
    ///   for (moved, quarantined, and the moved-set rows the cursor now covers), recorded with it
    ///   (`MovedRows`).
    static func advance(_ record: inout TableRecord, to cursor: SourcePosition?, pruning: String, moved: Int, quarantined: Int,
                        accounted: MovedRows? = nil, on db: Connection) throws(FerryError) {
        switch cursor {
        case .rowid(let rowid)?: record.cursor = rowid
        case .key(let key)?: record.keyCursor = key
        case nil: record.keyCursor = nil
        }
        try advance(&record, cursor: cursor?.value ?? .null, pruning: pruning, moved: moved, quarantined: quarantined,
                    accounted: accounted, on: db)
    }

    /// `advance`'s catalog writes: forget the moved-set rows `pruning` tells (counted as moved
    /// ahead), store `cursor` and the counts.
    private static func advance(_ record: inout TableRecord, cursor: Value, pruning: String, moved: Int, quarantined: Int,
                                accounted: MovedRows? = nil, on db: Connection) throws(FerryError) {
        try sqlite(db.execute("DELETE FROM main.\(movedTable) WHERE target = ?1 AND \(pruning)", [.text(record.target)]))
        record.rowsMovedAhead = record.rowsMovedAhead.map { $0 + Int64(db.changes) }
        if let accounted { try recordMovedRows(accounted, target: record.target, on: db) }
        record.rowsMoved += Int64(moved)
        record.rowsQuarantined += Int64(quarantined)
        try sqlite(db.execute("""
            UPDATE main.\(tablesTable) SET cursor = ?1, rows_moved = ?2, rows_quarantined = ?3, rows_moved_ahead = ?5 WHERE target = ?4
            """, [cursor, .integer(record.rowsMoved), .integer(record.rowsQuarantined), .text(record.target),
                  record.rowsMovedAhead.map { .integer($0) } ?? .null]))
    }

    /// The size of each target's moved set (lower-cased target → rows), for progress.
    static func movedSetSizes(on db: Connection) throws(FerryError) -> [String: Int64] {
        guard try exists(on: db) else { return [:] }
        var sizes: [String: Int64] = [:]
        for row in try sqlite(db.fetchAll("SELECT target, count(*) FROM main.\(movedTable) GROUP BY target")) {
            sizes[try sqlite(row.column(0, as: String.self)).lowercased(), default: 0] += try sqlite(row.column(1, as: Int64.self))
        }
        return sizes
    }

    /// True when `target`'s moved set holds any row.
    static func hasMovedRows(target: String, on db: Connection) throws(FerryError) -> Bool {
        try sqlite(db.scalar("SELECT EXISTS (SELECT 1 FROM main.\(movedTable) WHERE target = ?1)", [.text(target)], as: Int.self)) == 1
    }

    /// No matching source row is left above the cursor: the table is finished and its moved set
    /// forgotten (counted as moved ahead). Updates `record` to match.
    /// - Parameter accounted: when the table records its moves, the moved-set rows it forgets.
    static func finish(_ record: inout TableRecord, accounted: MovedRows? = nil, on db: Connection) throws(FerryError) {
        try sqlite(db.execute("DELETE FROM main.\(movedTable) WHERE target = ?", [.text(record.target)]))
        record.rowsMovedAhead = record.rowsMovedAhead.map { $0 + Int64(db.changes) }
        if let accounted { try recordMovedRows(accounted, target: record.target, on: db) }
        record.state = .finished
        try sqlite(db.execute("UPDATE main.\(tablesTable) SET state = 'finished', finished_at = \(nowSQL), rows_moved_ahead = ?2 WHERE target = ?1",
                       [.text(record.target), record.rowsMovedAhead.map { .integer($0) } ?? .null]))
    }

    /// Cleanup counted the source rows the mapping matches and found them all accounted for.
    static func markCleanupChecked(_ record: inout TableRecord, on db: Connection) throws(FerryError) {
        try sqlite(db.execute("UPDATE main.\(tablesTable) SET cleanup_checked = 1 WHERE target = ?", [.text(record.target)]))
        record.cleanupChecked = true
    }

    /// The moved rows left the source (deleted, or the source table dropped).
    static func markSourceCleaned(_ record: inout TableRecord, on db: Connection) throws(FerryError) {
        try sqlite(db.execute("UPDATE main.\(tablesTable) SET source_cleaned = 1 WHERE target = ? AND state = 'finished'", [.text(record.target)]))
        try sqlite(db.execute(forgetEditsSQL(target: record.target)))  // nothing left to compare them with
        try forgetRetiredRows(of: record, on: db)
        record.sourceCleaned = true
    }

    /// Tables finished but not yet announced, and whether "all finished" is still to be announced.
    static func pendingNotifications(on db: Connection) throws(FerryError) -> (tables: [String], all: Bool) {
        guard try exists(on: db) else { return ([], false) }
        let tables: [String] = try sqlite(db.fetchAll(
            "SELECT target FROM main.\(tablesTable) WHERE state = 'finished' AND notified = 0 ORDER BY rowid"
        )).map { row throws(FerryError) in try sqlite(row.column(0)) }
        let unfinished = try sqlite(db.scalar("SELECT count(*) FROM main.\(tablesTable) WHERE state != 'finished'", as: Int.self)) ?? 0
        let total = try sqlite(db.scalar("SELECT count(*) FROM main.\(tablesTable)", as: Int.self)) ?? 0
        let allNotified = try sqlite(db.scalar("SELECT value FROM main.\(flagsTable) WHERE key = 'all_finished_notified'", as: Int.self)) ?? 0
        return (tables, total > 0 && unfinished == 0 && allNotified == 0)
    }

    /// Records that notifications were delivered (in one transaction).
    static func markNotified(tables: [String], all: Bool, on db: Connection) throws(FerryError) {
        try writingMain(on: db) { () throws(FerryError) in
            for table in tables {
                try sqlite(db.execute("UPDATE main.\(tablesTable) SET notified = 1 WHERE target = ?", [.text(table)]))
            }
            if all {
                try sqlite(db.execute("INSERT OR REPLACE INTO main.\(flagsTable)(key, value) VALUES ('all_finished_notified', 1)"))
            }
        }
    }

    /// A registration added a table in flight: "all finished" is to be announced again.
    static func rearmAllFinishedNotification(on db: Connection) throws(FerryError) {
        try sqlite(db.execute("DELETE FROM main.\(flagsTable) WHERE key = 'all_finished_notified' AND EXISTS (SELECT 1 FROM main.\(tablesTable) WHERE state != 'finished')"))
    }

    // MARK: SQL evaluated inside SQLite (the statement's own snapshot of the state)

    /// The cursor of `target`, or the smallest rowid when nothing moved yet.
    static func cursorSQL(target: String) -> String {
        "ifnull((SELECT cursor FROM main.\(tablesTable) WHERE target = \(sqlString(target))), \(minimumRowid))"
    }

    /// The key cursor of `target` (a source without rowid: the row key of the first source row not
    /// passed yet, NULL once every row is), as the one-row query of `parts`, an SQL list over the
    /// column `cursor` (its key's parts).
    static func keyCursorSQL(target: String, parts: String) -> String {
        "SELECT \(parts) FROM main.\(tablesTable) WHERE target = \(sqlString(target))"
    }

    /// True when the source row `rowid` (its identity: rowid, or row key) is not in `target`'s moved set.
    /// The first test does not depend on the row: SQLite evaluates it once per statement, and while
    /// the moved set is empty (the usual case: only app writes fill it) no row pays the look-up.
    static func notMovedCondition(target: String, rowid: String) -> String {
        "(NOT EXISTS (SELECT 1 FROM main.\(movedTable) WHERE target = \(sqlString(target))) "
            + "OR NOT EXISTS (SELECT 1 FROM main.\(movedTable) WHERE target = \(sqlString(target)) AND source_rowid = \(rowid)))"
    }

    /// The source rowids of `target`'s moved set, as a subquery.
    static func movedRowidsSQL(target: String) -> String {
        "SELECT source_rowid FROM main.\(movedTable) WHERE target = \(sqlString(target))"
    }

    /// Adds the rowids of the one-column table `rowsTable` to `target`'s moved set (unqualified:
    /// trigger bodies may not name a schema, and SQLite's search order finds main).
    static func recordMovedSQL(target: String, from rowsTable: String, qualified: Bool) -> String {
        "INSERT INTO \(qualified ? "main." : "")\(movedTable)(target, source_rowid) SELECT \(sqlString(target)), r FROM \(rowsTable)"
    }

    /// `DROP TABLE` of a migrating target: the table is finished with its cursor above every row of
    /// `source` (a qualified table whose rowid is `rowid`), its cleanup needs no count (every row
    /// of the dropped table goes), and its moved set is forgotten. Its cleanup deletes by the filter
    /// (`moves_recorded = 0`): the dropped table held its pending rows too, which no batch recorded.
    /// With `rowid` nil (a source without rowid), the key cursor passes every row (NULL).
    static func finishDroppedSQL(target: String, source: String, rowid: String?) -> [String] {
        let cursor = rowid.map { "max(ifnull(cursor, \(minimumRowid)), ifnull((SELECT max(\($0)) FROM \(source)), \(minimumRowid)))" } ?? "NULL"
        return [
            "UPDATE main.\(tablesTable) SET state = 'finished', cleanup_checked = 1, moves_recorded = 0, finished_at = \(nowSQL), "
                + "cursor = \(cursor) WHERE target = \(sqlString(target))",
            "DELETE FROM main.\(movedTable) WHERE target = \(sqlString(target))",
            forgetEditsSQL(target: target),
            forgetGuardedAppTriggersSQL(target: target),
        ]
    }

    /// The smallest rowid, standing for "nothing moved yet".
    static let minimumRowid = "-9223372036854775808"
}
