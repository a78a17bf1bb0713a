import FerrySQLite
import FerrySQL
import Foundation

extension MigrationEngine {
    /// Validates a plan and records it in the catalog; idempotent for a plan already registered.
    ///
    /// New sources are attached first (ATTACH cannot run inside a transaction); everything written
    /// to the catalog then commits in one transaction, together with created target tables, the
    /// seeded AUTOINCREMENT sequence and the mark that the target's rows are to be checked for
    /// collisions with source rows (which the load that follows quarantines, see `quarantineCollisions`).
    /// Inside a transaction (a schema migration's online rebuild), a plan whose sources are all in
    /// the target file registers in a savepoint of that transaction.
    /// - Throws: `FerryError.invalidPlan` for a plan that names a target twice or conflicts with the
    ///   registered one, `FerryError.noSuchTable`, `FerryError.schemaMismatch`,
    ///   `FerryError.invalidFilter`, and attach errors (missing file, wrong key).
    func register(_ plan: MigrationPlan, on db: Connection) throws(FerryError) {
        let insideTransaction = db.isInTransaction
        guard !insideTransaction || plan.sources.allSatisfy({ $0.location == .targetFile }) else {
            throw .misuse("register a migration plan with source files outside of a transaction")
        }
        let lastRowid = db.lastInsertRowid  // Ferry's bookkeeping is invisible to the app
        defer { db.setLastInsertRowid(lastRowid) }
        // Targets the app renamed while they migrated are found under their new names.
        let plan = Self.followingRenames(plan, try MigrationState.tableRenames(on: db))
        try validateShape(of: plan)
        ciphers.supply(from: plan)
        let existingSources = try MigrationState.loadSources(on: db)
        let existingTables = try MigrationState.loadTables(on: db)

        // Attach the plan's sources under temporary names to read their schemas; catalog ids come later.
        var sourceSchemas: [Int: String] = [:]
        var temporarySchemas: [String] = []
        defer { for schema in temporarySchemas { try? db.detach(schema) } }
        // A file attached twice to one connection would lock itself out of BEGIN IMMEDIATE: reuse
        // the schema of a source that is already attached.
        var attachedFiles: [String: String] = [:]
        for row in try sqlite(db.fetchAll("PRAGMA database_list")) {
            let file: String = try sqlite(row.column(2, as: String?.self)) ?? ""
            if !file.isEmpty { attachedFiles[URL(fileURLWithPath: file).standardizedFileURL.resolvingSymlinksInPath().path] = try sqlite(row.column(1)) }
        }
        for (index, source) in plan.sources.enumerated() {
            switch source.location {
            case .targetFile:
                sourceSchemas[index] = "main"
            case .file(let path):
                let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
                if let schema = attachedFiles[URL(fileURLWithPath: absolute).resolvingSymlinksInPath().path] {
                    guard schema != "main" else {
                        throw .invalidPlan("source \(path) is the target file itself; use MigrationSourceLocation.targetFile")
                    }
                    sourceSchemas[index] = schema
                    continue
                }
                // A source whose mappings are all registered already is not read: re-registering
                // the same plan at every launch works while a source awaiting only cleanup is away.
                let registered = Set(existingTables.map { $0.target.lowercased() })
                guard source.tables.contains(where: { !registered.contains($0.target.lowercased()) }) else { continue }
                let schema = "ferry_plan_\(index)"
                try sqlite(db.attach(path: absolute, as: schema, cipher: source.cipher))
                temporarySchemas.append(schema)
                sourceSchemas[index] = schema
            }
        }

        func registerMappings() throws(FerryError) {
            // In the transaction: a refused plan leaves no catalog behind.
            try MigrationState.create(on: db)
            for (index, source) in plan.sources.enumerated() {
                let schema = sourceSchemas[index]
                let sourceID = try sourceRecordID(for: source, existing: existingSources, on: db)
                for mapping in source.tables {
                    if let existing = existingTables.first(where: { $0.target.lowercased() == mapping.target.lowercased() }) {
                        guard existing.sourceID == sourceID,
                              existing.sourceTable.lowercased() == mapping.source.lowercased(),
                              ExpressionMeaning.sameFilter(existing.filter, mapping.filter),
                              ExpressionMeaning.sameFeeds(existing.columnFeeds, mapping.columns)
                        else {
                            throw .invalidPlan("\(mapping.target) is already fed by \(existing.sourceTable)"
                                + (existing.filter.map { " where \($0)" } ?? "")
                                + " from another registration; a table in flight cannot change its source, filter or column feeds")
                        }
                        continue  // same mapping: idempotent
                    }
                    guard let schema else { throw .misuse("source \(index) of the plan was not attached") }
                    try registerMapping(mapping, sourceID: sourceID, sourceSchema: schema, on: db)
                }
                if case .file(let path) = source.location, let schema {
                    try recordFingerprint(of: source, path: path, sourceID: sourceID, schema: schema,
                                          existing: existingSources.first { $0.id == sourceID }?.fingerprint, on: db)
                }
            }
        }
        if insideTransaction {
            try db.savepoint { () throws(FerryError) in try registerMappings() }
        } else {
            // The catalog is main's alone: take main's write lock, not the sources' as `BEGIN
            // IMMEDIATE` would (a source file with a rollback journal that another connection was
            // reading then failed the commit with SQLITE_BUSY, after the busy timeout). Without the
            // catalog yet, creating it is the transaction's first statement, and takes the lock.
            let hasCatalog = try MigrationState.hasFlagsTable(on: db)
            try db.transaction(.deferred) { () throws(FerryError) in
                if hasCatalog { try sqlite(db.executeCached(MigrationState.takeMainWriteLockSQL)) }
                try registerMappings()
            }
        }
        // A source file with a rollback journal goes to WAL once its plan is recorded (a refused plan
        // leaves the file as it was): a new one, and one registered earlier (the app registers its
        // plan at every launch), which the other connections see at their next read.
        for (index, source) in plan.sources.enumerated() where !source.keepsJournalMode && source.location != .targetFile {
            if let schema = sourceSchemas[index] { SourceJournal.switchToWAL(schema: schema, on: db) }
        }
        for schema in temporarySchemas { try? db.detach(schema) }
        temporarySchemas.removeAll()
        // A new registration re-arms the "all finished" notification.
        try MigrationState.rearmAllFinishedNotification(on: db)
        try load(on: db)
    }

    /// Records what identifies a source file (`SourceFingerprint`): its salt when encrypted, and a
    /// sampled row of each table the plan reads from it (kept for tables sampled earlier).
    private func recordFingerprint(of source: MigrationSource, path: String, sourceID: Int64, schema: String,
                                   existing: SourceFingerprint?, on db: Connection) throws(FerryError) {
        var fingerprint = existing ?? SourceFingerprint(salt: nil, tables: [:])
        if source.cipher != nil && fingerprint.salt == nil {
            fingerprint.salt = try SourceFingerprint.salt(of: URL(fileURLWithPath: path).standardizedFileURL.path)
        }
        for mapping in source.tables where fingerprint.tables[mapping.source.lowercased()] == nil {
            fingerprint.tables[mapping.source.lowercased()] = try SourceFingerprint.sample(schema: schema, table: mapping.source, at: nil, on: db)
        }
        if fingerprint != existing { try MigrationState.recordFingerprint(fingerprint, sourceID: sourceID, on: db) }
    }

    /// Checks what can be checked without a database: names present, no target twice, a same-file
    /// source table differs from its target, no mapping after an unfiltered one on the same table.
    private func validateShape(of plan: MigrationPlan) throws(FerryError) {
        var targets = Set<String>()
        var unfiltered = Set<String>()
        for (source, mapping) in plan.mappings {
            guard !mapping.target.isEmpty, !mapping.source.isEmpty else {
                throw .invalidPlan("a table mapping needs both a target and a source table name")
            }
            guard targets.insert(mapping.target.lowercased()).inserted else {
                throw .invalidPlan("the plan names target \(mapping.target) twice")
            }
            let sourceKey: String
            switch source.location {
            case .targetFile:
                guard mapping.source.lowercased() != mapping.target.lowercased() else {
                    throw .invalidPlan("\(mapping.target) cannot be fed by itself: a same-file source must be another table")
                }
                guard source.cipher == nil else {
                    throw .invalidPlan("a same-file source uses the target's own encryption; give no cipher for it")
                }
                sourceKey = "main." + mapping.source.lowercased()
            case .file(let path):
                guard !path.isEmpty else { throw .invalidPlan("a source file path is empty") }
                sourceKey = URL(fileURLWithPath: path).standardizedFileURL.path + "." + mapping.source.lowercased()
            }
            if unfiltered.contains(sourceKey) {
                throw .invalidPlan("\(mapping.target) reads \(mapping.source) after a mapping without filter took every row of it")
            }
            if mapping.filter == nil { unfiltered.insert(sourceKey) }
            if let filter = mapping.filter {
                try FilterValidator.validate(filter)
            }
            var fed = Set<String>()
            for feed in mapping.columns {
                guard !feed.column.isEmpty else { throw .invalidPlan("a column feed of \(mapping.target) names no column") }
                guard fed.insert(feed.column.lowercased()).inserted else {
                    throw .invalidPlan("column \(feed.column) of \(mapping.target) has two feeds")
                }
                try FilterValidator.validate(feed.expression, role: "the feed of column \(feed.column)")
            }
        }
    }

    /// The source text of a token.
    static func text(of token: Token, in text: String) -> String {
        let bytes = Array(text.utf8)[token.range]
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Column feeds with trimmed expressions, as stored in the catalog.
    func normalizedFeeds(_ feeds: [ColumnFeed]) -> [ColumnFeed] {
        feeds.map { ColumnFeed($0.column, from: $0.expression.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    func normalizedFilter(_ filter: String?) -> String? {
        guard let filter else { return nil }
        let trimmed = filter.trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmed.isEmpty ? nil : trimmed
    }

    private func sourceRecordID(for source: MigrationSource, existing: [SourceRecord], on db: Connection) throws(FerryError) -> Int64 {
        let stored: String?
        switch source.location {
        case .targetFile: stored = nil
        case .file(let path): stored = paths.storedPath(for: path)
        }
        if let match = existing.first(where: { $0.path == stored }) {
            if match.encrypted != (source.cipher != nil) {
                throw .invalidPlan("source \(stored ?? "(target file)") was registered as \(match.encrypted ? "encrypted" : "plain"), but the plan gives it \(source.cipher == nil ? "no cipher" : "a cipher")")
            }
            return match.id
        }
        return try MigrationState.recordSource(path: stored, encrypted: source.cipher != nil,
                                               settings: source.cipher?.settings, on: db)
    }

    /// `plan` with each target the app renamed (`renames`: lower-cased registered name → current
    /// name) under its current name.
    static func followingRenames(_ plan: MigrationPlan, _ renames: [String: String]) -> MigrationPlan {
        guard !renames.isEmpty else { return plan }
        var plan = plan
        for source in plan.sources.indices {
            for table in plan.sources[source].tables.indices {
                let target = plan.sources[source].tables[table].target
                if let current = renames[target.lowercased()] { plan.sources[source].tables[table].target = current }
            }
        }
        return plan
    }

    private func registerMapping(_ mapping: TableMapping, sourceID: Int64, sourceSchema: String, on db: Connection) throws(FerryError) {
        let sourceShape = try TableShape.read(mapping.source, schema: sourceSchema, on: db)
        let filter = normalizedFilter(mapping.filter)
        if let filter {
            try FilterValidator.check(filter, against: sourceShape, on: db)
        }
        let targetExists = try sqlite(db.tableExists(mapping.target))
        if !targetExists {
            try SchemaCopier.createTarget(named: mapping.target, from: sourceShape, on: db)
        }
        let target = try TableShape.read(mapping.target, schema: "main", on: db)
        let feeds = normalizedFeeds(mapping.columns)
        try checkFeeds(feeds, target: target, source: sourceShape, on: db)
        try checkCompatibility(target: target, source: sourceShape, feeds: feeds, dropped: mapping.droppedColumns)

        // Evaluated over every source row, through the time-value guard: a row whose value makes
        // the filter read the clock (a column holding 'now') refuses the registration here.
        let condition = filter.map { "(\(ResolvedMapping.guardingTime($0)))" } ?? "1"
        let from = "\(q(sourceSchema)).\(q(sourceShape.name))"
        let estimate: Int64?
        do {
            estimate = try sqlite(db.scalar("SELECT count(*) FROM \(from) WHERE \(condition)"))
        } catch {
            throw Self.timeValueFailure(error, filter: filter ?? "")
        }
        // A source without rowid starts its key cursor at its first row (none passed yet).
        var keyCursor: [UInt8]?
        if !sourceShape.hasRowid {
            let keyColumns = sourceShape.primaryKey.map { "\(from).\(q($0.column)) COLLATE \(q($0.collation))" }.joined(separator: ", ")
            keyCursor = try sqlite(db.scalar("SELECT \(Connection.rowKeyFunction)(\(keyColumns)) FROM \(from) ORDER BY \(keyColumns) LIMIT 1"))
        }
        try MigrationState.recordTable(target.name, sourceID: sourceID, sourceTable: sourceShape.name,
                                       filter: filter, columnFeeds: feeds, estimate: estimate, keyCursor: keyCursor, on: db)
        // The app's INSERT triggers on the target fire for the app's inserts alone from now on.
        try AppTriggerGuard.sync(target: target.name, on: db)
        // The app's triggers that update or delete its rows reach the pending ones too.
        try AppTriggerWrites.sync(on: db)
        // Rows the target holds already may collide with source rows: checked at the next load.
        if try sqlite(db.scalar("SELECT EXISTS (SELECT 1 FROM main.\(q(target.name)))", as: Int.self)) == 1 {
            try MigrationState.markCollisionCheckDue(target: target.name, on: db)
        }
        if target.isAutoincrement {
            // The sequence starts above every matching source row and above the source's own
            // sequence: AUTOINCREMENT keys the source ever handed out are never handed out again.
            // (From a source without rowid: the column that feeds the target's INTEGER PRIMARY KEY.)
            let topColumn = sourceShape.hasRowid ? sourceShape.rowidName
                : target.rowidAliasColumn.flatMap { alias in Self.feeds(target: target, source: sourceShape, declared: feeds).first { $0.column.lowercased() == alias.lowercased() } }?
                    .sourceColumn.map(q)
            let matchingTop: Int64? = try topColumn.flatMap { column throws(FerryError) in
                try sqlite(db.scalar("SELECT max(\(from).\(column)) FROM \(from) WHERE \(condition)"))
            }
            let sourceSequence: Int64? = sourceShape.isAutoincrement
                ? try sqlite(db.scalar("SELECT seq FROM \(q(sourceSchema)).sqlite_sequence WHERE name = ?", [.text(sourceShape.name)]))
                : nil
            let top = [matchingTop, sourceSequence].compactMap { $0 }.max()
            if let top {
                let current: Int64? = try sqlite(db.scalar("SELECT seq FROM main.sqlite_sequence WHERE name = ?", [.text(target.name)]))
                if current == nil {
                    try sqlite(db.execute("INSERT INTO main.sqlite_sequence(name, seq) VALUES (?, ?)", [.text(target.name), .integer(top)]))
                } else if current! < top {
                    try sqlite(db.execute("UPDATE main.sqlite_sequence SET seq = ? WHERE name = ?", [.integer(top), .text(target.name)]))
                }
            }
        }
    }

    /// Each feed names a writable target column and compiles against the source; the rowid alias
    /// (INTEGER PRIMARY KEY) can only be fed by the source's rowid (when the source has one).
    private func checkFeeds(_ feeds: [ColumnFeed], target: TableShape, source: TableShape, on db: Connection) throws(FerryError) {
        var problems: [String] = []
        for feed in feeds {
            guard let column = target.column(named: feed.column) else {
                problems.append("a feed names column \(feed.column), which the target does not have")
                continue
            }
            if column.isGenerated { problems.append("column \(column.name) is generated; it cannot be fed") }
            if source.hasRowid, column.name.lowercased() == target.rowidAliasColumn?.lowercased() {
                let name = Self.bareColumnName(feed.expression)?.lowercased()
                let sourceRowids = [source.rowidAliasColumn?.lowercased(), "rowid", "oid", "_rowid_"].compactMap { $0 }
                if name == nil || !sourceRowids.contains(name!) {
                    problems.append("column \(column.name) is the target's rowid: it keeps the source row's rowid and cannot be fed by \(feed.expression)")
                }
            }
            try FilterValidator.check(feed.expression, against: source, on: db, role: "the feed of column \(feed.column)")
        }
        if !problems.isEmpty { throw .schemaMismatch(table: target.name, problems: problems) }
    }

    /// Every target column must be fed (by a source column of the same name or a declared feed), or
    /// be able to take its default (a DEFAULT, nullable, or generated).
    /// And every source column must reach the target (copied by name or used by a feed) or be
    /// declared dropped: otherwise its values would be lost (the source's INTEGER PRIMARY KEY too
    /// when the target has no rowid to keep it in). A target `WITHOUT ROWID` needs its primary key fed.
    private func checkCompatibility(target: TableShape, source: TableShape, feeds: [ColumnFeed], dropped: [String]) throws(FerryError) {
        var problems: [String] = []
        let fed = Set(feeds.map { $0.column.lowercased() })
        let usedByFeeds = Set(feeds.flatMap { feed in
            ((try? Tokenizer.tokenize(feed.expression)) ?? []).compactMap { token -> String? in
                switch token.kind {
                case .identifier: return Self.text(of: token, in: feed.expression).lowercased()
                case .quotedIdentifier: return String(Self.text(of: token, in: feed.expression).dropFirst().dropLast()).lowercased()
                default: return nil
                }
            }
        })
        let declaredDropped = Set(dropped.map { $0.lowercased() })
        for column in source.columns where !column.isGenerated {
            let name = column.name.lowercased()
            if target.column(named: column.name) == nil && !usedByFeeds.contains(name) && !declaredDropped.contains(name)
                && (name != source.rowidAliasColumn?.lowercased() || !target.hasRowid) {
                problems.append("source column \(column.name) reaches no target column, so its values would be lost; "
                    + "add it to the target, use it in a column feed, or list it in droppedColumns")
            }
        }
        for column in target.columns where !column.isGenerated && source.column(named: column.name) == nil && !fed.contains(column.name.lowercased()) {
            if !target.hasRowid && column.primaryKeyPosition > 0 {
                // Its primary key identifies each row of a WITHOUT ROWID table: a default would give every row the same key.
                problems.append("target column \(column.name) is in the primary key of a WITHOUT ROWID table, and the source has no column \(column.name); feed it")
            } else if column.notNull && column.defaultSQL == nil && column.name.lowercased() != target.rowidAliasColumn?.lowercased() {
                problems.append("target column \(column.name) is NOT NULL without a DEFAULT and the source has no column \(column.name)")
            }
        }
        // (A source without rowid has no rowid to keep: its column becomes the target's rowid.)
        if let alias = target.rowidAliasColumn, !fed.contains(alias.lowercased()), let sourceColumn = source.column(named: alias),
           source.hasRowid, source.rowidAliasColumn?.lowercased() != sourceColumn.name.lowercased() {
            problems.append("target column \(alias) is the rowid (INTEGER PRIMARY KEY), but source column \(sourceColumn.name) is not the source's rowid; declare it INTEGER PRIMARY KEY in both")
        }
        if !problems.isEmpty {
            throw .schemaMismatch(table: target.name, problems: problems)
        }
    }

    /// `error` as `FerryError.invalidFilter` when the time-value guard raised it (a filter or feed
    /// evaluated a value that reads the clock or the time zone: `ResultCode.constraintFunction`);
    /// any other error unchanged.
    static func timeValueFailure(_ error: FerryError, filter: String) -> FerryError {
        guard error.resultCode == .constraintFunction, case .sqlite(_, let message, _) = error else { return error }
        return .invalidFilter(filter: filter, reason: message)
    }
}
