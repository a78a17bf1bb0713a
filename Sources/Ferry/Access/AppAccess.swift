import FerrySQLite
import Synchronization

/// The state of the app's door (every read and write the app runs): the statement redirector of
/// the current migrating tables, the redirect triggers installed on the writer, and the app's
/// `changes()`. Rebuilt lazily when the engine's epoch moves (a registration, a table finished)
/// or, while tables migrate, when main's schema changed (a view created or dropped): each
/// connection compares the schema version of its own snapshot with the cached redirector's, so a
/// reader never serves a view that reads a migrating table with a redirector that does not know it.
final class AppAccess: Sendable {
    private let engine: MigrationEngine
    /// The statement redirector of the current migrating tables, with their epoch and the schema
    /// version of main it was built from.
    private let redirectorCache = Mutex<(epoch: Int, schemaVersion: Int, redirector: StatementRedirector)?>(nil)
    /// The epoch of the redirect triggers installed on the writer (-1: none yet).
    private let installedTriggerEpoch = Mutex(-1)
    /// `changes` of the app's last INSERT/UPDATE/DELETE on the writer.
    let appChanges = ChangesCounter()
    /// The app's trigger statements that write migrating tables, read once per trigger text.
    let triggerStatements = TriggerStatementCache()

    init(engine: MigrationEngine) { self.engine = engine }

    /// A reader's handle: the redirector of main's schema as the reader's snapshot has it, read
    /// only while tables migrate (with none, every statement passes through whatever the schema).
    /// Its cursor floors are taken first, before anything reads: the read transaction is begun
    /// (deferred) and its snapshot starts with its first read, so they are at or below its cursors.
    /// `onWriter`: `db` is the writer, serving a read (single-connection mode): the handle refuses
    /// statements that write, which a reader's read-only connection would refuse.
    func readerHandle(on db: Connection, onWriter: Bool = false) throws(FerryError) -> FerryConnection {
        let floors = engine.cursorFloors
        let redirector = try currentRedirector(on: db)
        return FerryConnection(connection: db, redirector: redirector.redirector, isWriter: false,
                               cursorFloors: floors.epoch == redirector.epoch ? floors.floors : [:],
                               unavailableSources: engine.attacher.unavailableSources(on: db), refusesWrites: onWriter)
    }

    /// Installs the redirect triggers of the current migrating tables on the writer when the
    /// engine's epoch moved since they were installed. Call it before the app's transaction: temp
    /// DDL there cannot be undone by the app's rollback. Costs nothing while the epoch stays.
    func prepareWriter(on db: Connection) throws(FerryError) {
        guard installedTriggerEpoch.withLock({ $0 }) != engine.epoch else { return }
        let redirector = try currentRedirector(on: db)
        try installTriggers(redirector.redirector, on: db)
        installedTriggerEpoch.withLock { $0 = redirector.epoch }
    }

    /// The writer's handle, inside the app's write transaction once it holds main's write lock:
    /// the redirector of main's schema as the transaction sees it. Checking the schema there costs
    /// one cached statement (outside, it took a read transaction of its own), and no other
    /// connection can change the schema between the check and the app's statements. Its cursor
    /// floors are the latest: steps run on this connection, never inside the app's transaction.
    func writerHandle(on db: Connection) throws(FerryError) -> FerryConnection {
        let floors = engine.cursorFloors
        let redirector = try currentRedirector(on: db)
        if installedTriggerEpoch.withLock({ $0 }) != redirector.epoch {
            // The epoch moved after `prepareWriter` (not expected: epochs move on the writer):
            // install them for this transaction; the next write installs them again outside one.
            try reinstallTriggers(redirector.redirector, on: db)
        }
        return FerryConnection(connection: db, redirector: redirector.redirector, isWriter: true,
                               cursorFloors: floors.epoch == redirector.epoch ? floors.floors : [:],
                               appChanges: appChanges, unavailableSources: engine.attacher.unavailableSources(on: db),
                               reinstallTriggers: { [self] redirector throws(FerryError) in try reinstallTriggers(redirector, on: db) },
                               rebuildRedirector: { [self] () throws(FerryError) in try rebuildRedirector(on: db) })
    }

    /// The redirector of main's schema as this connection's transaction sees it, after one of the
    /// app's statements created or dropped a view: the rest of the transaction reads the view as
    /// on the finished table. Cached under that schema version (a rollback brings the old version
    /// back, which then misses the cache).
    private func rebuildRedirector(on db: Connection) throws(FerryError) -> StatementRedirector {
        try currentRedirector(on: db).redirector
    }

    /// Rebuilds the redirect triggers inside the app's transaction, after one of its statements
    /// changed a migrating table's unique keys: the rest of the transaction conflicts with pending
    /// rows on the new keys. The next write transaction installs them again from what the database
    /// then holds (the change may roll back).
    private func reinstallTriggers(_ redirector: StatementRedirector, on db: Connection) throws(FerryError) {
        installedTriggerEpoch.withLock { $0 = -1 }
        try installTriggers(redirector, on: db)
    }

    /// True once (then false) after an app transaction changed what the engine loads: it ended a
    /// table's migration (`DROP TABLE`) or added a column to one.
    func takeEngineStateChanged() -> Bool {
        appChanges.engineStateChanged.withLock { value -> Bool in
            defer { value = false }
            return value
        }
    }

    /// Main's schema version as this connection sees it.
    ///
    /// Reading it also makes a reader see main's current schema before resolving names (the
    /// statement reads the schema table, which makes SQLite check its copy). SQLite resolves an
    /// unqualified name with the schemas it has in memory and rechecks only the files a statement
    /// uses: with a stale copy of main (a table dropped and created again by the writer), a name
    /// that an attached source also has would bind to the source and never be rechecked.
    ///
    /// In a transaction (a reader's, or the writer's once it holds main's lock), the version from
    /// the file's header (`PRAGMA schema_version`, which alone does not check SQLite's copy), then,
    /// when it is not the version the connection last checked at, a read of the schema table (the
    /// check): one snapshot, two cached statements at most. A connection whose copy of main's
    /// schema was current at this version still has it current (every change moves the version;
    /// a copy SQLite dropped, after a DETACH say, is read again before any name resolves).
    /// Outside one (before the writer's epoch check), one statement, so that both come from one
    /// snapshot: the table-valued `pragma_schema_version` compiles a pragma at every call, which
    /// costs less than a second read transaction.
    private func schemaVersion(_ db: Connection) throws(FerryError) -> Int {
        guard db.isInTransaction else {
            return Int(try sqlite(db.cachedStatement(Self.snapshotSchemaVersionSQL).firstInteger()) ?? 0)
        }
        let version = Int(try sqlite(db.cachedStatement(Self.schemaVersionSQL).firstInteger()) ?? 0)
        if db.schemaVersionChecked != version {
            _ = try sqlite(db.cachedStatement(Self.schemaCheckSQL).firstInteger())
            db.schemaVersionChecked = version
        }
        return version
    }

    /// Main's schema version from the file's header (in a transaction: see `schemaVersion`).
    private static let schemaVersionSQL = HashedSQL("PRAGMA main.schema_version")
    /// A read of main's schema table, which makes SQLite check its copy of the schema.
    private static let schemaCheckSQL = HashedSQL("SELECT 1 FROM main.sqlite_master LIMIT 1")
    /// Both in one statement, so in one snapshot (outside a transaction).
    private static let snapshotSchemaVersionSQL = HashedSQL("SELECT (SELECT schema_version FROM pragma_schema_version) FROM main.sqlite_master LIMIT 1")

    /// The redirector for the current migrating tables (rebuilt when they change, or when main's
    /// schema as `db` sees it is not the one it was built from).
    /// Main's schema version in `db`'s snapshot is read only when tables migrate (with no
    /// migrating table, views need no redirection and any version goes).
    func currentRedirector(on db: Connection) throws(FerryError) -> (epoch: Int, redirector: StatementRedirector) {
        // Every read and write asks: the cache check reads the epoch (and the schema version while
        // tables migrate), the rest only on a miss.
        let cached = redirectorCache.withLock { $0 }
        if let cached, cached.epoch == engine.epoch, cached.redirector.isEmpty { return (cached.epoch, cached.redirector) }
        let version = try schemaVersion(db)
        if let cached, cached.epoch == engine.epoch, cached.schemaVersion == version { return (cached.epoch, cached.redirector) }
        return try build(on: db, schemaVersion: version)
    }

    /// Builds the redirector of the engine's migrating tables and of the views `db` sees, and caches it.
    private func build(on db: Connection, schemaVersion: Int) throws(FerryError) -> (epoch: Int, redirector: StatementRedirector) {
        let (epoch, mappings, attachedSourceTables, awaitingCleanup) = engine.redirectorSnapshot
        var tables: [MigratingTableSQL] = []
        for mapping in mappings {
            // The target's shape in this snapshot (a column the app added shows from the next statement on).
            tables.append(MigratingTableSQL(mapping: try mapping.reshaped(on: db)))
        }
        let (views, unreadable) = try DependentView.load(on: db, reading: StatementRedirector.migratingRelations(tables))
        let otherNames = attachedSourceTables.isEmpty ? [] : try Self.sourceFileNamesMainLacks(on: db)
        let redirector = StatementRedirector(tables: tables, views: views, unreadableViews: unreadable,
                                             attachedSourceTables: attachedSourceTables.union(otherNames),
                                             awaitingCleanup: awaitingCleanup,
                                             foreignKeys: tables.isEmpty ? [] : try ForeignKeyEdge.all(on: db))
        redirectorCache.withLock { $0 = (epoch, schemaVersion, redirector) }
        return (epoch, redirector)
    }

    /// The names (lower-cased) of the tables and views of the source files attached to `db` that
    /// `main` lacks (SQLite's own among them: a source's `sqlite_sequence` is not main's).
    ///
    /// A source file may hold more than the tables a plan moves (the app's old database, say), and
    /// SQLite looks an unqualified name that `temp` and `main` lack up in every attached database:
    /// the app's statements would reach the old file, which the finished database does not have
    /// (and which goes once cleanup detaches it). The redirector reads and writes these names in
    /// `main` (`StatementRedirector.shadowedSourceTables`), where they are "no such table" as on
    /// the finished database. A name the app then creates in `main` changes main's schema version,
    /// so the next redirector no longer lists it.
    static func sourceFileNamesMainLacks(on db: Connection) throws(FerryError) -> Set<String> {
        var names = Set<String>()
        for schema in try sqlite(db.schemaNames()) where schema.hasPrefix(SourceRecord.schemaPrefix) {
            let rows = try sqlite(db.fetchAll("""
                SELECT name FROM \(q(schema)).sqlite_master WHERE type IN ('table', 'view')
                AND lower(name) NOT IN (SELECT lower(name) FROM main.sqlite_master WHERE type IN ('table', 'view'))
                """))
            for row in rows { names.insert(try sqlite(row.column(0, as: String.self)).lowercased()) }
        }
        return names
    }

    /// Replaces Ferry's temp triggers on the writer with those of the current migrating tables.
    private func installTriggers(_ redirector: StatementRedirector, on db: Connection) throws(FerryError) {
        // The triggers, then the insert probes' views (see `InsertProbe`); both are made again for
        // the tables that use them.
        let existing = try sqlite(db.fetchAll("SELECT type, name FROM temp.sqlite_master WHERE type IN ('trigger', 'view') "
                                              + "AND name LIKE 'ferry\\_redirect\\_%' ESCAPE '\\' ORDER BY type"))
        for row in existing {
            let type: String = try sqlite(row.column(0))
            let name: String = try sqlite(row.column(1))
            try sqlite(db.execute("DROP \(type == "view" ? "VIEW" : "TRIGGER") temp.\(q(name))"))
        }
        for table in redirector.tables.values {
            // The unique keys as the writer sees them now (the cached redirector may have been
            // built by a reader, from an older snapshot of the schema).
            let unique = try MigratingTableSQL.uniqueIndexes(of: table.mapping, on: db)
            let keyColumns = MigratingTableSQL.keyColumns(of: table.mapping, unique: unique)
            let pendingRowids = table.pendingRowidRange(on: db)
            for sql in table.triggerSQL(uniqueKeys: unique.keys, keyColumns: keyColumns, pendingRowids: pendingRowids) { try sqlite(db.execute(sql)) }
            // The app's INSERT triggers created since (say, by a schema migration) are guarded too.
            try AppTriggerGuard.sync(target: table.mapping.targetName, on: db)
        }
        // The app's triggers that update or delete rows of a migrating table reach its pending rows.
        try AppTriggerWrites.sync(on: db)
        // The app's edits of moved rows, while verify can compare them with their source: tables
        // migrating, and tables finished whose source is not cleaned yet.
        if db.editRecorder == nil { _ = try sqlite(db.defineEditRecorder(MigrationState.editRecorderFunction)) }
        let migrating = Set(redirector.tables.keys)
        let awaiting = engine.mappingsAwaitingCleanup.filter { !migrating.contains($0.targetName.lowercased()) }
        for table in redirector.tables.values.map(\.mapping) + awaiting {
            guard try sqlite(db.tableExists(table.target.name)) else { continue }  // dropped: nothing to compare
            for sql in MigratingTableSQL(mapping: table).editTriggerSQL() { try sqlite(db.execute(sql)) }
        }
        // Foreign keys between the app's tables and migrating ones (see `ForeignKeyEdge`), and
        // those of sources in the target's file to the app's tables, until their cleanup.
        let sameFile = (redirector.tables.values.map(\.mapping) + awaiting).filter { $0.source.path == nil }
        guard !redirector.tables.isEmpty || !sameFile.isEmpty else { return }
        let edges = try ForeignKeyEdge.all(on: db)
        for (index, edge) in edges.enumerated() {
            for table in redirector.tables.values {
                for sql in table.foreignKeyTriggerSQL(for: edge, index: index) { try sqlite(db.execute(sql)) }
            }
        }
        let registered = engine.migratingMappings + engine.mappingsAwaitingCleanup
        let sourceTables = Set(registered.filter { $0.source.path == nil }.map { $0.sourceShape.name.lowercased() })
        for mapping in sameFile {
            let table = MigratingTableSQL(mapping: mapping)
            guard table.retiresReferencingRowsEarly(others: registered, edges: edges), try mapping.sourceTableExists(on: db) else { continue }
            if mapping.recordsMovedRows { try MovedRowIndex.define(on: db) }
            let source = mapping.sourceShape.name.lowercased()
            for (index, edge) in edges.enumerated() where edge.child.lowercased() == source && !sourceTables.contains(edge.parent.lowercased()) {
                for sql in table.sourceForeignKeyTriggerSQL(for: edge, index: index, migrating: migrating.contains(mapping.targetName.lowercased())) {
                    try sqlite(db.execute(sql))
                }
            }
        }
    }
}
