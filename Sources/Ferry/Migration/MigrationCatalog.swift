import Foundation

/// The migration state Ferry persists in the target database (tables `main.ferry_migration_*`).
///
/// Everything that describes progress is written in the same transaction as the rows it describes,
/// so the catalog and the data never disagree after a crash (see `Stepper` for the cross-file case).
/// Keys are never stored; cipher *settings* are, so the app only has to supply keys.
enum MigrationCatalog {
    static let sourcesTable = "ferry_migration_sources"
    static let tablesTable = "ferry_migration_tables"
    static let movedTable = "ferry_migration_moved"
    static let flagsTable = "ferry_migration_flags"

    /// Creates the catalog tables if missing. Idempotent.
    static func create(on db: Connection) throws(FerryError) {
        try db.execute("""
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
                registered_at REAL NOT NULL,
                finished_at REAL,
                notified INTEGER NOT NULL DEFAULT 0, -- 1 once 'table finished' was delivered
                source_cleaned INTEGER NOT NULL DEFAULT 0, -- 1 once moved rows left the source (or it was dropped)
                column_feeds TEXT,                 -- JSON array of ColumnFeed, or NULL
                rows_moved_ahead INTEGER DEFAULT 0, -- rows app writes moved (pruned from the moved set); NULL: not counted
                cleanup_checked INTEGER NOT NULL DEFAULT 0 -- 1 once cleanup found the source's matching rows all accounted for
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
            """)
        try upgrade(on: db)
    }

    /// Adds the columns later versions keep to a catalog written by an earlier one. Idempotent;
    /// runs at every writable open (a read-only open reads older catalogs as they are).
    static func upgrade(on db: Connection) throws(FerryError) {
        // Catalogs written before column feeds existed.
        let columns = try db.fetchAll("PRAGMA main.table_info(\(tablesTable))").map { row throws(FerryError) in try row.get(1, as: String.self) }
        if !columns.contains("column_feeds") {
            try db.execute("ALTER TABLE main.\(tablesTable) ADD COLUMN column_feeds TEXT")
        }
        // Catalogs written before cleanup counted its rows: their tables' moves ahead are unknown
        // (NULL), so their cleanup is not gated by the count (see `Stepper`).
        if !columns.contains("rows_moved_ahead") {
            try db.execute("ALTER TABLE main.\(tablesTable) ADD COLUMN rows_moved_ahead INTEGER")
            try db.execute("ALTER TABLE main.\(tablesTable) ADD COLUMN cleanup_checked INTEGER NOT NULL DEFAULT 0")
        }
        // Catalogs written before source fingerprints existed (the fingerprint is recorded at the next open).
        if try !hasFingerprints(on: db) {
            try db.execute("ALTER TABLE main.\(sourcesTable) ADD COLUMN fingerprint TEXT")
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
    static func exists(on db: Connection) throws(FerryError) -> Bool {
        try db.scalar("SELECT count(*) FROM main.sqlite_master WHERE type = 'table' AND name = ?", [.text(tablesTable)], as: Int.self) == 1
    }

    /// True when the sources table has its `fingerprint` column (catalogs of older versions do
    /// not, until the next writable open adds it).
    static func hasFingerprints(on db: Connection) throws(FerryError) -> Bool {
        for row in try db.fetchAll("PRAGMA main.table_info(\(sourcesTable))") where try row.get(1, as: String.self) == "fingerprint" {
            return true
        }
        return false
    }

    /// Loads every source record.
    static func loadSources(on db: Connection) throws(FerryError) -> [SourceRecord] {
        guard try exists(on: db) else { return [] }
        let fingerprint = try hasFingerprints(on: db) ? "fingerprint" : "NULL"
        return try db.fetchAll("SELECT id, path, encrypted, cipher_settings, \(fingerprint) FROM main.\(sourcesTable) ORDER BY id").map { row throws(FerryError) in
            var settings: CipherSettings?
            if let json: String = try row.get(3, as: String?.self) {
                settings = try? JSONDecoder().decode(CipherSettings.self, from: Data(json.utf8))
            }
            return SourceRecord(id: try row.get(0), path: try row.get(1, as: String?.self),
                                encrypted: try row.get(2), cipherSettings: settings,
                                fingerprint: SourceFingerprint.decode(try row.get(4, as: String?.self)))
        }
    }

    /// Records a source's fingerprint.
    static func storeFingerprint(_ fingerprint: SourceFingerprint, sourceID: Int64, on db: Connection) throws(FerryError) {
        try db.execute("UPDATE main.\(sourcesTable) SET fingerprint = ? WHERE id = ?", [.text(fingerprint.json), .integer(sourceID)])
    }

    /// Loads every table record.
    static func loadTables(on db: Connection) throws(FerryError) -> [TableRecord] {
        guard try exists(on: db) else { return [] }
        // A catalog written before column feeds existed has no column_feeds (added at the next
        // registration); it is read as NULL, also on read-only connections.
        let columns = try db.fetchAll("PRAGMA main.table_info(\(tablesTable))").map { row throws(FerryError) in try row.get(1, as: String.self) }
        let hasFeeds = columns.contains("column_feeds")
        let hasCounts = columns.contains("rows_moved_ahead")
        return try db.fetchAll("""
            SELECT target, source_id, source_table, filter, state, cursor, rows_moved,
                   rows_quarantined, rows_estimate, notified, source_cleaned, \(hasFeeds ? "column_feeds" : "NULL"),
                   \(hasCounts ? "rows_moved_ahead, cleanup_checked" : "NULL, 0")
            FROM main.\(tablesTable) ORDER BY rowid
            """).map { row throws(FerryError) in
            TableRecord(
                target: try row.get(0), sourceID: try row.get(1), sourceTable: try row.get(2),
                filter: try row.get(3, as: String?.self),
                state: TableRecord.State(rawValue: try row.get(4)) ?? .migrating,
                cursor: try row.get(5, as: Int64?.self),
                rowsMoved: try row.get(6), rowsQuarantined: try row.get(7),
                rowsEstimate: try row.get(8, as: Int64?.self), notified: try row.get(9),
                sourceCleaned: try row.get(10), columnFeeds: try decodeFeeds(try row.get(11, as: String?.self)),
                rowsMovedAhead: try row.get(12, as: Int64?.self), cleanupChecked: try row.get(13))
        }
    }

    /// Inserts a source record and returns its id.
    static func insertSource(path: String?, encrypted: Bool, settings: CipherSettings?, on db: Connection) throws(FerryError) -> Int64 {
        var json: Value = .null
        if let settings, let data = try? JSONEncoder().encode(settings) {
            json = .text(String(decoding: data, as: UTF8.self))
        }
        try db.execute("INSERT INTO main.\(sourcesTable)(path, encrypted, cipher_settings) VALUES (?, ?, ?)",
                       [path.map { .text($0) } ?? .null, .integer(encrypted ? 1 : 0), json])
        return db.lastInsertRowid
    }

    /// Inserts a table record in state `migrating`.
    static func insertTable(_ target: String, sourceID: Int64, sourceTable: String, filter: String?, columnFeeds: [ColumnFeed],
                            estimate: Int64?, on db: Connection) throws(FerryError) {
        try db.execute("""
            INSERT INTO main.\(tablesTable)(target, source_id, source_table, filter, state, rows_estimate, registered_at, column_feeds,
                                            rows_moved_ahead)
            VALUES (?, ?, ?, ?, 'migrating', ?, ?, ?, 0)
            """, [.text(target), .integer(sourceID), .text(sourceTable), filter.map { .text($0) } ?? .null,
                  estimate.map { .integer($0) } ?? .null, .real(Date().timeIntervalSince1970),
                  encode(columnFeeds).map { .text($0) } ?? .null])
    }
}

/// A persisted source database.
struct SourceRecord: Sendable, Hashable {
    /// Stable id; the source attaches as schema `ferry_src_<id>`.
    let id: Int64
    /// The stored path (relative to the target's directory, or absolute); nil for the target file.
    let path: String?
    /// Whether the file is encrypted (then a key must be supplied at open).
    let encrypted: Bool
    /// The cipher settings (never the key).
    let cipherSettings: CipherSettings?
    /// What identifies the registered file (nil: registered by a version that did not record it).
    var fingerprint: SourceFingerprint? = nil

    /// The schema name the source has on Ferry's connections.
    var schema: String { path == nil ? "main" : "\(Self.schemaPrefix)\(id)" }
    /// The prefix of the schema names Ferry attaches sources under.
    static let schemaPrefix = "ferry_src_"
}

/// A persisted table mapping and its progress.
struct TableRecord: Sendable, Hashable {
    enum State: String, Sendable { case migrating, finished }
    var target: String
    var sourceID: Int64
    var sourceTable: String
    var filter: String?
    var state: State
    var cursor: Int64?
    var rowsMoved: Int64
    var rowsQuarantined: Int64
    var rowsEstimate: Int64?
    var notified: Bool
    var sourceCleaned: Bool
    /// Target columns fed by expressions (normalized), in the order registered.
    var columnFeeds: [ColumnFeed] = []
    /// Rows moved ahead of the stepper by app writes, counted as the moved set is pruned (nil:
    /// registered by a version that did not count them).
    var rowsMovedAhead: Int64? = 0
    /// True once cleanup found every matching source row accounted for (moved, moved ahead or
    /// quarantined): from then on it deletes.
    var cleanupChecked = false
}
