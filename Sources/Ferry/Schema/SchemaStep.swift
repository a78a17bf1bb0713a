import FerrySQLite
/// One declarative step of a SQL migration: plain SQL, or an idempotent helper.
///
/// Steps are data, so a migration made of steps is checksummed and linted like a SQL migration:
///
/// ```swift
/// try migrator.registerMigration("v2", steps: [
///     .addColumnIfMissing(table: "track", column: "playCount", definition: "INTEGER DEFAULT 0"),
///     .createIndexIfMissing("track_album", on: "track", columns: ["albumId"]),
///     .sql("UPDATE track SET playCount = 0 WHERE playCount IS NULL"),
/// ])
/// ```
public enum SchemaStep: Sendable, Hashable {
    /// A SQL script (one or more statements).
    case sql(String)
    /// `ALTER TABLE main.table ADD COLUMN column definition`, unless the column exists.
    /// `definition` is the type and constraints, e.g. `"TEXT"` or `"INTEGER NOT NULL DEFAULT 0"`.
    case addColumnIfMissing(table: String, column: String, definition: String)
    /// `CREATE TABLE IF NOT EXISTS main.name (definition)`; `definition` is the column and
    /// constraint list, e.g. `"id INTEGER PRIMARY KEY, name TEXT NOT NULL"`.
    case createTableIfMissing(_ name: String, definition: String)
    /// `CREATE [UNIQUE] INDEX IF NOT EXISTS main.name ON table(columns) [WHERE condition]`.
    case createIndexIfMissing(_ name: String, on: String, columns: [String], unique: Bool = false, where: String? = nil)

    /// Runs the step.
    func run(_ db: MigrationConnection) throws(FerryError) {
        switch self {
        case .sql(let sql):
            try db.execute(sql)
        case .addColumnIfMissing(let table, let column, let definition):
            try db.addColumnIfMissing(table: table, column: column, definition: definition)
        case .createTableIfMissing(let name, let definition):
            try db.createTableIfMissing(name, definition: definition)
        case .createIndexIfMissing(let name, let table, let columns, let unique, let condition):
            try db.createIndexIfMissing(name, on: table, columns: columns, unique: unique, where: condition)
        }
    }

    /// The SQL the step runs when it has something to do (what the lint inspects).
    public var sql: String {
        switch self {
        case .sql(let sql):
            return sql
        case .addColumnIfMissing(let table, let column, let definition):
            return Self.addColumnSQL(table: table, column: column, definition: definition)
        case .createTableIfMissing(let name, let definition):
            return Self.createTableSQL(name, definition: definition)
        case .createIndexIfMissing(let name, let table, let columns, let unique, let condition):
            return Self.createIndexSQL(name, on: table, columns: columns, unique: unique, where: condition)
        }
    }

    /// The canonical text the checksum covers: the step kind and its normalized fields, each
    /// length-prefixed so that no two different steps share a text.
    var canonicalText: String {
        func field(_ text: String) -> String { "\(text.utf8.count):\(text)" }
        switch self {
        case .sql(let sql):
            return "sql " + field(SQLNormalizer.normalize(sql))
        case .addColumnIfMissing(let table, let column, let definition):
            return "addColumnIfMissing " + field(table) + field(column) + field(SQLNormalizer.normalize(definition))
        case .createTableIfMissing(let name, let definition):
            return "createTableIfMissing " + field(name) + field(SQLNormalizer.normalize(definition))
        case .createIndexIfMissing(let name, let table, let columns, let unique, let condition):
            return "createIndexIfMissing " + field(name) + field(table) + field(String(columns.count))
                + columns.map(field).joined() + (unique ? "U" : "-")
                + (condition.map { "W" + field(SQLNormalizer.normalize($0)) } ?? "-")
        }
    }
}

// MARK: - Idempotent helpers

/// Idempotent schema helpers, on the app's connection and a migration's alike.
extension DatabaseConnection {
    /// True when `main` (or `schema`) has a table (or view, with `includingViews`) of that name.
    public func tableExists(_ name: String, schema: String = "main", includingViews: Bool = false) throws(FerryError) -> Bool {
        let types = includingViews ? "('table', 'view')" : "('table')"
        return try scalar(
            "SELECT count(*) FROM \(Connection.quoteIdentifier(schema)).sqlite_master WHERE type IN \(types) AND name = ? COLLATE NOCASE",
            [.text(name)], as: Int.self) ?? 0 > 0
    }

    /// True when `main` (or `schema`) has an index of that name.
    public func indexExists(_ name: String, schema: String = "main") throws(FerryError) -> Bool {
        try scalar(
            "SELECT count(*) FROM \(Connection.quoteIdentifier(schema)).sqlite_master WHERE type = 'index' AND name = ? COLLATE NOCASE",
            [.text(name)], as: Int.self) ?? 0 > 0
    }

    /// The column names of a table, in order (hidden and generated columns included).
    public func columnNames(in table: String, schema: String = "main") throws(FerryError) -> [String] {
        try fetchAll("SELECT name FROM pragma_table_xinfo(?, ?)", [.text(table), .text(schema)]).map { row throws(FerryError) in
            try sqlite(row.column(0, as: String.self))
        }
    }

    /// True when the table has a column of that name (ASCII case-insensitive, as SQLite matches names).
    public func columnExists(_ column: String, in table: String, schema: String = "main") throws(FerryError) -> Bool {
        try columnNames(in: table, schema: schema).contains { $0.lowercased() == column.lowercased() }
    }

    /// Adds a column unless the table already has it. Returns true when the column was added.
    ///
    /// `definition` is the type and constraints (`"TEXT"`, `"INTEGER DEFAULT 0"`). Prefer nullable
    /// columns or columns with a DEFAULT: SQLite cannot add a NOT NULL column without one.
    /// - Throws: `FerryError.invalidArguments` when the table does not exist.
    @discardableResult
    public func addColumnIfMissing(table: String, column: String, definition: String) throws(FerryError) -> Bool {
        guard try tableExists(table) else {
            throw .invalidArguments("cannot add column \(column): no table named \(table)")
        }
        if try columnExists(column, in: table) { return false }
        try execute(SchemaStep.addColumnSQL(table: table, column: column, definition: definition), .none)
        return true
    }

    /// Creates a table unless one of that name exists. Returns true when the table was created.
    @discardableResult
    public func createTableIfMissing(_ name: String, definition: String) throws(FerryError) -> Bool {
        if try tableExists(name, includingViews: true) { return false }
        try execute(SchemaStep.createTableSQL(name, definition: definition), .none)
        return true
    }

    /// Creates an index unless one of that name exists. Returns true when the index was created.
    @discardableResult
    public func createIndexIfMissing(_ name: String, on table: String, columns: [String], unique: Bool = false, where condition: String? = nil) throws(FerryError) -> Bool {
        if try indexExists(name) { return false }
        try execute(SchemaStep.createIndexSQL(name, on: table, columns: columns, unique: unique, where: condition), .none)
        return true
    }
}

extension SchemaStep {
    static func addColumnSQL(table: String, column: String, definition: String) -> String {
        "ALTER TABLE main.\(Connection.quoteIdentifier(table)) ADD COLUMN \(Connection.quoteIdentifier(column)) \(definition)"
    }

    static func createTableSQL(_ name: String, definition: String) -> String {
        "CREATE TABLE IF NOT EXISTS main.\(Connection.quoteIdentifier(name)) (\(definition))"
    }

    static func createIndexSQL(_ name: String, on table: String, columns: [String], unique: Bool, where condition: String?) -> String {
        var sql = "CREATE \(unique ? "UNIQUE " : "")INDEX IF NOT EXISTS main.\(Connection.quoteIdentifier(name)) ON \(Connection.quoteIdentifier(table))("
            + columns.map { Connection.quoteIdentifier($0) }.joined(separator: ", ") + ")"
        if let condition { sql += " WHERE \(condition)" }
        return sql
    }
}
