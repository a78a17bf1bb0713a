import FerrySQL
import FerrySQLite
import Foundation

/// What the app's statements may do on Ferry's connections, enforced inside SQLite by its
/// authorizer (`Connection.setAuthorizer`) while each statement compiles, so that no spelling,
/// view, trigger or quoting can get around it: the rewriter decides how a statement reads and
/// writes migrating tables; this policy makes sure nothing reaches what the migration relies on.
///
/// Protected, for statements compiled as `.untrusted` (the app's, through `FerryConnection`):
/// - Ferry's tables, triggers and indexes (`reservedObjectPrefixes`: the catalogs, the write path's
///   temp tables, a rebuild's old table): no write, no DDL. Ferry's own redirect triggers
///   (`ferry_redirect_*`) write them on the app's behalf.
/// - Attached migration sources (`reservedSchemaPrefixes`): no write, no DDL, no `REINDEX`, no
///   pragma (but the read-only checks `integrity_check` and `quick_check`), no DETACH.
/// - `ATTACH` of the target or of a registered source file under any name (compared by file
///   identity, so links and other spellings are caught), and `ATTACH` of a file name SQLite cannot
///   show (a bound or computed name).
/// - Pragmas that bypass the migration or its keys: `key`/`rekey` and their hex/text forms,
///   cipher settings, `writable_schema`, `schema_version`, journal and locking modes,
///   `wal_autocheckpoint`, `case_sensitive_like`, `recursive_triggers`, the store directories.
/// - Settings that outlive the app's transaction and would leave the writer unusable: `query_only`
///   (switched on, no later write could begin) and the process-wide heap limits (SQL can only
///   lower `hard_heap_limit`, never raise it again).
/// - `BEGIN`/`COMMIT`/`ROLLBACK`: `read { }` and `write { }` own the transaction.
/// - A temp table or view named like a migrating table, and `ALTER TABLE` of a temp table: it
///   would hide the migrating table from every unqualified name.
///
/// Always, whoever's statement it is: functions that write files, load code or export a database
/// (`sqlcipher_export`, `load_extension`, `fts3_tokenizer`, `writefile`, ...), and writes to
/// Ferry's tables or sources from a trigger that is not Ferry's.
///
/// Reads are allowed everywhere (reading the catalog or a source directly changes nothing).
final class AccessPolicy: Sendable {
    /// The target database file.
    let targetPath: String
    /// The registered source files, resolved (read at each `ATTACH` the app compiles).
    private let sourcePaths: @Sendable () -> [String]
    /// The migrating targets' names, lower-cased (read at each temp object the app creates).
    private let migratingTables: @Sendable () -> Set<String>
    /// The source tables of same-file migrations in progress, lower-cased: read-only until their
    /// migration finishes (read at each write to a `main` table from a trigger of the app's).
    private let sameFileSources: @Sendable () -> Set<String>

    init(targetPath: String, sourcePaths: @escaping @Sendable () -> [String],
         migratingTables: @escaping @Sendable () -> Set<String> = { [] },
         sameFileSources: @escaping @Sendable () -> Set<String> = { [] }) {
        self.targetPath = targetPath
        self.sourcePaths = sourcePaths
        self.migratingTables = migratingTables
        self.sameFileSources = sameFileSources
    }

    /// Installs the policy as `db`'s authorizer (once per connection).
    func install(on db: Connection) {
        guard !db.hasAuthorizer else { return }
        db.setAuthorizer { [self] request, trust in decide(request, trust: trust) }
    }

    /// The decision for one request.
    func decide(_ request: AuthorizerRequest, trust: StatementTrust) -> AuthorizerDecision {
        if let denial = alwaysDenied(request) { return .deny(reason: denial) }
        if request.action == .function, request.second?.lowercased() == MigratingTableSQL.insertProbeProcedure {
            return decideInsertProbe(request, trust: trust)
        }
        if request.action == .function, TriggerWriteMoves.callFunctions.contains(request.second?.lowercased() ?? "") {
            return decideTriggerMoves(request, trust: trust)
        }
        guard trust == .untrusted else { return .allow }
        if request.action == .function, request.second?.lowercased() == ResolvedMapping.movedRowRecorderFunction {
            return .deny(reason: "is Ferry's own function: only its stepper calls it, to record the rows each batch moves")
        }
        if request.action == .function, request.second?.lowercased() == MovedRowIndex.function,
           !(request.accessor.map(Self.isFerryTrigger) ?? false) {
            return .deny(reason: "is Ferry's own function: only its triggers call it, to tell the source rows that moved")
        }
        if request.action == .function, request.second?.lowercased() == MigrationState.editRecorderFunction,
           !(request.accessor.map(Self.isFerryTrigger) ?? false) {
            return .deny(reason: "is Ferry's own function: only its triggers call it, to record the rows the app edits")
        }
        let action = request.action
        switch action {
        case .insert, .update, .delete:
            return decideWrite(request)
        case .pragma:
            return decidePragma(request)
        case .attach:
            return decideAttach(request)
        case .detach:
            guard let schema = request.first else {
                return .deny(reason: "cannot be checked: write the schema name of DETACH as a literal")
            }
            if Self.isReservedSchema(schema) {
                return .deny(reason: "is a migration source Ferry attached; it stays attached while the migration needs it")
            }
            return .allow
        case .transaction:
            return .deny(reason: "is managed by Ferry: read { } and write { } run their body in one transaction (use SAVEPOINT for a nested one)")
        case .reindex:
            // SQLite asks once per index it rebuilds, naming its schema: `REINDEX nocase` (or a
            // bare `REINDEX`) asks for the indexes of every attached database, sources included.
            if let schema = request.schema, Self.isReservedSchema(schema) {
                return .deny(reason: "would rewrite an index of a migration source (index \(request.first ?? "?")); Ferry never writes a source while it migrates")
            }
            return .allow
        default:
            if action.isSchemaChange { return decideSchemaChange(request) }
            return .allow
        }
    }

    // MARK: Rules

    /// The values of a boolean pragma that switch it off (lower-cased), as the policy accepts them.
    static let offValues: Set<String> = ["0", "off", "false", "no"]

    /// Functions that write files, load code, or copy a database elsewhere.
    static let forbiddenFunctions: Set<String> = [
        "sqlcipher_export", "load_extension", "fts3_tokenizer", "writefile", "readfile", "edit",
    ]

    /// Requests denied whoever compiles the statement.
    private func alwaysDenied(_ request: AuthorizerRequest) -> String? {
        switch request.action {
        case .function:
            guard let name = request.second?.lowercased(), Self.forbiddenFunctions.contains(name) else { return nil }
            return "is a function that writes or reads files, loads code or exports a database; it cannot run on a database Ferry migrates"
        case .insert, .update, .delete:
            // A trigger of the app's must not write Ferry's state or a source, also when Ferry's own
            // statement (a step, a move) fires it.
            guard let accessor = request.accessor, !Self.isFerryTrigger(accessor) else { return nil }
            if let schema = request.schema, Self.isReservedSchema(schema) {
                return "is a migration source; trigger \(accessor) may not write it"
            }
            if let table = request.first, Self.isReservedObject(table) {
                return "is Ferry's migration state; trigger \(accessor) may not write it"
            }
            // The source of a same-file migration is read-only while it migrates: the rewriter
            // refuses the app's writes to it, and SQLite runs trigger bodies out of its reach.
            if let table = request.first, request.schema?.lowercased() ?? "main" == "main", sameFileSources().contains(table.lowercased()) {
                return "is the source of a migration in progress (read-only until it finishes); trigger \(accessor) may not write it"
            }
            return nil
        default:
            return nil
        }
    }

    /// The insert probe's procedure (`MigratingTableSQL.defineInsertProbe`): called by Ferry's
    /// redirect triggers in the app's statements, never by the app itself. Ferry's own statements
    /// insert into a target only to move rows, with the redirect triggers suspended: the call is
    /// compiled out of them (it would do nothing, and a statement that may call a function opens a
    /// statement journal, which would slow the stepper's copies by about a fifth).
    private func decideInsertProbe(_ request: AuthorizerRequest, trust: StatementTrust) -> AuthorizerDecision {
        if trust == .trusted { return .ignore }
        if let accessor = request.accessor, Self.isFerryTrigger(accessor) { return .allow }
        return .deny(reason: "is Ferry's own procedure: only its redirect triggers call it")
    }

    /// The functions of the app's triggers that read or write a migrating table (`AppTriggerWrites`):
    /// called from the body or condition of a trigger, which the app's statements fire. Ferry's own
    /// statements never fire the app's triggers for real (a move runs with them quiet): compiled
    /// out there (SQLite reads the call as NULL), which also spares Ferry's copies the statement
    /// journal a statement that may call a function opens.
    private func decideTriggerMoves(_ request: AuthorizerRequest, trust: StatementTrust) -> AuthorizerDecision {
        if trust == .trusted { return .ignore }
        if request.accessor != nil { return .allow }
        return .deny(reason: "is Ferry's own procedure: only the app's triggers call it, as Ferry wrote them")
    }

    private func decideWrite(_ request: AuthorizerRequest) -> AuthorizerDecision {
        let table = request.first ?? ""
        if let schema = request.schema, Self.isReservedSchema(schema) {
            if AccessDenial.isSchemaTable(table) { return .deny(reason: "is a migration source: its schema must not change while it migrates") }
            return .deny(reason: "is a migration source: write the migrating table instead (Ferry moves and deletes source rows itself)")
        }
        if Self.isReservedObject(table) {
            if let accessor = request.accessor, Self.isFerryTrigger(accessor) { return .allow }
            return .deny(reason: "is Ferry's migration state; only Ferry writes it")
        }
        if table.lowercased() == "sqlite_dbpage" {
            return .deny(reason: "writes database pages directly, around every table's constraints and the migration")
        }
        return .allow
    }

    private func decideSchemaChange(_ request: AuthorizerRequest) -> AuthorizerDecision {
        // ALTER TABLE names its schema first (the others in `schema`).
        let schema = request.action == .alterTable ? request.first : request.schema
        if let schema, Self.isReservedSchema(schema) {
            return .deny(reason: "is a migration source: its schema must not change while it migrates")
        }
        // ALTER TABLE reports (schema, table); the others (object, table or module).
        let names = request.action == .alterTable ? [request.second] : [request.first, request.second]
        for case let name? in names where Self.isReservedObject(name) {
            return .deny(reason: "is reserved: it belongs to Ferry's migration state")
        }
        // A temp table or view named like a migrating table would take its place for every
        // unqualified name (temp is searched first): the app's writes, and the rows Ferry's
        // redirect triggers move, would land in it and vanish with the connection.
        let inTemp = schema?.lowercased() == "temp"
        let createsInTemp = [.createTempTable, .createTempView].contains(request.action)
            || (inTemp && [.createTable, .createView, .createVirtualTable].contains(request.action))
        if createsInTemp, let name = request.first, migratingTables().contains(name.lowercased()) {
            return .deny(reason: "would hide the migrating table \(name) (a temp object is found first by unqualified names)")
        }
        if inTemp && request.action == .alterTable {
            return .deny(reason: "is refused while tables migrate: a temp table renamed like a migrating table would hide it")
        }
        return .allow
    }

    private func decidePragma(_ request: AuthorizerRequest) -> AuthorizerDecision {
        let name = (request.first ?? "").lowercased()
        let argument = request.second?.lowercased()
        // (The checks only read: `integrity_check(T)` of a migrating table checks its source too.)
        if let schema = request.schema, Self.isReservedSchema(schema), name != "integrity_check" && name != "quick_check" {
            return .deny(reason: "is a pragma on a migration source; Ferry alone configures its sources")
        }
        switch name {
        case "key", "rekey", "hexkey", "hexrekey", "textkey", "textrekey":
            return .deny(reason: "changes a key: Ferry keys the target and every source when it opens or attaches them")
        case "cipher_migrate":
            return .deny(reason: "rewrites the file's encryption; re-encrypt with Ferry's export instead")
        case "writable_schema":
            guard argument == nil else { return .deny(reason: "lets a statement edit the schema table directly, around the migration") }
        case "schema_version":
            guard argument == nil else { return .deny(reason: "would make SQLite misread the schema (corruption)") }
        case "journal_mode":
            guard argument == nil || argument == "wal" else {
                return .deny(reason: "changes the journal mode that the migration's readers, writer and checkpoints rely on (WAL)")
            }
        case "locking_mode":
            guard argument == nil else { return .deny(reason: "changes the locking that lets the app read while Ferry writes") }
        case "wal_autocheckpoint":
            guard argument == nil else { return .deny(reason: "replaces Ferry's WAL commit hook (backpressure and checkpoints)") }
        case "case_sensitive_like":
            return .deny(reason: "changes what LIKE matches, and so the meaning of migration filters between connections")
        case "recursive_triggers":
            guard argument == nil || Self.offValues.contains(argument!) else {
                return .deny(reason: "would fire Ferry's redirect triggers on their own moves")
            }
        case "query_only":
            // It outlives the transaction: Ferry's next write (the app's included) could not begin.
            guard argument == nil || Self.offValues.contains(argument!) else {
                return .deny(reason: "would leave the writer read-only after this transaction: Ferry's steps and every later write would fail")
            }
        case "temp_store_directory", "data_store_directory", "hard_heap_limit", "soft_heap_limit":
            guard argument == nil else { return .deny(reason: "changes a process-wide setting every connection shares") }
        default:
            if name.hasPrefix("cipher_") && argument != nil {
                return .deny(reason: "changes cipher settings: Ferry applies each file's settings when it opens or attaches it")
            }
        }
        return .allow
    }

    private func decideAttach(_ request: AuthorizerRequest) -> AuthorizerDecision {
        guard let name = request.first else {
            return .deny(reason: "cannot be checked: write the file name of ATTACH as a string literal")
        }
        guard let attached = FileIdentity(sqliteFileName: name) else { return .allow }  // new or in-memory
        for path in [targetPath] + sourcePaths() where FileIdentity(path: path) == attached {
            return .deny(reason: path == targetPath
                ? "is the database being migrated: attaching it again would write its tables around the migration"
                : "is a registered migration source: Ferry attaches it itself, and it is read-only until its migration finishes")
        }
        return .allow
    }

    /// Prefixes of every table, view, trigger and index Ferry creates in `main` and `temp` (any
    /// case): the catalogs, the schema migrations' log, a rebuild's old table, the write path's temp
    /// tables (`ferry_move_rows`, `ferry_move_keys`, `ferry_move_fk`), and the redirect triggers,
    /// probe views and suspension table (`ferry_redirect_*`). The one list the authorizer reads;
    /// `ReservedObjectsTests` checks it against the objects a migrating writer holds.
    /// Quarantine tables (`ferry_quarantine_*`) are not among them: they are the app's to inspect
    /// and empty.
    static let reservedObjectPrefixes = [MigrationState.tablePrefix, SchemaMigrationLog.table, "ferry_rebuild_", "ferry_redirect_"]
        + MigratingTableSQL.temporaryTables
    /// Prefixes of the schemas Ferry attaches (sources, a plan being checked, an export).
    static let reservedSchemaPrefixes = ["ferry_src_", "ferry_plan_", "ferry_export"]

    /// True for a table, trigger or index name Ferry reserves.
    static func isReservedObject(_ name: String) -> Bool {
        let lower = name.lowercased()
        return reservedObjectPrefixes.contains { lower.hasPrefix($0) }
    }

    /// True for a schema name Ferry reserves.
    static func isReservedSchema(_ name: String) -> Bool {
        let lower = name.lowercased()
        return reservedSchemaPrefixes.contains { lower.hasPrefix($0) }
    }

    /// True for Ferry's own triggers (the redirect triggers on migrating targets).
    static func isFerryTrigger(_ name: String) -> Bool { name.lowercased().hasPrefix("ferry_redirect_") }
}

/// A file's identity (device and inode): two paths, links or spellings of one file compare equal.
struct FileIdentity: Hashable {
    let device: UInt64
    let inode: UInt64

    /// The identity of the file at `path` (symlinks followed), or nil when there is none.
    init?(path: String) {
        var info = stat()
        guard !path.isEmpty, stat(path, &info) == 0 else { return nil }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }

    /// The identity of the file an `ATTACH` names: a path or a `file:` URI (percent-decoded, its
    /// query ignored); nil for in-memory and temporary databases and files that do not exist.
    init?(sqliteFileName name: String) {
        var path = name
        if path.isEmpty || path == ":memory:" { return nil }
        if path.lowercased().hasPrefix("file:") {
            path = String(path.dropFirst(5))
            if let end = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = String(path[..<end]) }
            if path.hasPrefix("//") {
                // file://authority/path: only an empty authority or localhost is a local file.
                let rest = path.dropFirst(2)
                guard let slash = rest.firstIndex(of: "/") else { return nil }
                path = String(rest[slash...])
            }
            path = path.removingPercentEncoding ?? path
            if path == ":memory:" { return nil }
        }
        self.init(path: path)
    }
}
