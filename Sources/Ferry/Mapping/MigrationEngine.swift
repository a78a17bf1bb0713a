import FerrySQLite
import FerrySQL
import Foundation

/// The migration state of one target database and the operations on it.
///
/// Linear data flow: the persisted catalog is loaded and resolved against the live schemas
/// (`load`), sources are attached to each connection (`attachSources`), and the stepper moves rows
/// (`Stepper`). All methods run on the database's writer connection (serialized by the pool),
/// except `attachSources`, which every connection runs when it opens.
final class MigrationEngine: @unchecked Sendable {
    // Mutable state is written on the writer's serial queue, under `lock`; other threads read it
    // under `lock` (the accessors below take it).
    let targetPath: String
    private let lock = NSLock()
    private var ciphers: [String: Cipher] = [:]  // by resolved absolute source path
    /// Per connection, the sources its latest use could not attach (see `unavailableSources`).
    private var attachFailures: [ObjectIdentifier: [String: FerryError]] = [:]
    private(set) var sources: [Int64: SourceRecord] = [:] {
        didSet { attachedFiles = sources.values.filter { $0.path != nil }.sorted { $0.id < $1.id } }
    }
    /// The sources with a file of their own (the ones a connection attaches), by id.
    private var attachedFiles: [SourceRecord] = []
    private(set) var mappings: [ResolvedMapping] = []
    /// Finished tables whose moved rows are still in the source (cleaned up by later steps).
    private(set) var cleanupMappings: [ResolvedMapping] = []
    /// Finished and cleaned tables (kept for progress reports).
    private(set) var finishedRecords: [TableRecord] = []
    /// The source tables (lower-cased) that no cleanup touched yet (every mapping reading them still
    /// migrates), by source id: their fingerprint rows must be present when the source is attached
    /// (see `SourceFingerprint`).
    private var migratingSourceTables: [Int64: Set<String>] = [:]
    /// Targets the app renamed: lower-cased registered name → current name.
    private var tableRenames: [String: String] = [:]
    /// See `cursorFloors`.
    private var floors: [String: Int64] = [:]
    /// The `journal_size_limit` of target and sources (set by `FerryDatabase` from its options).
    var journalSizeLimit = 64 << 20
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
    /// Keep source tables once they are empty (default: drop them).
    var keepsSourceTables = false
    /// Incremented whenever the set of migrating tables or their shapes change.
    private var epochValue = 0
    /// Incremented whenever the set of migrating tables or their shapes change (thread-safe).
    var epoch: Int {
        lock.lock()
        defer { lock.unlock() }
        return epochValue
    }

    /// The migrating mappings and the epoch they belong to, read together, with the names of the
    /// source tables attached from other files (lower-cased) for migrating and cleanup mappings,
    /// and the finished targets whose cleanup is not done (lower-cased): what a new
    /// `StatementRedirector` is built from.
    var redirectorSnapshot: (epoch: Int, mappings: [ResolvedMapping], attachedSourceTables: Set<String>, awaitingCleanup: Set<String>) {
        lock.lock()
        defer { lock.unlock() }
        let attached = Set((mappings + cleanupMappings).filter { $0.source.path != nil }.map { $0.sourceShape.name.lowercased() })
        return (epochValue, mappings, attached, Set(cleanupMappings.map { $0.targetName.lowercased() }))
    }

    init(targetPath: String) {
        self.targetPath = targetPath
    }

    /// For each migrating table whose rowids follow its source's order (by registered name,
    /// lower-cased), a target rowid at or below which no pending row lies as committed
    /// (`ResolvedMapping.rowidFloor`, `KeyShortcut`): every snapshot that begins after this call has
    /// a cursor at least as far, since cursors only move forward. Set from the catalog when it is
    /// loaded outside a transaction (emptied when loaded inside one, which may roll back), raised
    /// after a step commits (`raiseCursorFloor`). With the epoch they belong to: a floor holds for
    /// the registrations of its epoch only (a table registered again starts from no cursor).
    var cursorFloors: (epoch: Int, floors: [String: Int64]) {
        lock.lock()
        defer { lock.unlock() }
        return (epochValue, floors)
    }

    /// Raises `mapping`'s floor to what `record` (committed by a step that just ended its
    /// transaction) settles.
    func raiseCursorFloor(_ mapping: ResolvedMapping, committed record: TableRecord) {
        guard let floor = mapping.rowidFloor(record) else { return }
        lock.lock()
        defer { lock.unlock() }
        guard mappings.contains(where: { $0.registeredName == mapping.registeredName }) else { return }
        floors[mapping.registeredName] = max(floors[mapping.registeredName] ?? .min, floor)
    }

    /// Runs before every `load`: waits for source tables being retired off the writer
    /// (`SourceRetirer`); set once, when the database opens.
    var beforeLoad: (@Sendable () -> Void)?

    // MARK: Paths

    private var targetDirectory: URL {
        URL(fileURLWithPath: targetPath).standardizedFileURL.deletingLastPathComponent()
    }

    /// The absolute path of a stored source path.
    func resolvedPath(_ stored: String) -> String {
        if stored.hasPrefix("/") { return stored }
        return targetDirectory.appendingPathComponent(stored).standardizedFileURL.path
    }

    /// The path to store for a source: relative to the target's directory when below it.
    func storedPath(for path: String) -> String {
        let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
        let directory = targetDirectory.path.hasSuffix("/") ? targetDirectory.path : targetDirectory.path + "/"
        if absolute.hasPrefix(directory) { return String(absolute.dropFirst(directory.count)) }
        return absolute
    }

    /// Remembers the ciphers of the plan's sources (in memory only).
    func supplyCiphers(from plan: MigrationPlan) {
        lock.lock()
        defer { lock.unlock() }
        for source in plan.sources {
            if case .file(let path) = source.location, let cipher = source.cipher {
                ciphers[URL(fileURLWithPath: path).standardizedFileURL.path] = cipher
            }
        }
    }

    private func cipher(forResolvedPath path: String) -> Cipher? {
        lock.lock()
        defer { lock.unlock() }
        return ciphers[path]
    }

    // MARK: Loading

    /// Reads the catalog and resolves every unfinished mapping, and every finished one whose source
    /// still holds its moved rows, against the attached schemas. Only sources that still feed or
    /// await such a table are attached (and need a key).
    func load(on db: Connection) throws(FerryError) {
        // The sources' schemas are read statement by statement below: no retirement may drop a
        // table meanwhile.
        beforeLoad?()
        if try MigrationState.exists(on: db), try !sqlite(db.isReadOnly()) { try MigrationState.upgrade(on: db) }
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
        lock.lock()
        migratingSourceTables = untouched
        lock.unlock()
        var failures: [String: FerryError] = [:]
        let unavailable = try attachSources(Array(needed.values), required: required, on: db, failures: &failures)
        // Catalogs of versions that did not fingerprint their sources: record the files in place now.
        if try MigrationState.hasFingerprints(on: db) {
            for source in needed.values where source.fingerprint == nil && source.path != nil && !unavailable.contains(source.id) {
                let tables = active.filter { $0.sourceID == source.id }.map(\.sourceTable)
                if let fingerprint = try? SourceFingerprint.read(path: resolvedPath(source.path!), encrypted: source.encrypted,
                                                                 schema: source.schema, tables: tables, on: db) {
                    try? MigrationState.recordFingerprint(fingerprint, sourceID: source.id, on: db)
                    needed[source.id]?.fingerprint = fingerprint
                }
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
                // target) did not commit: the table is cleaned. Record it when the target is
                // writable; either way nothing needs its source any more.
                var cleaned = record
                try? MigrationState.markSourceCleaned(&cleaned, on: db)
                if let index = tableRecords.firstIndex(where: { $0.target == record.target }) { tableRecords[index].sourceCleaned = true }
                continue
            }
            resolved.append(try resolve(record, source: source, earlier: resolved, changes: columnChanges[record.target.lowercased()] ?? ColumnChanges(),
                                         registeredName: tableRenames.first { $0.value.lowercased() == record.target.lowercased() }?.key ?? record.target.lowercased(),
                                         on: db))
        }
        let stillNeeded = Set(resolved.map(\.source.id))
        needed = needed.filter { stillNeeded.contains($0.key) }
        lock.lock()
        self.tableRenames = tableRenames
        sources = needed
        mappings = resolved.filter { !$0.isFinished }
        cleanupMappings = resolved.filter { $0.isFinished }
        floors = db.isInTransaction ? [:] : Dictionary(mappings.compactMap { mapping in
            mapping.rowidFloor(mapping.record).map { (mapping.registeredName, $0) }
        }, uniquingKeysWith: min)
        finishedRecords = tableRecords.filter { $0.state == .finished && ($0.sourceCleaned || unavailable.contains($0.sourceID)) }
        epochValue += 1
        lock.unlock()
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
            if db.isInTransaction { try db.savepoint(body) } else { try db.transaction(.immediate, body) }
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

    /// The current name of the target a plan registered as `name` (the app may have renamed it).
    func currentName(ofRegistered name: String) -> String {
        lock.lock()
        defer { lock.unlock() }
        return tableRenames[name.lowercased()] ?? name
    }

    /// Every mapping still migrating, in registration order.
    var migratingMappings: [ResolvedMapping] {
        lock.lock()
        defer { lock.unlock() }
        return mappings
    }

    /// Finished mappings whose source still holds moved rows.
    var mappingsAwaitingCleanup: [ResolvedMapping] {
        lock.lock()
        defer { lock.unlock() }
        return cleanupMappings
    }

    /// The records of every registered table, in registration order of their kind.
    var allRecords: [TableRecord] {
        lock.lock()
        defer { lock.unlock() }
        return finishedRecords + cleanupMappings.map(\.record) + mappings.map(\.record)
    }

    /// Replaces the in-memory record of a mapping after its transaction committed. A finished
    /// mapping leaves the migrating set at once (reads and writes stop paying for it); a cleaned
    /// one leaves the cleanup set, and its source is detached when nothing else needs it.
    func updateRecord(_ record: TableRecord) {
        lock.lock()
        defer { lock.unlock() }
        let key = record.target.lowercased()
        if let index = mappings.firstIndex(where: { $0.targetName.lowercased() == key }) {
            var mapping = mappings[index]
            mapping.record = record
            if record.state == .finished {
                mappings.remove(at: index)
                cleanupMappings.append(mapping)
                // Cleanup may now delete rows of this source table, the fingerprint's sampled row among them.
                migratingSourceTables[mapping.source.id]?.remove(mapping.sourceShape.name.lowercased())
                epochValue += 1
            } else {
                mappings[index] = mapping
            }
        } else if let index = cleanupMappings.firstIndex(where: { $0.targetName.lowercased() == key }) {
            cleanupMappings[index].record = record
            if record.sourceCleaned {
                cleanupMappings.remove(at: index)
                finishedRecords.append(record)
                let stillNeeded = Set((mappings + cleanupMappings).map(\.source.id))
                sources = sources.filter { stillNeeded.contains($0.key) }
                epochValue += 1
            }
        }
    }

    /// The schemas of attached sources that no unfinished table needs any more.
    func unneededSourceSchemas(on db: Connection) throws(FerryError) -> [String] {
        lock.lock()
        let needed = Set(sources.values.map(\.schema))
        lock.unlock()
        var unneeded: [String] = []
        for name in try sqlite(db.schemaNames()) where name.hasPrefix(SourceRecord.schemaPrefix) && !needed.contains(name) {
            unneeded.append(name)
        }
        return unneeded
    }

    // MARK: Attaching

    /// Attaches every source file that still feeds an unfinished table (or is needed to clean one),
    /// and detaches the sources nothing needs any more. Runs on every Ferry connection before each
    /// use, so readers let go of a finished source as the writer does.
    ///
    /// A source whose file was deleted or renamed since it was attached is detached and attached
    /// again from its path, so a file that came back is used again (checked at most once per
    /// `interval`).
    /// A source that cannot be attached (missing, moved away, unreadable) does not stop the
    /// connection: it is recorded (`unavailableSources(on:)`), and the app's statements that need
    /// it, and the steps that need it, fail with `FerryError.sourceUnavailable`.
    /// - Throws: other attach errors (a missing or wrong key).
    /// - Parameter interval: how long after its last check `db` may go on reading the files it has
    ///   attached without checking that they are still at their paths (one `stat` each). Zero:
    ///   checked at every use.
    func attachSources(on db: Connection, checkingFilesAfter interval: Duration = .zero) throws(FerryError) {
        lock.lock()
        let files = attachedFiles
        let failedBefore = attachFailures[ObjectIdentifier(db)] != nil
        lock.unlock()
        let now = ContinuousClock.now
        let checkDue = interval == .zero || db.attachedFilesCheckedAt.map { now - $0 >= interval } ?? true
        if !failedBefore, try isAttachedAsNeeded(files, on: db, checkingFiles: checkDue) {
            if checkDue { db.attachedFilesCheckedAt = now }
            return
        }
        lock.lock()
        let list = Array(sources.values)
        lock.unlock()
        var failures: [String: FerryError] = [:]
        _ = try attachSources(list, required: [], on: db, failures: &failures)
        lock.lock()
        attachFailures[ObjectIdentifier(db)] = failures.isEmpty ? nil : failures
        lock.unlock()
        db.attachedFilesCheckedAt = now
    }

    /// True when `db` has exactly the source files of `files` attached (besides main and temp),
    /// none of them deleted or renamed since (when `checkingFiles`): nothing to attach or detach.
    /// The common case, checked without allocating (one `stat` of each file, for the rename check).
    private func isAttachedAsNeeded(_ files: [SourceRecord], on db: Connection, checkingFiles: Bool) throws(FerryError) -> Bool {
        guard try sqlite(db.schemaCount()) == 2 + files.count else { return false }
        for source in files {
            guard try sqlite(db.hasSchema(source.schema)) else { return false }
            if checkingFiles, try sqlite(db.fileHasMoved(schema: source.schema)) { return false }
        }
        return true
    }

    /// The resolved paths of the registered source files (thread-safe; same-file sources have none).
    var sourceFilePaths: [String] {
        lock.lock()
        let stored = sources.values.compactMap(\.path)
        lock.unlock()
        return stored.map(resolvedPath)
    }

    /// The sources that could not be attached to `db` at its latest use (by schema name), with
    /// the `FerryError.sourceUnavailable` that says why. Statements that need one are refused.
    func unavailableSources(on db: Connection) -> [String: FerryError] {
        lock.lock()
        defer { lock.unlock() }
        return attachFailures[ObjectIdentifier(db)] ?? [:]
    }

    /// Attaches one source for a step that needs it (a batch, cleanup), and checks that the file
    /// attached is still the registered one (a file overwritten in place keeps its inode).
    /// - Throws: `FerryError.sourceUnavailable` when it cannot be attached,
    ///   `FerryError.sourceMismatch` when another file is in its place.
    func attachRequiredSource(_ source: SourceRecord, on db: Connection) throws(FerryError) {
        var failures: [String: FerryError] = [:]
        _ = try attachSources([source], required: [source.id], on: db, failures: &failures, detachingOthers: false)
        if let path = source.path { try checkFingerprint(of: source, path: resolvedPath(path), on: db) }
    }

    /// Throws `FerryError.sourceMismatch` when the file attached for `source` is not the registered one.
    /// Read in one snapshot: a finished table of the file may be dropped meanwhile (`SourceRetirer`).
    private func checkFingerprint(of source: SourceRecord, path: String, on db: Connection) throws(FerryError) {
        guard let fingerprint = source.fingerprint else { return }
        lock.lock()
        let migrating = migratingSourceTables[source.id] ?? []
        lock.unlock()
        let check = { () throws(FerryError) -> String? in
            try fingerprint.mismatch(path: path, encrypted: source.encrypted, schema: source.schema, migrating: migrating, on: db)
        }
        if let reason = try db.isInTransaction ? check() : db.transaction(.deferred, check) {
            throw .sourceMismatch(path: path, reason: reason)
        }
    }

    /// Attaches the sources in `list`; returns the ids of those in `list` but not in `required`
    /// that could not be attached (missing or unreadable files), and adds their errors to `failures`.
    private func attachSources(_ list: [SourceRecord], required: Set<Int64>, on db: Connection,
                               failures: inout [String: FerryError], detachingOthers: Bool = true) throws(FerryError) -> Set<Int64> {
        var attached = Set(try sqlite(db.schemaNames()))
        let needed = Set(list.map(\.schema))
        if detachingOthers && !db.isInTransaction {
            // Best effort: a failed detach (a statement still open on it) is retried next time.
            for schema in attached where schema.hasPrefix(SourceRecord.schemaPrefix) && !needed.contains(schema) { try? db.detach(schema) }
        }
        var unavailable: Set<Int64> = []
        for source in list.sorted(by: { $0.id < $1.id }) {
            guard let stored = source.path else { continue }
            // Resolved only when needed: a source attached and in place costs one stat, and this
            // runs at every use of a connection.
            lazy var path = resolvedPath(stored)
            do throws(FerryError) {
                if attached.contains(source.schema) {
                    guard try sqlite(db.fileHasMoved(schema: source.schema)) else { continue }
                    guard !db.isInTransaction else {
                        throw .sourceUnavailable(path: path, reason: "the file was deleted or renamed while attached")
                    }
                    do throws(FerryError) { try sqlite(db.detach(source.schema)) } catch {
                        throw .sourceUnavailable(path: path, reason: "the file was deleted or renamed while attached, and cannot be detached: \(error)")
                    }
                    attached.remove(source.schema)
                }
                try attachSource(source, path: path, on: db)
            } catch {
                guard error.isSourceUnavailable, !required.contains(source.id) else { throw error }
                unavailable.insert(source.id)
                failures[source.schema] = error
            }
        }
        return unavailable
    }

    /// The cipher `source` (at resolved `path`) opens with: the supplied key, with the registered
    /// settings unless others were supplied; nil for a plain file.
    /// - Throws: `FerryError.missingSourceKey` for an encrypted file whose key was not supplied.
    private func cipher(of source: SourceRecord, path: String) throws(FerryError) -> Cipher? {
        guard source.encrypted else { return nil }
        guard var supplied = self.cipher(forResolvedPath: path) else { throw .missingSourceKey(path: path) }
        if supplied.settings == CipherSettings(), let settings = source.cipherSettings { supplied.settings = settings }
        return supplied
    }

    /// The source files whose read lock is worth holding (`SourceReadPins`): files of their own
    /// with a table that migrates, each with the cipher it opens with (a file whose key is
    /// missing is left out). Ferry writes a source file only to clean it up, and cleanup begins
    /// once no table migrates (`Stepper.step`).
    var pinnableSourceFiles: [(path: String, cipher: Cipher?)] {
        lock.lock()
        let migrating = Set(mappings.map(\.source.id))
        let candidates = attachedFiles.filter { migrating.contains($0.id) }
        lock.unlock()
        var files: [(path: String, cipher: Cipher?)] = []
        for source in candidates {
            guard let stored = source.path else { continue }
            let path = resolvedPath(stored)
            do throws(FerryError) { files.append((path, try cipher(of: source, path: path))) } catch { continue }
        }
        return files
    }

    private func attachSource(_ source: SourceRecord, path: String, on db: Connection) throws(FerryError) {
        let cipher = try self.cipher(of: source, path: path)
        do throws(FerryError) {
            try sqlite(db.attach(path: path, as: source.schema, cipher: cipher))
        } catch {
            throw Self.sourceError(error, path: path)
        }
        do throws(FerryError) {
            try checkFingerprint(of: source, path: path, on: db)
        } catch {
            try? db.detach(source.schema)
            throw Self.sourceError(error, path: path)  // a corrupt page read by the check names the source
        }
        try sqlite(db.execute("PRAGMA \(q(source.schema)).journal_size_limit = \(journalSizeLimit)"))
        let cacheSize = db.configuration.readOnly ? Self.cacheSize : Self.writingSourceCacheSize
        try sqlite(db.execute("PRAGMA \(q(source.schema)).cache_size = \(cacheSize)"))
    }

    /// A failure to open or read a source file as `FerryError.sourceUnavailable` (other errors, such
    /// as a wrong key, stay as they are).
    static func sourceError(_ error: FerryError, path: String) -> FerryError {
        switch error {
        case .fileNotFound:
            return .sourceUnavailable(path: path, reason: "no such file (deleted or renamed?)")
        case .sqlite(let code, _, _) where [.cantOpen, .ioError, .perm].contains(code.primary):
            return .sourceUnavailable(path: path, reason: "\(error)")
        case .sqlite(let code, let message, _) where code.primary == .corrupt:
            return .sourceUnavailable(path: path, reason: message)
        default:
            return error
        }
    }
}
