import FerrySQLite
import FerrySQL
import Foundation

/// The migration state of one target database: it loads the persisted catalog and resolves its
/// mappings against the live schemas (`load`), registers plans (`register`, in
/// `MigrationEngine+Register`), and publishes what it knows as one immutable `CatalogSnapshot`
/// (`catalog`) that every connection reads. Its parts, one job each:
/// - `SourcePaths`: where the source files are (stored relative to the target when below it);
/// - `SourceCiphers`: the sources' keys, in memory only;
/// - `PublishedCatalog`: the current snapshot, behind one lock;
/// - `SourceAttacher`: each connection's attached source files, as the snapshot needs them.
///
/// `load`, `register` and `updateRecord` run on the database's writer connection (serialized by
/// the pool); the accessors read the published snapshot from any thread.
final class MigrationEngine: Sendable {
    let paths: SourcePaths
    let ciphers: SourceCiphers
    let catalog: PublishedCatalog
    let attacher: SourceAttacher
    /// Keep source tables once they are empty (default: drop them).
    let keepsSourceTables: Bool
    /// What a load or a registration waits for before it reads the sources' schemas (a source
    /// table retired off the writer, `SourceRetirer`); nil when nothing changes them off the writer.
    private let schemaBarrier: (any SourceSchemaBarrier)?

    /// The engine of the target at `targetPath`, with its parts.
    /// - Parameter journalSizeLimit: the sources' `journal_size_limit` (the target's).
    /// - Parameter schemaBarrier: see `SourceSchemaBarrier`.
    init(targetPath: String, keepsSourceTables: Bool = false, journalSizeLimit: Int = 64 << 20,
         catalog: PublishedCatalog = PublishedCatalog(), attacher: SourceAttacher? = nil,
         schemaBarrier: (any SourceSchemaBarrier)? = nil) {
        let paths = SourcePaths(targetPath: targetPath)
        let attacher = attacher ?? SourceAttacher(paths: paths, ciphers: SourceCiphers(), catalog: catalog, journalSizeLimit: journalSizeLimit)
        self.paths = paths
        self.ciphers = attacher.ciphers
        self.catalog = catalog
        self.attacher = attacher
        self.keepsSourceTables = keepsSourceTables
        self.schemaBarrier = schemaBarrier
    }

    /// The target database's path.
    var targetPath: String { paths.targetPath }

    /// The page cache of target and sources on Ferry's connections (negative: KiB), except the
    /// two below.
    static let cacheSize = -16_000
    /// The page cache of the target on the writer, which moves rows: the target's index pages a
    /// batch touches stay cached for the next batch instead of being read again. Drain mode with a
    /// scattered index, against 16 MB: 1M rows 2.16 → 1.50 s, 10M rows 35.6 → 24.5 s.
    static let writerCacheSize = -32_000
    /// The page cache of a source on a connection that writes (the writer, the checkpointer, the
    /// retirer). Moves read a source in order, each page once, and look rows up by key, so cached
    /// pages are seldom read again; with 2 MB instead of 16, the writer's peak memory stays where
    /// it was although its target cache doubled. Read-only connections (the app's readers) keep
    /// `cacheSize`, for the app's range reads of pending rows (with 2 MB an indexed range read
    /// half-way took 1.5-1.8x longer).
    static let writingSourceCacheSize = -2_000
    // MARK: The published catalog

    /// Incremented whenever the set of migrating tables or their shapes change.
    var epoch: Int { catalog.read(\.epoch) }

    /// The migrating mappings and the epoch they belong to, read together, with the names of the
    /// source tables attached from other files (lower-cased) for migrating and cleanup mappings,
    /// and the finished targets whose cleanup is not done (lower-cased): what a new
    /// `StatementRedirector` is built from.
    var redirectorSnapshot: (epoch: Int, mappings: [ResolvedMapping], attachedSourceTables: Set<String>, awaitingCleanup: Set<String>) {
        catalog.read { snapshot in
            let attached = Set((snapshot.mappings + snapshot.cleanupMappings).filter { $0.source.path != nil }.map { $0.sourceShape.name.lowercased() })
            return (snapshot.epoch, snapshot.mappings, attached, Set(snapshot.cleanupMappings.map { $0.targetName.lowercased() }))
        }
    }

    /// For each migrating table whose rowids follow its source's order (by registered name,
    /// lower-cased), a target rowid at or below which no pending row lies as committed
    /// (`ResolvedMapping.rowidFloor`, `KeyShortcut`): every snapshot that begins after this call has
    /// a cursor at least as far, since cursors only move forward. Set from the catalog when it is
    /// loaded outside a transaction (emptied when loaded inside one, which may roll back), raised
    /// after a step commits (`raiseCursorFloor`). With the epoch they belong to: a floor holds for
    /// the registrations of its epoch only (a table registered again starts from no cursor).
    var cursorFloors: (epoch: Int, floors: [String: Int64]) {
        catalog.read { ($0.epoch, $0.floors) }
    }

    /// Raises `mapping`'s floor to what `record` (committed by a step that just ended its
    /// transaction) settles.
    func raiseCursorFloor(_ mapping: ResolvedMapping, committed record: TableRecord) {
        guard let floor = mapping.rowidFloor(record) else { return }
        catalog.publish { $0.raisingFloor(of: mapping, to: floor) }
    }

    /// The current name of the target a plan registered as `name` (the app may have renamed it).
    func currentName(ofRegistered name: String) -> String {
        catalog.read { $0.tableRenames[name.lowercased()] } ?? name
    }

    /// Every mapping still migrating, in registration order.
    var migratingMappings: [ResolvedMapping] { catalog.read(\.mappings) }

    /// Finished mappings whose source still holds moved rows.
    var mappingsAwaitingCleanup: [ResolvedMapping] { catalog.read(\.cleanupMappings) }

    /// The records of every registered table, in registration order of their kind.
    var allRecords: [TableRecord] {
        catalog.read { $0.finishedRecords + $0.cleanupMappings.map(\.record) + $0.mappings.map(\.record) }
    }

    /// Replaces the in-memory record of a mapping after its transaction committed
    /// (`CatalogSnapshot.updating`).
    func updateRecord(_ record: TableRecord) {
        catalog.publish { $0.updating(record) }
    }

    // MARK: Loading

    /// Reads the catalog and resolves every unfinished mapping, and every finished one whose source
    /// still holds its moved rows, against the attached schemas, and publishes the result. Only
    /// sources that still feed or await such a table are attached (and need a key).
    func load(on db: Connection) throws(FerryError) {
        // The sources' schemas are read statement by statement below: no retirement may drop a
        // table meanwhile.
        schemaBarrier?.waitUntilNoSchemaChanges()
        let writable = try !sqlite(db.isReadOnly())
        if try MigrationState.exists(on: db), writable { try MigrationState.upgrade(on: db) }
        let sourceRecords = try MigrationState.loadSources(on: db)
        var tableRecords = try MigrationState.loadTables(on: db)
        let active = tableRecords.filter { $0.state == .migrating || !$0.sourceCleaned }
        let neededIDs = Set(active.map(\.sourceID))
        var needed: [Int64: SourceRecord] = [:]
        for record in sourceRecords where neededIDs.contains(record.id) { needed[record.id] = record }
        // A source that only awaits cleanup may be missing: its tables' rows are all in the target,
        // so the database opens, and cleanup waits for a launch where the file is back.
        let required = Set(active.filter { $0.state == .migrating }.map(\.sourceID))
        var untouched: [Int64: Set<String>] = [:]
        for record in tableRecords where record.state == .migrating { untouched[record.sourceID, default: []].insert(record.sourceTable.lowercased()) }
        for record in tableRecords where record.state == .finished { untouched[record.sourceID]?.remove(record.sourceTable.lowercased()) }
        var failures: [String: FerryError] = [:]
        let unavailable = try attacher.attachSources(Array(needed.values), required: required, on: db, failures: &failures,
                                                     migratingSourceTables: untouched)
        // Catalogs of versions that did not fingerprint their sources: record the files in place
        // now (on a writable target; a file the fingerprint cannot read is left for a later load).
        if writable, try MigrationState.hasFingerprints(on: db) {
            for source in needed.values where source.fingerprint == nil && source.path != nil && !unavailable.contains(source.id) {
                let tables = active.filter { $0.sourceID == source.id }.map(\.sourceTable)
                let read: SourceFingerprint
                do throws(FerryError) {
                    read = try SourceFingerprint.read(path: paths.resolvedPath(source.path!), encrypted: source.encrypted,
                                                      schema: source.schema, tables: tables, on: db)
                } catch {
                    continue
                }
                try MigrationState.recordFingerprint(read, sourceID: source.id, on: db)
                needed[source.id]?.fingerprint = read
            }
        }
        var resolved: [ResolvedMapping] = []
        let columnChanges = try MigrationState.columnChanges(on: db)
        let tableRenames = try MigrationState.tableRenames(on: db)
        for record in active where !unavailable.contains(record.sourceID) {
            guard let source = needed[record.sourceID] else {
                throw .invalidPlan("the catalog names source \(record.sourceID) for \(record.target), but no such source is registered")
            }
            if record.state == .finished, try !sqlite(db.tableExists(record.sourceTable, schema: source.schema)) {
                // Cleanup dropped the source table, and its mark (a later transaction on the
                // target) did not commit: the table is cleaned. Recorded when the target is
                // writable; either way nothing needs its source any more.
                var cleaned = record
                if writable { try MigrationState.markSourceCleaned(&cleaned, on: db) }
                if let index = tableRecords.firstIndex(where: { $0.target == record.target }) { tableRecords[index].sourceCleaned = true }
                continue
            }
            resolved.append(try resolve(record, source: source, earlier: resolved, changes: columnChanges[record.target.lowercased()] ?? ColumnChanges(),
                                         registeredName: tableRenames.first { $0.value.lowercased() == record.target.lowercased() }?.key ?? record.target.lowercased(),
                                         on: db))
        }
        let stillNeeded = Set(resolved.map(\.source.id))
        let finished = tableRecords.filter { $0.state == .finished && ($0.sourceCleaned || unavailable.contains($0.sourceID)) }
        catalog.publish { current in
            current.loaded(sources: needed.filter { stillNeeded.contains($0.key) }, resolved: resolved, finished: finished,
                           migratingSourceTables: untouched, tableRenames: tableRenames, inTransaction: db.isInTransaction)
        }
        try quarantineCollisions(on: db)
    }

    /// For each migrating table registered over rows it already held (`MigrationState`'s
    /// collision check): quarantines the pending source rows that collide with a target row (same
    /// rowid, or same value of a unique key the source can be searched by, as SQLite confirms by
    /// moving the row under a savepoint it rolls back), before any statement
    /// reads the table, in one transaction per table. The target's row wins, as when the stepper
    /// meets such a row; the union never shows both.
    private func quarantineCollisions(on db: Connection) throws(FerryError) {
        let due = try MigrationState.collisionChecksDue(on: db)
        guard !due.isEmpty, try !sqlite(db.isReadOnly()) else { return }
        for mapping in migratingMappings where due.contains(mapping.targetName.lowercased()) {
            let table = MigratingTableSQL(mapping: mapping)
            var collides: [String] = []
            if let rowid = table.pendingRowidValue {
                collides.append("EXISTS (SELECT 1 FROM \(mapping.qualifiedTarget) AS ferry_held WHERE ferry_held.\(mapping.target.rowidName) = \(rowid))")
            }
            for key in try MigratingTableSQL.uniqueKeys(of: mapping, on: db) {
                let match = key.map { key in
                    "ferry_held.\(q(key.column)) = \(mapping.qualifiedSource).\(q(mapping.feed(of: key.column)?.sourceColumn ?? key.column)) COLLATE \(q(key.collation))"
                }
                collides.append("EXISTS (SELECT 1 FROM \(mapping.qualifiedTarget) AS ferry_held WHERE \(match.joined(separator: " AND ")))")
            }
            var record = mapping.record
            let body = { () throws(FerryError) in
                var identities: [Value] = []
                if !collides.isEmpty {
                    // Candidates by equal keys; each confirmed by SQLite itself (`FerryMove.wouldConflict`),
                    // so that a partial or expression index, an affinity or a collision that the
                    // equal-key test guesses wrong never hides a row that collides with nothing.
                    let candidates = try sqlite(db.fetchAll("SELECT \(mapping.sourceIdentity) FROM \(mapping.qualifiedSource) "
                        + "WHERE \(mapping.pendingCondition) AND (\(collides.joined(separator: " OR ")))")).map { $0[0] }
                    for identity in candidates where try FerryMove.wouldConflict(mapping, identity: identity, on: db) {
                        identities.append(identity)
                    }
                }
                for identity in identities {
                    try Quarantine.record(mapping, identity: identity, reason: "it collides with a row \(mapping.targetName) held before its migration was registered", on: db)
                }
                try MigrationState.recordCollisions(&record, identities: identities, on: db)
            }
            if db.isInTransaction { try db.savepoint(body) } else { try MigrationState.writingMain(on: db, body) }
            updateRecord(record)
        }
    }

    private func resolve(_ record: TableRecord, source: SourceRecord, earlier: [ResolvedMapping], changes: ColumnChanges, registeredName: String,
                         on db: Connection) throws(FerryError) -> ResolvedMapping {
        // A catalog written before filters had to be deterministic: refuse to go on rather than
        // move and clean up rows with a filter whose meaning changes.
        if let filter = record.filter { try DeterminismCheck.check(filter, on: db) }
        for feed in record.columnFeeds { try DeterminismCheck.check(feed.expression, role: "the feed of column \(feed.column)", on: db) }
        let target: TableShape
        if record.state == .finished, try !sqlite(db.tableExists(record.target)) {
            // The app dropped the table (`DROP TABLE` ends a migration, as on a finished table):
            // only its cleanup is left, which reads the source alone.
            target = TableShape(schema: "main", name: record.target, columns: [], rowidName: "rowid", rowidAliasColumn: nil,
                                isAutoincrement: false, sql: "")
        } else {
            target = try TableShape.read(record.target, schema: "main", on: db)
        }
        let sourceShape = try TableShape.read(record.sourceTable, schema: source.schema, on: db)
        let feeds = Self.feeds(target: target, source: sourceShape, declared: record.columnFeeds, changes: changes)
        let earlierFilters = earlier.filter {
            $0.source.id == source.id && $0.sourceShape.name.lowercased() == sourceShape.name.lowercased()
        }.map { $0.record.filter ?? "1" }
        return ResolvedMapping(record: record, source: source, target: target, sourceShape: sourceShape,
                               feeds: feeds, earlierFilters: earlierFilters, registeredName: registeredName)
    }

    /// The feed of every writable target column: its declared expression (a bare source column
    /// name counts as a copy of that column), else the source column of the same name; columns with
    /// neither take their default.
    /// - Parameter changes: the columns the app added (they take their default, whatever the
    ///   source has) and renamed (they keep the feed of the name the plan registered) while the
    ///   table migrated.
    static func feeds(target: TableShape, source: TableShape, declared: [ColumnFeed], changes: ColumnChanges = ColumnChanges()) -> [ResolvedFeed] {
        target.writableColumns.compactMap { column -> ResolvedFeed? in
            if changes.isAdded(column.name) { return nil }
            let registered = changes.registeredName(of: column.name)
            if let feed = declared.first(where: { $0.column.lowercased() == registered.lowercased() }) {
                if let name = bareColumnName(feed.expression), let sourceColumn = source.column(named: name) {
                    return ResolvedFeed(column: column.name, value: .sourceColumn(sourceColumn.name))
                }
                return ResolvedFeed(column: column.name, value: .expression(feed.expression))
            }
            return source.column(named: registered).map { sourceColumn in ResolvedFeed(column: column.name, value: .sourceColumn(sourceColumn.name)) }
        }
    }

    /// The column name when `expression` is just an unqualified column reference.
    static func bareColumnName(_ expression: String) -> String? {
        guard case .column(let reference)? = try? Parser.parseExpression(expression), reference.table == nil else { return nil }
        return reference.column.name
    }
}
