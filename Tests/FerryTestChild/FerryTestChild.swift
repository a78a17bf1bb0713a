import Foundation
@_spi(Benchmarks) import Ferry

/// The second process of the crash and ownership tests (Tests/FerryTests: CrashTests,
/// OwnershipTests), started by them and never a test itself:
///
///     ferry-test-child crash APP LEGACY          step and write until killed
///     ferry-test-child ownership APP LEGACY      open the target, migrate, report
///     ferry-test-child ownership APP LEGACY hold open the target, report, wait until killed
///
/// Report lines start with `FERRY-CHILD` and are written unbuffered.
@main
struct FerryTestChild {
    static func main() throws {
        let arguments = CommandLine.arguments.dropFirst()
        guard arguments.count >= 3 else {
            FileHandle.standardError.write(Data("usage: ferry-test-child crash|ownership APP LEGACY [unfiltered|hold]\n".utf8))
            exit(2)
        }
        let (mode, app, legacy) = (arguments[arguments.startIndex], arguments[arguments.startIndex + 1], arguments[arguments.startIndex + 2])
        switch mode {
        case "crash": try crash(app: app, legacy: legacy, filtered: arguments.dropFirst(3).first != "unfiltered")
        case "ownership": ownership(app: app, legacy: legacy, hold: arguments.count > 3)
        default: exit(2)
        }
    }

    /// Steps the migration and commits numbered app rows, until killed (the plan of `CrashTests`).
    static func crash(app: String, legacy: String, filtered: Bool) throws {
        let plan = MigrationPlan(sources: [MigrationSource(.file(legacy), tables: [
            TableMapping(target: "messages", source: "messages", filter: filtered ? "conversation_id <> 2" : nil),
        ])])
        let sourceRows = 20_000
        let db = try FerryDatabase(path: app, plan: plan)
        var next = try db.read { try $0.scalar("SELECT count(*) FROM messages WHERE body LIKE 'app %'", as: Int.self) } ?? 0
        report("ready \(next)")
        while true {
            try db.step(budget: .milliseconds(2))
            try db.write { try $0.execute("INSERT INTO messages(conversation_id, body) VALUES (7, ?)", [.text("app \(next)")]) }
            next += 1
            try db.write { try $0.execute("UPDATE messages SET body = body || '.' WHERE id = ? AND body NOT LIKE 'app %'", [next * 37 % sourceRows + 1]) }
        }
    }

    /// Opens the target and reports what happened; with `hold`, keeps it open until killed,
    /// otherwise migrates what it can (the plan and batches of `OwnershipTests`).
    static func ownership(app: String, legacy: String, hold: Bool) {
        let plan = MigrationPlan(sources: [MigrationSource(.file(legacy), tables: [TableMapping(target: "messages", source: "messages")])])
        var options = FerryDatabase.Options()
        options.fixedBatchRows = 100
        do {
            let db = try FerryDatabase(path: app, configuration: .init(busyTimeout: .milliseconds(300)), plan: plan, options: options)
            report("opened")
            if hold {
                while true { Thread.sleep(forTimeInterval: 1) }
            }
            let moved = try db.migrateAllBlocking()
            report("migrated \(moved)")
            db.close()
        } catch FerryError.migrationOwnedByAnotherProcess(let path) {
            report("refused \(path)")
        } catch {
            report("failed \(error)")
        }
    }

    /// A line for the parent, written at once.
    static func report(_ text: String) {
        FileHandle.standardOutput.write(Data("FERRY-CHILD \(text)\n".utf8))
    }
}
