import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@_spi(Benchmarks) @testable import Ferry

/// One row of the scenario table `messages(id INTEGER PRIMARY KEY, conversation_id, body)`.
struct MessageRow: Hashable, Comparable, CustomStringConvertible {
    var id: Int64
    var conversation: Int64
    var body: String
    static func < (a: MessageRow, b: MessageRow) -> Bool {
        (a.id, a.conversation, a.body) < (b.id, b.conversation, b.body)
    }
    var description: String { "(\(id), \(conversation), \(body))" }

    init(id: Int64, conversation: Int64, body: String) {
        self.id = id
        self.conversation = conversation
        self.body = body
    }

    init(_ row: Row) throws {
        id = try row.get(0)
        conversation = try row.get(1)
        body = try row.get(2)
    }
}

/// The rows the app must see: the matching source rows plus the effect of every app write that
/// returned without an error (and none of those that threw).
struct MessageModel {
    var rows: [Int64: MessageRow] = [:]
    /// The rows in a fixed order, for comparing with a read (a multiset: duplicates would show).
    var sorted: [MessageRow] { rows.values.sorted() }
    /// The rowid SQLite chooses for an INSERT without one on the finished table.
    var nextRowid: Int64 { (rows.keys.max() ?? 0) + 1 }
}

/// Files of one run: a fresh copy of the pristine target and source in a directory of its own,
/// so the fault VFS's rules and counters (matched by path) see only this run.
struct ScenarioFiles {
    let directory: String
    var app: String { directory + "/app.db" }
    var legacy: String { directory + "/legacy.db" }
}

/// The pristine files every run starts from: `legacy.db` with `messages` (ids 1...rows,
/// conversation_id = id % 3, body 'message <id>') and an `app.db` holding an unrelated table.
final class ScenarioTemplate {
    let box: Sandbox
    let sourceRows: Int
    let filter: String?
    let batchRows: Int
    /// The ciphers of the source and the target (nil: plain files).
    let sourceCipher: Cipher?
    let targetCipher: Cipher?
    private var runs = 0

    /// SQLCipher 4 settings with 2 KDF iterations: encrypted runs stay fast.
    static func cipher(_ passphrase: String) -> Cipher {
        .passphrase(passphrase, settings: CipherSettings(compatibility: 4, kdfIterations: 2))
    }

    init(sourceRows: Int, filter: String? = nil, batchRows: Int, sourceCipher: Cipher? = nil, targetCipher: Cipher? = nil) throws {
        // In memory when the system has a tmpfs at /dev/shm: the runs are bound by fsync latency
        // on a disk, and the fault VFS counts (and fails) syncs before the file system sees them.
        box = Sandbox(preferringMemory: true)
        self.sourceRows = sourceRows
        self.sourceCipher = sourceCipher
        self.targetCipher = targetCipher
        self.filter = filter
        self.batchRows = batchRows
        let pristine = box.path("pristine")
        try FileManager.default.createDirectory(atPath: pristine, withIntermediateDirectories: true)
        _ = try box.makeLegacy(rows: sourceRows, name: "pristine/legacy.db", cipher: sourceCipher)
        let app = try Connection(path: pristine + "/app.db", configuration: .init(cipher: targetCipher))
        try app.execute("CREATE TABLE settings(key TEXT PRIMARY KEY, value)")
        try app.execute("INSERT INTO settings VALUES ('theme', 'dark')")
        app.close()
    }

    /// A fresh copy of the pristine files.
    func makeRun() throws -> ScenarioFiles {
        runs += 1
        let directory = box.path("run-\(runs)")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for name in ["app.db", "legacy.db"] {
            try FileManager.default.copyItem(atPath: box.path("pristine/\(name)"), toPath: directory + "/" + name)
        }
        return ScenarioFiles(directory: directory)
    }

    /// Removes a run's files once it was checked.
    func discard(_ files: ScenarioFiles) { try? FileManager.default.removeItem(atPath: files.directory) }

    func plan(_ files: ScenarioFiles) -> MigrationPlan {
        MigrationPlan(sources: [MigrationSource(.file(files.legacy), cipher: sourceCipher, tables: [
            TableMapping(target: "messages", source: "messages", filter: filter),
        ])])
    }

    var options: FerryDatabase.Options {
        var options = FerryDatabase.Options(stepBudget: .seconds(1))
        options.fixedBatchRows = batchRows
        return options
    }

    /// The source rows the plan moves.
    var initialModel: MessageModel {
        var model = MessageModel()
        for id in 1...Int64(sourceRows) where matchesFilter(conversation: id % 3) {
            model.rows[id] = MessageRow(id: id, conversation: id % 3, body: "message \(id)")
        }
        return model
    }

    /// The filters the scenarios use: none, or `conversation_id <> 2`.
    private func matchesFilter(conversation: Int64) -> Bool {
        switch filter {
        case nil: return true
        case "conversation_id <> 2": return conversation != 2
        default: fatalError("unsupported scenario filter \(filter!)")
        }
    }

    /// The source rows the plan leaves in the source (outside the filter), which cleanup keeps.
    var rowsOutsideFilter: Int { (1...sourceRows).filter { !matchesFilter(conversation: Int64($0 % 3)) }.count }

    /// Opens the target through the fault VFS with the plan (registering it on first open).
    func open(_ files: ScenarioFiles) throws(FerryError) -> FerryDatabase {
        try FerryDatabase(path: files.app, configuration: FaultVFS.configuration(.init(cipher: targetCipher, busyTimeout: .milliseconds(2000))),
                          plan: plan(files), options: options)
    }
}

/// How a run goes on after its first error.
enum Recovery: CaseIterable, CustomStringConvertible {
    /// Close the database at once, reopen it without faults, and finish the migration.
    case reopen
    /// Keep going in the same process (the failed action is not retried), finish the scenario,
    /// then close, reopen and finish.
    case continueInProcess
    var description: String { self == .reopen ? "reopen" : "continue" }
}

/// Runs a scenario's actions against one run's files, keeping the model of what the app must see.
final class ScenarioRun {
    let template: ScenarioTemplate
    let files: ScenarioFiles
    var model: MessageModel
    private(set) var db: FerryDatabase?
    /// Errors in the order they surfaced, with the action that raised them.
    private(set) var errors: [(action: String, error: any Error)] = []
    /// Problems found while running (wrong rows read, untyped errors).
    private(set) var problems: [String] = []
    /// How many actions of each kind returned without error.
    private(set) var succeeded: [String: Int] = [:]
    let recovery: Recovery
    /// Called once, at the first error (e.g. to stop injecting faults).
    var onFirstError: () -> Void = {}
    private var stopped = false
    private var appInserts = 0

    init(template: ScenarioTemplate, files: ScenarioFiles, recovery: Recovery) {
        self.template = template
        self.files = files
        self.model = template.initialModel
        self.recovery = recovery
    }

    private func record(_ action: String, _ error: any Error) {
        if errors.isEmpty { onFirstError() }
        errors.append((action, error))
        switch error {
        case FerryError.misuse(let what): problems.append("\(action): untyped failure surfaced as misuse: \(what)")
        case FerryError.wrongKeyOrNotADatabase(let path):
            // The keys are right: an I/O fault must not look like a wrong key.
            problems.append("\(action): an I/O fault surfaced as a wrong key for \(path)")
        case is FerryError: break
        default: problems.append("\(action): error of type \(type(of: error)) instead of FerryError: \(error)")
        }
        if recovery == .reopen {
            stopped = true
            db?.close()
            db = nil
        }
    }

    /// Opens the database (registering the plan on first open).
    func open() {
        guard !stopped else { return }
        do {
            db = try template.open(files)
            succeeded["open", default: 0] += 1
        } catch {
            record("open", error)
        }
    }

    /// Runs one action on the open database (opening it first if an earlier open failed).
    func perform(_ action: String, _ body: (FerryDatabase) throws -> Void) {
        guard !stopped else { return }
        if db == nil { open() }
        guard let db else { return }
        do {
            try body(db)
            succeeded[action, default: 0] += 1
        } catch {
            record(action, error)
        }
    }

    func step() { perform("step") { _ = try $0.step() } }

    /// Steps until nothing is left (migration and cleanup), going on after failed steps.
    func stepUntilDone(limit: Int = 200) {
        for _ in 0..<limit {
            guard !stopped else { return }
            if db == nil { open() }
            guard let db else { return }
            do {
                if try db.step() == nil { return }
                succeeded["step", default: 0] += 1
            } catch {
                record("step", error)
            }
        }
        problems.append("the migration did not end within \(limit) steps")
    }

    /// An app write: `body` runs in `db.write { }`; `apply` changes the model only when the whole
    /// transaction returned without error.
    func write(_ action: String, _ body: @escaping (FerryConnection) throws -> [Int64],
               apply: @escaping (inout MessageModel, [Int64]) -> Void) {
        perform(action) { db in
            let expectedRowid = model.nextRowid
            let inserted = try db.write { try body($0) }
            if let first = inserted.first, first != expectedRowid {
                problems.append("\(action): inserted rowid \(first), the finished table would choose \(expectedRowid)")
            }
            apply(&model, inserted)
        }
    }

    /// Inserts one app row without an id (SQLite chooses the rowid).
    func insert(conversation: Int64) {
        appInserts += 1
        let body = "app \(appInserts)"
        write("insert") { db in
            try db.execute("INSERT INTO messages(conversation_id, body) VALUES (?, ?)", [.integer(conversation), .text(body)])
            return [db.lastInsertRowid]
        } apply: { model, ids in
            model.rows[ids[0]] = MessageRow(id: ids[0], conversation: conversation, body: body)
        }
    }

    /// Replaces (or inserts) the row with an explicit id.
    func replace(id: Int64, conversation: Int64) {
        appInserts += 1
        let body = "app \(appInserts)"
        write("replace") { db in
            try db.execute("INSERT OR REPLACE INTO messages(id, conversation_id, body) VALUES (?, ?, ?)",
                           [.integer(id), .integer(conversation), .text(body)])
            return []
        } apply: { model, _ in
            model.rows[id] = MessageRow(id: id, conversation: conversation, body: body)
        }
    }

    func appendToBody(ids: [Int64]) {
        write("update") { db in
            try db.execute("UPDATE messages SET body = body || '+' WHERE id IN (\(ids.map(String.init).joined(separator: ",")))")
            return []
        } apply: { model, _ in
            for id in ids { model.rows[id]?.body += "+" }
        }
    }

    func setConversation(_ conversation: Int64, ids: ClosedRange<Int64>) {
        write("update range") { db in
            try db.execute("UPDATE messages SET conversation_id = ? WHERE id BETWEEN ? AND ?",
                           [.integer(conversation), .integer(ids.lowerBound), .integer(ids.upperBound)])
            return []
        } apply: { model, _ in
            for id in ids { model.rows[id]?.conversation = conversation }
        }
    }

    func delete(ids: [Int64]) {
        write("delete") { db in
            try db.execute("DELETE FROM messages WHERE id IN (\(ids.map(String.init).joined(separator: ",")))")
            return []
        } apply: { model, _ in
            for id in ids { model.rows[id] = nil }
        }
    }

    /// Several statements in one transaction: all of them or none.
    func transaction(insert conversation: Int64, thenDelete id: Int64, thenAppendTo other: Int64) {
        appInserts += 1
        let body = "app \(appInserts)"
        write("transaction") { db in
            try db.execute("INSERT INTO messages(conversation_id, body) VALUES (?, ?)", [.integer(conversation), .text(body)])
            let rowid = db.lastInsertRowid
            try db.execute("DELETE FROM messages WHERE id = ?", [.integer(id)])
            try db.execute("UPDATE messages SET body = body || '+' WHERE id = ?", [.integer(other)])
            return [rowid]
        } apply: { model, ids in
            model.rows[ids[0]] = MessageRow(id: ids[0], conversation: conversation, body: body)
            model.rows[id] = nil
            model.rows[other]?.body += "+"
        }
    }

    /// A write that catches the error of its first statement and goes on, as apps do: when the
    /// write returns, the first statement's effect counts only if it did not throw.
    func catchingTransaction(appendTo ids: [Int64], thenInsert conversation: Int64) {
        appInserts += 1
        let body = "app \(appInserts)"
        write("catching transaction") { db in
            var appended = false
            do {
                try db.execute("UPDATE messages SET body = body || '*' WHERE id IN (\(ids.map(String.init).joined(separator: ",")))")
                appended = true
            } catch {}
            try db.execute("INSERT INTO messages(conversation_id, body) VALUES (?, ?)", [.integer(conversation), .text(body)])
            return [db.lastInsertRowid, appended ? 1 : 0]
        } apply: { model, values in
            if values[1] == 1 { for id in ids { model.rows[id]?.body += "*" } }
            model.rows[values[0]] = MessageRow(id: values[0], conversation: conversation, body: body)
        }
    }

    /// Reads the whole table through the migrating connection: when the read succeeds it must
    /// show exactly the model's rows, faults or not.
    func readAndCompare() {
        perform("read") { db in
            let rows = try db.read { c in try c.fetchAll("SELECT id, conversation_id, body FROM messages").map(MessageRow.init) }.sorted()
            if rows != model.sorted {
                problems.append("a read during the run saw \(rows.count) rows, expected \(model.rows.count): \(Self.difference(rows, model.sorted))")
            }
        }
    }

    /// Closes the database.
    func close() {
        db?.close()
        db = nil
    }

    /// A short description of how two multisets of rows differ.
    static func difference(_ seen: [MessageRow], _ expected: [MessageRow]) -> String {
        var counts: [MessageRow: Int] = [:]
        for row in seen { counts[row, default: 0] += 1 }
        for row in expected { counts[row, default: 0] -= 1 }
        let extra = counts.filter { $0.value > 0 }.keys.sorted().prefix(5)
        let missing = counts.filter { $0.value < 0 }.keys.sorted().prefix(5)
        return "extra or duplicated \(Array(extra)), missing \(Array(missing))"
    }

    // MARK: Checking

    /// After the run: every file passes `integrity_check`; reopened without faults, the app sees
    /// exactly the model's rows and nothing is quarantined; the migration and cleanup complete;
    /// the rows are still exactly the model's; the source keeps only the rows outside the filter
    /// (and its table is dropped when the plan has no filter). Returns the problems found.
    func check() -> [String] {
        close()
        var problems = self.problems
        do {
            for (path, cipher) in [(files.app, template.targetCipher), (files.legacy, template.sourceCipher)] {
                let raw = try Connection(path: path, configuration: .init(createIfMissing: false, cipher: cipher))
                let integrity = try raw.scalar("PRAGMA integrity_check", as: String.self)
                if integrity != "ok" { problems.append("integrity_check of \(path): \(integrity ?? "nil")") }
                raw.close()
            }
            let db = try FerryDatabase(path: files.app, configuration: .init(cipher: template.targetCipher), plan: template.plan(files),
                                       options: template.options)
            defer { db.close() }
            let before = try db.read { c in try c.fetchAll("SELECT id, conversation_id, body FROM messages").map(MessageRow.init) }.sorted()
            if before != model.sorted {
                problems.append("after reopening, the app sees \(before.count) rows, expected \(model.rows.count): \(Self.difference(before, model.sorted))")
            }
            try db.migrateAllBlocking()
            if try !db.isMigrated { problems.append("the migration did not complete") }
            let after = try db.read { c in try c.fetchAll("SELECT id, conversation_id, body FROM messages").map(MessageRow.init) }.sorted()
            if after != model.sorted {
                problems.append("after the migration completed, the app sees \(after.count) rows, expected \(model.rows.count): \(Self.difference(after, model.sorted))")
            }
            let (quarantineTables, quarantined, uncleaned) = try db.pool.read { c in
                (try c.scalar("SELECT count(*) FROM sqlite_master WHERE name LIKE 'ferry_quarantine%'", as: Int.self) ?? -1,
                 try c.scalar("SELECT total(rows_quarantined) FROM ferry_migration_tables", as: Int.self) ?? -1,
                 try c.scalar("SELECT count(*) FROM ferry_migration_tables WHERE state != 'finished' OR source_cleaned = 0", as: Int.self) ?? -1)
            }
            if quarantineTables != 0 || quarantined != 0 { problems.append("rows quarantined: \(quarantined) in \(quarantineTables) table(s)") }
            if uncleaned != 0 { problems.append("\(uncleaned) table(s) not finished and cleaned") }
            db.close()
            let source = try Connection(path: files.legacy, configuration: .init(createIfMissing: false, cipher: template.sourceCipher))
            defer { source.close() }
            let tableLeft = try source.scalar("SELECT count(*) FROM sqlite_master WHERE name = 'messages'", as: Int.self) == 1
            let rowsLeft = tableLeft ? try source.scalar("SELECT count(*) FROM messages", as: Int.self) ?? -1 : 0
            if template.filter == nil && tableLeft {
                problems.append("the source table was not dropped (\(rowsLeft) rows left)")
            } else if rowsLeft != template.rowsOutsideFilter {
                problems.append("the source holds \(rowsLeft) rows, expected the \(template.rowsOutsideFilter) outside the filter")
            }
            for (path, cipher) in [(files.app, template.targetCipher), (files.legacy, template.sourceCipher)] {
                let raw = try Connection(path: path, configuration: .init(createIfMissing: false, cipher: cipher))
                let integrity = try raw.scalar("PRAGMA integrity_check", as: String.self)
                if integrity != "ok" { problems.append("integrity_check of \(path) after completion: \(integrity ?? "nil")") }
                raw.close()
            }
        } catch {
            problems.append("recovery failed: \(error)")
        }
        return problems
    }
}
