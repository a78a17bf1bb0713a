import FerrySQL
import FerrySQLite
/// The columns and key of a table, read from SQLite's own schema pragmas.
struct TableShape: Sendable, Hashable {
    /// A column as `PRAGMA table_xinfo` describes it.
    struct Column: Sendable, Hashable {
        let name: String
        let declaredType: String
        let notNull: Bool
        let defaultSQL: String?
        /// 1-based position in the primary key, 0 when not part of it.
        let primaryKeyPosition: Int
        /// 0 normal, 1 hidden (virtual tables), 2/3 generated.
        let hidden: Int
        var isGenerated: Bool { hidden == 2 || hidden == 3 }
    }

    let schema: String
    let name: String
    let columns: [Column]
    /// The name that reaches the real rowid: `rowid`, `_rowid_` or `oid`, whichever no column shadows.
    let rowidName: String
    /// The INTEGER PRIMARY KEY column that aliases the rowid, if any.
    let rowidAliasColumn: String?
    /// True when the table was declared with AUTOINCREMENT.
    let isAutoincrement: Bool
    /// The CREATE TABLE statement as stored in the schema.
    let sql: String
    /// False for a `WITHOUT ROWID` table: its rows are identified by their primary key alone.
    var hasRowid = true
    /// The primary key of a `WITHOUT ROWID` table, in key order, each column with the collation
    /// that makes it unique (empty for rowid tables).
    var primaryKey: [KeyColumn] = []

    /// A column of an index's key, with the collation the index compares it under.
    struct KeyColumn: Sendable, Hashable {
        let column: String
        let collation: String
    }

    /// The key columns of index `index` of `schema`, in key order; nil for a key expression.
    static func keyColumns(ofIndex index: String, schema: String, on db: Connection) throws(FerryError) -> [KeyColumn?] {
        // index_xinfo: seqno, cid, name, desc, coll, key (the key columns come first).
        try sqlite(db.fetchAll("PRAGMA \(Connection.quoteIdentifier(schema)).index_xinfo(\(Connection.quoteIdentifier(index)))"))
            .filter { (try? $0.column(5, as: Int.self)) == 1 }
            .map { row throws(FerryError) -> KeyColumn? in
                guard let column = try sqlite(row.column(2, as: String?.self)) else { return nil }
                return KeyColumn(column: column, collation: try sqlite(row.column(4, as: String?.self)) ?? "BINARY")
            }
    }

    /// Columns that can be written (generated columns cannot).
    var writableColumns: [Column] { columns.filter { !$0.isGenerated } }

    /// The column with that name (ASCII case-insensitive).
    func column(named name: String) -> Column? {
        columns.first { $0.name.lowercased() == name.lowercased() }
    }

    /// Reads the shape of `schema.name`.
    /// - Throws: `FerryError.noSuchTable`, or `FerryError.unsupported` for views and virtual
    ///   tables (a `WITHOUT ROWID` table reads with `hasRowid` false).
    static func read(_ name: String, schema: String, on db: Connection) throws(FerryError) -> TableShape {
        let q = Connection.quoteIdentifier
        guard let master = try sqlite(db.fetchOne(
            "SELECT type, name, sql FROM \(q(schema)).sqlite_master WHERE type IN ('table', 'view') AND name = ? COLLATE NOCASE",
            [.text(name)]))
        else {
            throw .noSuchTable(name: name, schema: schema)
        }
        let type: String = try sqlite(master.column(0))
        let realName: String = try sqlite(master.column(1))
        let sql: String = try sqlite(master.column(2, as: String?.self)) ?? ""
        guard type == "table" else {
            throw .unsupported("\(schema).\(realName) is a view; Ferry migrates tables")
        }
        let upperSQL = sql.uppercased()
        if upperSQL.hasPrefix("CREATE VIRTUAL TABLE") {
            throw .unsupported("\(schema).\(realName) is a virtual table; Ferry migrates ordinary rowid tables")
        }
        let columns = try sqlite(db.fetchAll("PRAGMA \(q(schema)).table_xinfo(\(q(realName)))")).map { row throws(FerryError) in
            Column(name: try sqlite(row.column(1)), declaredType: try sqlite(row.column(2, as: String?.self)) ?? "",
                   notNull: try sqlite(row.column(3)), defaultSQL: try sqlite(row.column(4, as: String?.self)),
                   primaryKeyPosition: try sqlite(row.column(5)), hidden: try sqlite(row.column(6)))
        }
        let names = Set(columns.map { $0.name.lowercased() })
        guard let rowidName = ["rowid", "_rowid_", "oid"].first(where: { !names.contains($0) }) else {
            throw .unsupported("\(schema).\(realName) has columns named rowid, _rowid_ and oid, which hide its rowid")
        }
        // A WITHOUT ROWID table has no rowid to select.
        let hasRowid = (try? db.prepare("SELECT \(rowidName) FROM \(q(schema)).\(q(realName)) LIMIT 0")) != nil
        let pk = columns.filter { $0.primaryKeyPosition > 0 }
        var alias: String?
        if hasRowid, pk.count == 1, pk[0].declaredType.uppercased() == "INTEGER" {
            // "INTEGER PRIMARY KEY DESC" is the one spelling that does not alias the rowid: it gets
            // a separate primary-key index, which an alias never has.
            let pkIndexes = try sqlite(db.fetchAll("PRAGMA \(q(schema)).index_list(\(q(realName)))"))
                .filter { (try? $0.column(3, as: String.self)) == "pk" }
            alias = pkIndexes.isEmpty ? pk[0].name : nil
        }
        var primaryKey: [KeyColumn] = []
        if !hasRowid, let index = try sqlite(db.fetchAll("PRAGMA \(q(schema)).index_list(\(q(realName)))"))
            .first(where: { (try? $0.column(3, as: String.self)) == "pk" }) {
            primaryKey = try keyColumns(ofIndex: try sqlite(index.column(1)), schema: schema, on: db).compactMap { $0 }
        }
        return TableShape(schema: schema, name: realName, columns: columns, rowidName: rowidName,
                          rowidAliasColumn: alias, isAutoincrement: Self.declaresAutoincrement(sql), sql: sql, hasRowid: hasRowid,
                          primaryKey: primaryKey)
    }

    /// The spellings of the rowid (`rowid`, `oid`, `_rowid_`) that no column of the table shadows:
    /// where a column has that name, the name means the column, on the finished table as on a
    /// migrating one.
    var unshadowedRowidSpellings: [String] {
        ["rowid", "oid", "_rowid_"].filter { name in !columns.contains { $0.name.lowercased() == name } }
    }

    /// True when the `CREATE TABLE` statement `sql` declares `AUTOINCREMENT` (on its column's or its
    /// table's `PRIMARY KEY`), read from the parsed statement: a default, a name or a comment that
    /// spells the word is no declaration. A statement FerrySQL cannot parse is searched for the
    /// keyword instead (a false yes only keeps the sequence above the source's keys).
    static func declaresAutoincrement(_ sql: String) -> Bool {
        guard case .createTable(let statement)? = try? Parser.parseStatement(sql) else { return sql.uppercased().contains("AUTOINCREMENT") }
        guard case .columns(let definitions, let constraints, _) = statement.definition else { return false }
        for definition in definitions {
            for constraint in definition.constraints {
                if case .primaryKey(_, _, autoincrement: true) = constraint.kind { return true }
            }
        }
        for constraint in constraints {
            if case .primaryKey(_, autoincrement: true, _) = constraint.kind { return true }
        }
        return false
    }
}
