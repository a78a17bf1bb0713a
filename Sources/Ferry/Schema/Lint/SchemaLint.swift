import FerrySQLite
import FerrySQL

/// One finding of the schema safety lint.
public struct SchemaLintFinding: Sendable, Hashable, CustomStringConvertible {
    /// The rule.
    public var rule: SchemaLintRule
    /// The statement, as written in the migration.
    public var statement: String
    /// What is wrong.
    public var message: String
    /// The safe pattern to use instead.
    public var advice: String
    /// The reason the migration gave for opting out of the rule, if it did.
    public var allowedBecause: String?

    /// True when the finding stops the migration (a refusing rule without an opt-out).
    public var isRefusal: Bool { rule.refuses && allowedBecause == nil }

    /// `[rule] refused/allowed/warning: \`statement\` - message advice`, one line.
    public var description: String {
        var text = "[\(rule)] \(isRefusal ? "refused" : rule.refuses ? "allowed" : "warning"): `\(statement)` - \(message) \(advice)"
        if let allowedBecause { text += " (allowed because: \(allowedBecause))" }
        return text
    }
}

/// The schema safety lint: inspects migration SQL before it runs and refuses what loses user data.
///
/// Rules (see `SchemaLintRule`): `DROP TABLE` of a table holding rows, `ALTER TABLE ... DROP COLUMN`,
/// `ADD COLUMN ... NOT NULL` without a DEFAULT, table rebuilds that copy fewer columns or rows than the
/// old table holds, dropping a table whose children declare destructive `ON DELETE` actions while
/// foreign keys are enforced, and (warning only) renames. Statements are parsed with `FerrySQL`;
/// statements it cannot parse are skipped (SQLite judges them when they run).
///
/// The lint follows the script statement by statement (tables created, renamed and dropped along
/// the way). Data-dependent rules read the live database when one is given; without one, every
/// table that the script did not create is assumed to hold rows. Rows the script itself inserts
/// into tables it created are not user data and do not count.
///
/// ```swift
/// let findings = try SchemaLint.lint("ALTER TABLE track DROP COLUMN legacy", database: db)
/// findings.first?.rule          // .dropColumn
/// findings.first?.isRefusal     // true
/// ```
public enum SchemaLint {
    /// Lints a SQL script.
    /// - Parameters:
    ///   - sql: one or more statements.
    ///   - database: the database the script will run on (its `main` schema is read, never written).
    ///   - foreignKeyChecks: how the migration will run: `.immediate` means foreign keys are enforced
    ///     while it runs (when the connection enforces them), so `ON DELETE` actions fire.
    ///   - allowances: rules the migration opts out of; matching findings carry the reason and do
    ///     not refuse.
    /// - Throws: `FerryError.unreadableSQL` when `sql` holds a NUL byte (SQLite would stop reading
    ///   there); errors reading `database`.
    public static func lint(
        _ sql: String, database: MigrationConnection? = nil, foreignKeyChecks: SchemaMigrator.ForeignKeyChecks = .deferred,
        allowances: [SchemaLintAllowance] = []
    ) throws(FerryError) -> [SchemaLintFinding] {
        try lint(sql, database: database?.connection, foreignKeyChecks: foreignKeyChecks, allowances: allowances)
    }

    /// `lint(_:database:foreignKeyChecks:allowances:)` on a connection of this package (or none).
    package static func lint(
        _ sql: String, name: String = "the script", database: Connection?, foreignKeyChecks: SchemaMigrator.ForeignKeyChecks = .deferred,
        allowances: [SchemaLintAllowance] = []
    ) throws(FerryError) -> [SchemaLintFinding] {
        try SchemaLintInput.check(sql, name: name)
        let enforced: Bool
        if foreignKeyChecks == .immediate {
            enforced = try database.map { db throws(FerryError) in try sqlite(db.scalar("PRAGMA foreign_keys", as: Int.self)) == 1 } ?? true
        } else {
            enforced = false
        }
        return try lint(steps: [.sql(sql)], name: name, db: database, foreignKeysEnforced: enforced, allowances: allowances)
    }

    /// Lints the SQL of every declarative migration of a migrator, without a database (every table
    /// the migrations did not create is assumed to hold rows), following the migrations in order.
    /// Closure migrations are not linted. Returns the findings per migration identifier, in order.
    /// - Throws: `FerryError.unreadableSQL` for a migration whose SQL holds a NUL byte.
    public static func lint(_ migrator: SchemaMigrator) throws(FerryError) -> [(identifier: String, findings: [SchemaLintFinding])] {
        var model = try SchemaModel(db: nil)
        var result: [(identifier: String, findings: [SchemaLintFinding])] = []
        for migration in migrator.registered {
            guard let steps = migration.lintedSteps(appliedMerged: []) else { continue }
            for step in steps { try SchemaLintInput.check(step.sql, name: "migration \"\(migration.identifier)\"") }
            let enforced = migration.foreignKeyPolicy == .immediate
            var findings = try lint(statements: parse(steps, name: "migration \"\(migration.identifier)\""), model: &model, foreignKeysEnforced: enforced)
            apply(migration.allowances, to: &findings)
            result.append((migration.identifier, findings))
            model.forgetRows()
        }
        return result
    }

    /// Lints migration steps against a live database (what the migrator runs before each migration).
    static func lint(steps: [SchemaStep], name: String = "the migration", db: Connection?, foreignKeysEnforced: Bool,
                     allowances: [SchemaLintAllowance]) throws(FerryError) -> [SchemaLintFinding] {
        var model = try SchemaModel(db: db)
        var findings = try lint(statements: parse(steps, name: name), model: &model, foreignKeysEnforced: foreignKeysEnforced)
        apply(allowances, to: &findings)
        return findings
    }

    private static func apply(_ allowances: [SchemaLintAllowance], to findings: inout [SchemaLintFinding]) {
        for index in findings.indices {
            if let allowance = allowances.first(where: { $0.rule == findings[index].rule }) {
                findings[index].allowedBecause = allowance.reason
            }
        }
    }

    // MARK: Parsing

    struct ParsedStatement {
        var text: String
        var statement: FerrySQL.Statement?
    }

    /// The statements of `steps`, parsed where FerrySQL can parse them.
    /// - Throws: `FerryError.unreadableSQL` for a script that does not even tokenize (a stray
    ///   backtick, an unterminated string, a byte-order mark): SQLite would run the statements before
    ///   that point and fail there; a lint that skipped the script would pass what it never read.
    static func parse(_ steps: [SchemaStep], name: String) throws(FerryError) -> [ParsedStatement] {
        var result: [ParsedStatement] = []
        for step in steps {
            let script = step.sql
            let bytes = Array(script.utf8)
            let slices: [StatementSlice]
            do {
                slices = try ScriptSplitter.split(utf8: bytes)
            } catch {
                throw .unreadableSQL(name: name, offset: error.range.lowerBound,
                                     reason: "SQLite cannot read it: \(error.message) (the lint cannot check what it cannot read)")
            }
            for slice in slices {
                let text = String(decoding: bytes[slice.range], as: UTF8.self)
                result.append(ParsedStatement(text: text, statement: try? Parser.parseStatement(text)))
            }
        }
        return result
    }

    // MARK: Rules

    /// An `INSERT INTO target ... SELECT ... FROM source` in the script: a candidate rebuild copy.
    struct Copy {
        var index: Int
        var target: String
        var source: String
        /// True for `SELECT *` / `source.*`.
        var copiesAllColumns: Bool
        /// The source columns the SELECT mentions (keys).
        var mentionedColumns: Set<String>
        /// Why the copy may skip rows (WHERE, LIMIT, DISTINCT, GROUP BY, compound, join), if it may.
        var rowFilter: String?
    }

    static func lint(statements: [ParsedStatement], model: inout SchemaModel, foreignKeysEnforced: Bool) throws(FerryError) -> [SchemaLintFinding] {
        // Pre-pass: copies and drops, to recognize rebuilds.
        var copies: [Copy] = []
        var dropIndexes: [String: [Int]] = [:]
        for (index, parsed) in statements.enumerated() {
            switch parsed.statement {
            case .insert(let insert)?:
                if isMain(insert.table), let copy = copy(from: insert, index: index) { copies.append(copy) }
            case .drop(let drop)? where drop.kind == .table && isMain(drop.name):
                dropIndexes[key(drop.name), default: []].append(index)
            default:
                break
            }
        }
        /// The copy feeding a rebuild in which `table` is dropped at `index`.
        func rebuildCopy(dropping table: String, at index: Int) -> Copy? {
            copies.last { $0.source == table && $0.index < index && $0.target != table }
        }
        /// True when renaming `from` to `to` at `index` is part of a rebuild (the copy target takes
        /// the dropped table's place, or the old table moves aside to be copied and dropped).
        func renameIsPartOfRebuild(from: String, to: String, at index: Int) -> Bool {
            copies.contains { copy in
                // new -> old after `INSERT INTO new SELECT FROM old; DROP TABLE old`.
                (copy.target == from && copy.source == to && copy.index < index
                    && (dropIndexes[to] ?? []).contains { $0 > copy.index && $0 < index })
                    // old -> old_tmp before `INSERT INTO old SELECT FROM old_tmp; DROP TABLE old_tmp`.
                    || (copy.source == to && copy.target == from && copy.index > index
                        && (dropIndexes[to] ?? []).contains { $0 > copy.index })
            }
        }

        var findings: [SchemaLintFinding] = []
        func report(_ rule: SchemaLintRule, _ statement: String, _ message: String, _ advice: String) {
            findings.append(SchemaLintFinding(rule: rule, statement: statement, message: message, advice: advice))
        }

        for (index, parsed) in statements.enumerated() {
            guard let statement = parsed.statement else { continue }
            let text = parsed.text
            switch statement {
            case .createTable(let create) where !create.temporary && isMain(create.name):
                model.create(create)

            case .createVirtualTable(let create) where isMain(create.name):
                model.createUnknown(key(create.name), name: create.name.name.name, hasRows: false)

            case .drop(let drop) where drop.kind == .table && isMain(drop.name):
                let table = key(drop.name)
                let name = drop.name.name.name
                if !model.exists(table) {
                    // Without a database, a table the script did not create may exist and hold rows.
                    guard model.db == nil else { continue }  // not there: IF EXISTS skips it, or SQLite fails
                    model.createUnknown(table, name: name, hasRows: nil)
                }
                let rows = try model.hasRows(table)
                let maybeRows = rows != false
                let rowsText = rows == nil ? "may hold rows (the lint ran without a database)" : "holds rows"

                if foreignKeysEnforced && maybeRows {
                    let children = model.destructiveChildren(of: table)
                    if !children.isEmpty {
                        report(.destructiveForeignKeyAction, text,
                               "Table \(name) \(rowsText), and dropping it with foreign keys enforced runs "
                                   + children.joined(separator: ", ") + ": their rows would be deleted or rewritten.",
                               Advice.destructiveForeignKeyAction)
                    }
                }

                if let copy = rebuildCopy(dropping: table, at: index) {
                    // A rebuild: the data must all have been copied.
                    var lost: [String] = []
                    if !copy.copiesAllColumns, let columns = model.columns(of: table) {
                        lost = columns.filter { !copy.mentionedColumns.contains(SQLName.key($0)) }
                    }
                    if maybeRows && (!lost.isEmpty || copy.rowFilter != nil) {
                        var what: [String] = []
                        if !lost.isEmpty { what.append("does not copy column(s) \(lost.joined(separator: ", "))") }
                        if let filter = copy.rowFilter { what.append("may skip rows (\(filter))") }
                        report(.rebuildDropsData, text,
                               "The rebuild of \(name) \(what.joined(separator: " and ")): that data is lost when \(name) is dropped.",
                               Advice.rebuild)
                    }
                } else if maybeRows {
                    report(.dropTableWithRows, text, "Table \(name) \(rowsText): dropping it deletes them for good.", Advice.dropTable)
                }
                model.drop(table)

            case .alterTable(let alter) where isMain(alter.table):
                let table = key(alter.table)
                let name = alter.table.name.name
                switch alter.action {
                case .dropColumn(let column):
                    report(.dropColumn, text, "Dropping column \(name).\(column.name) deletes its data for good (SQLite rewrites the table).", Advice.dropColumn)
                    model.dropColumn(column.name, of: table)
                case .addColumn(let definition):
                    let kinds = definition.constraints.compactMap(\.kind)
                    let notNull = kinds.contains { if case .notNull = $0 { return true } else { return false } }
                    let hasDefault = kinds.contains { if case .default = $0 { return true } else { return false } }
                    let generated = kinds.contains { if case .generated = $0 { return true } else { return false } }
                    if notNull && !hasDefault && !generated {
                        report(.addNotNullColumnWithoutDefault, text,
                               "Column \(name).\(definition.name.name) is NOT NULL without a DEFAULT: existing rows have no value for it, and SQLite refuses the statement.",
                               Advice.addNotNull)
                    }
                    model.addColumn(definition.name.name, to: table)
                case .renameTable(let newName):
                    let to = SQLName.key(newName.name)
                    if !renameIsPartOfRebuild(from: table, to: to, at: index) {
                        report(.rename, text, "Renaming table \(name) to \(newName.name) breaks code, views and triggers that use the old name, and older app versions sharing this database.", Advice.rename)
                    }
                    model.rename(table, to: to, name: newName.name)
                case .renameColumn(let old, let new):
                    report(.rename, text, "Renaming column \(name).\(old.name) to \(new.name) breaks code, views and triggers that use the old name, and older app versions sharing this database.", Advice.rename)
                    model.renameColumn(old.name, to: new.name, of: table)
                }

            default:
                break
            }
        }
        return findings
    }

    static func copy(from insert: InsertStatement, index: Int) -> Copy? {
        guard case .select(let select) = insert.source, case .select(let clause) = select.first,
              let from = clause.from, case .table(let reference) = from.first, isMain(reference.name)
        else { return nil }
        let source = key(reference.name)
        let exposed = SQLName.key((reference.alias ?? reference.name.name).name)
        var filters: [String] = []
        if clause.where != nil { filters.append("WHERE") }
        if select.limit != nil { filters.append("LIMIT") }
        if clause.quantifier == .distinct { filters.append("DISTINCT") }
        if !clause.groupBy.isEmpty || clause.having != nil { filters.append("GROUP BY") }
        if !select.compounds.isEmpty { filters.append("compound SELECT") }
        if !from.joins.isEmpty { filters.append("join") }
        if !insert.upserts.isEmpty || insert.verb != .insert(nil) { filters.append("conflict resolution") }

        var all = false
        for column in clause.columns {
            switch column {
            case .all: all = true
            case .allColumns(let table) where SQLName.key(table.name) == exposed: all = true
            default: break
            }
        }
        var mentioned = Set<String>()
        let analysis = StatementAnalysis(.select(SelectStatement(first: .select(SelectClause(columns: clause.columns, from: clause.from)))))
        for use in analysis.columns {
            if let qualifier = use.reference.table, SQLName.key(qualifier.name) != exposed { continue }
            mentioned.insert(SQLName.key(use.reference.column.name))
        }
        return Copy(index: index, target: key(insert.table), source: source, copiesAllColumns: all,
                    mentionedColumns: mentioned, rowFilter: filters.isEmpty ? nil : filters.joined(separator: ", "))
    }

    static func isMain(_ name: QualifiedName) -> Bool {
        guard let schema = name.schema else { return true }
        return schema.matches("main")
    }

    static func key(_ name: QualifiedName) -> String { SQLName.key(name.name.name) }

    enum Advice {
        static let optOut = "If it is really safe, opt out for this migration: `.allow(rule, because: \"reason\")`."
        static let dropTable = "Safe pattern: keep the table and stop using it (deprecate it); if its data moved elsewhere, copy it in one release and drop the old table in a later one. " + optOut
        static let dropColumn = "Safe pattern: keep the column and stop using it (deprecate it); to change its type or name, add a new column, copy the data, and deprecate the old one. " + optOut
        static let addNotNull = "Safe pattern: add the column nullable first and backfill it (`UPDATE t SET c = ... WHERE c IS NULL`), or give it a DEFAULT (`NOT NULL DEFAULT 0`)."
        static let rebuild = "Safe pattern: copy every column and row (`INSERT INTO new SELECT <all old columns> FROM old`); to change a column, add a new column, copy, and deprecate the old one instead of rebuilding. " + optOut
        static let destructiveForeignKeyAction = "Safe pattern: run the migration with `foreignKeyChecks: .deferred` (the default: foreign keys are off while it runs and checked before commit), or copy and keep the table. " + optOut
        static let rename = "Safer pattern: add the new column or table, copy the data, and deprecate the old one."
    }
}

/// The tables of `main` as the script changes them, read lazily from the live database.
struct SchemaModel {
    struct Table {
        var name: String
        /// Column names in order; nil when unknown.
        var columns: [String]?
        /// (child key, description) pairs are computed from `foreignKeys` of every table.
        var foreignKeys: [(parent: String, onDelete: String, columns: [String])]
        /// nil: read from the database when needed (tables that existed before the script).
        var hasRows: Bool?
        var existedBefore: Bool
        /// The name it had in the database before the script (for reading rows).
        var databaseName: String?
    }

    let db: Connection?
    var tables: [String: Table] = [:]

    init(db: Connection?) throws(FerryError) {
        self.db = db
        if let db { tables = try Self.load(db) }
    }

    static func load(_ db: Connection) throws(FerryError) -> [String: Table] {
        var tables: [String: Table] = [:]
        let rows = try sqlite(db.fetchAll("SELECT name FROM main.sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"))
        for row in rows {
            let name: String = try sqlite(row.column(0))
            let columns = try sqlite(db.fetchAll("SELECT name FROM pragma_table_info(?, 'main')", [.text(name)])).map { r throws(FerryError) in try sqlite(r.column(0, as: String.self)) }
            var fks: [Int: (parent: String, onDelete: String, columns: [String])] = [:]
            for fk in try sqlite(db.fetchAll("SELECT id, \"table\", on_delete, \"from\" FROM pragma_foreign_key_list(?, 'main') ORDER BY id, seq", [.text(name)])) {
                let id: Int = try sqlite(fk.column(0))
                let parent: String = try sqlite(fk.column(1))
                let onDelete: String = try sqlite(fk.column(2))
                var entry = fks[id] ?? (parent: parent, onDelete: onDelete, columns: [])
                entry.columns.append(try sqlite(fk.column(3)))
                fks[id] = entry
            }
            tables[SQLName.key(name)] = Table(name: name, columns: columns, foreignKeys: fks.sorted { $0.key < $1.key }.map(\.value),
                                              hasRows: nil, existedBefore: true, databaseName: name)
        }
        return tables
    }

    func exists(_ table: String) -> Bool { tables[table] != nil }

    /// True/false when known; nil when there is no database to ask.
    mutating func hasRows(_ table: String) throws(FerryError) -> Bool? {
        guard var entry = tables[table] else { return db == nil ? nil : false }
        if let known = entry.hasRows { return known }
        guard let db, entry.existedBefore, let name = entry.databaseName else { return nil }
        let rows = try sqlite(db.scalar("SELECT EXISTS (SELECT 1 FROM main.\(db.quoteIdentifier(name)))", as: Bool.self)) ?? false
        entry.hasRows = rows
        tables[table] = entry
        return rows
    }

    func columns(of table: String) -> [String]? { tables[table]?.columns }

    /// Children whose foreign keys to `table` delete or rewrite rows when a parent row goes.
    func destructiveChildren(of table: String) -> [String] {
        var result: [String] = []
        for (childKey, child) in tables.sorted(by: { $0.key < $1.key }) where childKey != table {
            for fk in child.foreignKeys where SQLName.key(fk.parent) == table {
                let action = fk.onDelete.uppercased()
                if action == "CASCADE" || action == "SET NULL" || action == "SET DEFAULT" {
                    result.append("\(child.name)(\(fk.columns.joined(separator: ", "))) ON DELETE \(action)")
                }
            }
        }
        return result
    }

    mutating func create(_ create: CreateTableStatement) {
        let name = create.name.name.name
        switch create.definition {
        case .select:
            createUnknown(SQLName.key(name), name: name, hasRows: true)
        case .columns(let columns, let constraints, _):
            var fks: [(parent: String, onDelete: String, columns: [String])] = []
            func onDelete(_ clause: ForeignKeyClause) -> String {
                for argument in clause.arguments {
                    if case .onDelete(let action) = argument { return action.text }
                }
                return "NO ACTION"
            }
            for column in columns {
                for constraint in column.constraints {
                    if case .references(let clause)? = constraint.kind {
                        fks.append((clause.table.name, onDelete(clause), [column.name.name]))
                    }
                }
            }
            for constraint in constraints {
                if case .foreignKey(let cols, let clause)? = constraint.kind {
                    fks.append((clause.table.name, onDelete(clause), cols.map(\.name)))
                }
            }
            let key = SQLName.key(name)
            if tables[key] == nil {  // CREATE TABLE IF NOT EXISTS on an existing table changes nothing
                tables[key] = Table(name: name, columns: columns.map(\.name.name), foreignKeys: fks, hasRows: false,
                                    existedBefore: false, databaseName: nil)
            }
        }
    }

    mutating func createUnknown(_ key: String, name: String, hasRows: Bool?) {
        if tables[key] == nil {
            tables[key] = Table(name: name, columns: nil, foreignKeys: [], hasRows: hasRows, existedBefore: false, databaseName: nil)
        }
    }

    /// After a migration, in a lint without database: every table may hold user rows by the time
    /// later migrations run in production.
    mutating func forgetRows() {
        for key in tables.keys { tables[key]?.hasRows = nil }
    }

    mutating func drop(_ table: String) { tables[table] = nil }

    mutating func dropColumn(_ column: String, of table: String) {
        tables[table]?.columns?.removeAll { SQLName.equal($0, column) }
    }

    mutating func addColumn(_ column: String, to table: String) {
        tables[table]?.columns?.append(column)
    }

    mutating func rename(_ table: String, to newKey: String, name: String) {
        guard var entry = tables.removeValue(forKey: table) else { return }
        let oldName = entry.name
        entry.name = name
        tables[newKey] = entry
        // SQLite rewrites the children's references to the renamed table.
        for (key, var child) in tables {
            var changed = false
            for i in child.foreignKeys.indices where SQLName.equal(child.foreignKeys[i].parent, oldName) {
                child.foreignKeys[i].parent = name
                changed = true
            }
            if changed { tables[key] = child }
        }
    }

    mutating func renameColumn(_ old: String, to new: String, of table: String) {
        guard let index = tables[table]?.columns?.firstIndex(where: { SQLName.equal($0, old) }) else { return }
        tables[table]?.columns?[index] = new
    }
}
