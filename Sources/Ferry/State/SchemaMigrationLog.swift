import FerrySQLite

/// The one owner of the schema migrator's persisted record, `main.ferry_schema_migrations`: one
/// row per applied migration (`AppliedMigrationRecord`). Every read and write of it goes through
/// this type; times come from SQLite's clock.
enum SchemaMigrationLog {
    /// The table's name (in `main`).
    static let table = "ferry_schema_migrations"

    /// True when the table exists (created by the first migration run).
    static func exists(on db: Connection) throws(FerryError) -> Bool {
        try sqlite(db.tableExists(table))
    }

    /// Creates the table if missing. Idempotent.
    static func create(on db: Connection) throws(FerryError) {
        try sqlite(db.execute("""
            CREATE TABLE IF NOT EXISTS main.\(table) (
                identifier TEXT NOT NULL PRIMARY KEY,
                applied_at TEXT NOT NULL,
                duration_ms REAL NOT NULL,
                checksum TEXT,
                kind TEXT NOT NULL,
                replaced TEXT,
                lint_allowances TEXT
            )
            """))
    }

    /// Every identifier recorded (empty without the table).
    static func identifiers(on db: Connection) throws(FerryError) -> Set<String> {
        guard try exists(on: db) else { return [] }
        return Set(try sqlite(db.fetchAll("SELECT identifier FROM main.\(table)")).map { row throws(FerryError) in
            try sqlite(row.column(0, as: String.self))
        })
    }

    /// Every row, oldest first (empty without the table).
    static func records(on db: Connection) throws(FerryError) -> [AppliedMigrationRecord] {
        guard try exists(on: db) else { return [] }
        return try sqlite(db.fetchAll("""
            SELECT identifier, applied_at, duration_ms, checksum, kind, replaced, lint_allowances
            FROM main.\(table) ORDER BY rowid
            """)).map { row throws(FerryError) in
            AppliedMigrationRecord(
                identifier: try sqlite(row.column(0)), appliedAt: try sqlite(row.column(1)), duration: .milliseconds(try sqlite(row.column(2, as: Double.self))),
                checksum: try sqlite(row.column(3, as: String?.self)), kind: try sqlite(row.column(4)),
                replaced: (try sqlite(row.column(5, as: String?.self))).map { $0.split(separator: "\n").map(String.init) } ?? [],
                lintAllowances: try sqlite(row.column(6, as: String?.self)))
        }
    }

    /// The recorded checksums, by identifier (unchecked migrations left out).
    static func checksums(on db: Connection) throws(FerryError) -> [String: String] {
        guard try exists(on: db) else { return [:] }
        var recorded: [String: String] = [:]
        for row in try sqlite(db.fetchAll("SELECT identifier, checksum FROM main.\(table) WHERE checksum IS NOT NULL")) {
            recorded[try sqlite(row.column(0, as: String.self))] = try sqlite(row.column(1, as: String.self))
        }
        return recorded
    }

    /// Records that a migration was applied, now.
    static func recordApplied(identifier: String, milliseconds: Double, checksum: String?, kind: String, replaced: [String],
                              allowances: [String], on db: Connection) throws(FerryError) {
        try sqlite(db.execute("""
            INSERT INTO main.\(table)
                (identifier, applied_at, duration_ms, checksum, kind, replaced, lint_allowances)
            VALUES (?, \(MigrationState.nowSQL), ?, ?, ?, ?, ?)
            """, [
                .text(identifier), .real(milliseconds), checksum.map(Value.text) ?? .null, .text(kind),
                replaced.isEmpty ? .null : .text(replaced.joined(separator: "\n")),
                allowances.isEmpty ? .null : .text(allowances.joined(separator: "\n")),
            ]))
    }

    /// Replaces the recorded checksum of an applied migration.
    static func recordChecksum(_ checksum: String?, of identifier: String, on db: Connection) throws(FerryError) {
        try sqlite(db.execute("UPDATE main.\(table) SET checksum = ? WHERE identifier = ?", [checksum.map(Value.text) ?? .null, .text(identifier)]))
    }

    /// Forgets applied migrations (those a merged migration replaces).
    static func remove(_ identifiers: Set<String>, on db: Connection) throws(FerryError) {
        for id in identifiers.sorted() {
            try sqlite(db.execute("DELETE FROM main.\(table) WHERE identifier = ?", [.text(id)]))
        }
    }
}
