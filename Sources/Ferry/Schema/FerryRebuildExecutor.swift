import FerrySQLite
import Foundation

/// Carries out online rebuilds with Ferry's data-migration engine: the table gets its new shape at
/// once, inside the schema migration's transaction, and its rows move in the background.
///
/// Inside the migration's transaction it:
/// 1. renames the table to `ferry_rebuild_<table>` (with `legacy_alter_table` on, so views and
///    triggers that name the table keep naming it, and will reach the new shape);
/// 2. creates the table with the new definition, and re-creates the old table's indexes and
///    triggers on it (an index or trigger that does not fit the new shape fails the migration with
///    a message saying so: drop or change it in an earlier migration);
/// 3. registers a same-file data migration `table <- ferry_rebuild_<table>` with the rebuild's
///    filter and column feeds.
///
/// It takes no time proportional to the table's rows beyond counting them for the progress
/// estimate. Open the database with `FerryDatabase` (or run the migrator through
/// `FerryDatabase.migrateSchema(_:)`): its reads and writes then see the new shape with every old
/// row, and its steps move the rows, delete them from the old table and drop it when empty.
///
/// Refused, with a typed error and nothing changed: a table other tables reference with foreign
/// keys (SQLite would check their rows against the new, still-empty table), a table that already
/// takes part in a data migration, a virtual table.
public struct FerryRebuildExecutor: OnlineRebuildExecutor {
    /// The executor; it has no settings.
    public init() {}

    /// Renames the old table, creates the new shape with the old indexes and triggers, and
    /// registers the data migration. Runs inside the schema migration's transaction.
    public func run(_ rebuild: OnlineRebuild, on migration: MigrationConnection) throws {
        let db = migration.connection
        try FerryError.surfacing {
            guard db.isInTransaction else { throw FerryError.misuse("an online rebuild runs inside its schema migration's transaction") }
            let table = try existingTable(rebuild.table, on: db)
            _ = try TableShape.read(table, schema: "main", on: db)  // refuses views and virtual tables
            try refuseIfMigrating(table, on: db)
            try refuseIfReferenced(table, on: db)
            let oldName = try unusedName(for: table, on: db)
            let dependents = try db.fetchAll("""
                SELECT type, name, sql FROM main.sqlite_master
                WHERE tbl_name = ? COLLATE NOCASE AND type IN ('index', 'trigger') AND sql IS NOT NULL ORDER BY rowid
                """, [.text(table)]).map { row throws(FerryError) in (type: try sqlite(row.column(0, as: String.self)), name: try sqlite(row.column(1, as: String.self)), sql: try sqlite(row.column(2, as: String.self))) }

            let legacy = try db.scalar("PRAGMA legacy_alter_table", as: Int.self) ?? 0
            try db.execute("PRAGMA legacy_alter_table = ON")
            defer { try? db.execute("PRAGMA legacy_alter_table = \(legacy)") }
            try db.execute("ALTER TABLE main.\(q(table)) RENAME TO \(q(oldName))")
            for object in dependents { try db.execute("DROP \(object.type.uppercased()) main.\(q(object.name))") }
            do {
                try db.execute("CREATE TABLE main.\(q(table)) (\(rebuild.newDefinition))")
            } catch {
                throw FerryError.schemaMismatch(table: table, problems: ["the new definition does not compile: \(Self.message(of: error))"])
            }
            for object in dependents {
                do { try db.execute(object.sql) } catch {
                    throw FerryError.schemaMismatch(table: table, problems: [
                        "\(object.type) \(object.name) of the old table cannot be re-created on the new shape: \(Self.message(of: error)); "
                            + "drop or change it in an earlier migration, or re-create it after this one",
                    ])
                }
            }
            let mapping = TableMapping(target: table, source: oldName, filter: rebuild.filter, columns: rebuild.columnMapping,
                                       droppedColumns: rebuild.droppedColumns)
            let engine = MigrationEngine(targetPath: db.path)
            try engine.register(MigrationPlan(sources: [MigrationSource(.targetFile, tables: [mapping])]), on: db)
        }
    }

    /// The table's name as stored, or `noSuchTable`.
    private func existingTable(_ name: String, on db: Connection) throws(FerryError) -> String {
        guard let stored: String = try sqlite(db.scalar(
            "SELECT name FROM main.sqlite_master WHERE type = 'table' AND name = ? COLLATE NOCASE", [.text(name)])),
            !stored.lowercased().hasPrefix("sqlite_"), !stored.lowercased().hasPrefix("ferry_")
        else { throw .noSuchTable(name: name, schema: "main") }
        let sql: String = try sqlite(db.scalar("SELECT sql FROM main.sqlite_master WHERE type = 'table' AND name = ?", [.text(stored)])) ?? ""
        if sql.uppercased().hasPrefix("CREATE VIRTUAL") { throw .unsupported("\(stored) is a virtual table; it cannot be rebuilt online") }
        return stored
    }

    /// A table that is a target or a source of a data migration in flight cannot be rebuilt.
    private func refuseIfMigrating(_ table: String, on db: Connection) throws(FerryError) {
        guard try MigrationState.exists(on: db) else { return }
        let sources = try MigrationState.loadSources(on: db)
        for record in try MigrationState.loadTables(on: db) where !(record.state == .finished && record.sourceCleaned) {
            let sameFileSource = sources.first { $0.id == record.sourceID }?.path == nil
            if record.target.lowercased() == table.lowercased() || (sameFileSource && record.sourceTable.lowercased() == table.lowercased()) {
                throw .invalidPlan("\(table) takes part in a data migration still in flight (\(record.target) <- \(record.sourceTable)); rebuild it once that migration finished")
            }
        }
    }

    /// Other tables' foreign keys to the table would be checked against the new, still-empty shape.
    private func refuseIfReferenced(_ table: String, on db: Connection) throws(FerryError) {
        let children = try sqlite(db.fetchAll("""
            SELECT DISTINCT m.name FROM main.sqlite_master AS m, pragma_foreign_key_list(m.name) AS f
            WHERE m.type = 'table' AND f."table" = ? COLLATE NOCASE AND m.name <> ? COLLATE NOCASE
            """, [.text(table), .text(table)])).map { row throws(FerryError) in try sqlite(row.column(0, as: String.self)) }
        if !children.isEmpty {
            throw .unsupported("\(table) is referenced by foreign keys of \(children.joined(separator: ", ")); "
                + "an online rebuild would leave their rows pointing at rows not moved yet. Rebuild it with a regular migration")
        }
    }

    /// `ferry_rebuild_<table>`, with a number added when that name is taken.
    private func unusedName(for table: String, on db: Connection) throws(FerryError) -> String {
        var candidate = "ferry_rebuild_\(table)"
        var suffix = 2
        while try sqlite(db.scalar("SELECT count(*) FROM main.sqlite_master WHERE name = ? COLLATE NOCASE", [.text(candidate)], as: Int.self)) != 0 {
            candidate = "ferry_rebuild_\(table)_\(suffix)"
            suffix += 1
        }
        return candidate
    }

    private static func message(of error: any Error) -> String {
        if case .sqlite(_, let message, _)? = error as? FerryError { return message }
        return "\(error)"
    }
}
