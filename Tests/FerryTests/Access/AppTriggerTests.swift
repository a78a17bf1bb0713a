import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@testable import Ferry

/// The app's triggers on a migrating table fire for the app's writes exactly as on the finished
/// table, and never for Ferry's own moves (stepper batches, the moves ahead of an app write, the
/// redirect triggers' moves). Each scenario compares a log the triggers write with the finished
/// table's (an oracle database), on every placement, with the triggers declared before the plan
/// registers or created while the table migrates.
@Suite(.timeLimit(.minutes(3)))
struct AppTriggerTests {
    typealias Pair = SchemaStatementTests.Pair
    typealias Placement = SchemaStatementTests.Placement

    static let rows = SchemaStatementTests.rows

    /// A log table and a trigger for every event and timing (the BEFORE INSERT one with a WHEN).
    static let logSchema = [
        "CREATE TABLE log(event TEXT, id INTEGER, a INTEGER)",
    ]
    static let triggers = [
        "CREATE TRIGGER t_ai AFTER INSERT ON t BEGIN INSERT INTO log VALUES ('ai', NEW.id, NEW.a); END",
        "CREATE TRIGGER t_bi BEFORE INSERT ON t WHEN NEW.a > 0 OR NEW.a IS NULL BEGIN INSERT INTO log VALUES ('bi', NEW.id, NEW.a); END",
        "CREATE TRIGGER t_au AFTER UPDATE OF a ON t BEGIN INSERT INTO log VALUES ('au', NEW.id, NEW.a); END",
        "CREATE TRIGGER t_ad AFTER DELETE ON t BEGIN INSERT INTO log VALUES ('ad', OLD.id, OLD.a); END",
    ]

    /// The app's writes: a plain insert, an insert replacing a pending row, an upsert over a
    /// pending row, updates and a delete reaching pending rows, an insert with an automatic rowid.
    static let writes = [
        "INSERT INTO t(id, a, b) VALUES (100, 1, 'new')",
        "INSERT OR REPLACE INTO t(id, a, b) VALUES (5, 500, 'replaced')",
        "INSERT INTO t(id, a) VALUES (6, 600) ON CONFLICT(id) DO UPDATE SET a = excluded.a + 1",
        "UPDATE t SET a = a + 1 WHERE id IN (2, 4)",
        "UPDATE t SET b = 'b only' WHERE id = 3",
        "DELETE FROM t WHERE id = 1",
        "INSERT INTO t(a, b) VALUES (7, 'auto')",
    ]

    func sameLog(_ pair: Pair, sourceLocation: SourceLocation = #_sourceLocation) {
        pair.same("SELECT event, id, a FROM log ORDER BY event, id, a", sourceLocation: sourceLocation)
    }

    /// Expects each of `triggers` stored as the app wrote it, on the migrated database and the oracle.
    func expectAsWritten(_ pair: Pair, sourceLocation: SourceLocation = #_sourceLocation) throws {
        for trigger in Self.triggers {
            let name = String(trigger.split(separator: " ")[2])
            let sql = "SELECT sql FROM sqlite_master WHERE name = ?"
            let stored = try pair.db.read { db throws(FerryError) in try db.fetchOne(sql, [.text(name)])?.values }
            #expect(stored == [.text(trigger)], sourceLocation: sourceLocation)
            #expect(try pair.oracle.fetchOne(sql, [.text(name)])?.values == [.text(trigger)], sourceLocation: sourceLocation)
        }
    }

    @Test(arguments: Placement.available, [false, true])
    func triggersDeclaredBeforeTheMigrationFireForTheAppsWritesAlone(placement: Placement, stepFirst: Bool) throws {
        let pair = try Pair(placement: placement, rows: Self.rows, appSchema: Self.logSchema + Self.triggers, stepFirst: stepFirst)
        sameLog(pair)
        for write in Self.writes {
            pair.same(write)
            sameLog(pair)
        }
        try pair.db.step()
        sameLog(pair)
        try pair.finish()
        sameLog(pair)
        // Finished: the triggers read as the app wrote them, and still fire.
        try expectAsWritten(pair)
        pair.same("INSERT INTO t(id, a) VALUES (200, 2)")
        sameLog(pair)
    }

    @Test(arguments: Placement.available, [false, true])
    func triggersCreatedWhileTheTableMigratesFireForTheAppsWritesAlone(placement: Placement, stepFirst: Bool) throws {
        let pair = try Pair(placement: placement, rows: Self.rows, appSchema: Self.logSchema, stepFirst: stepFirst)
        for trigger in Self.triggers { #expect(!pair.same(trigger).hasPrefix("error")) }
        // The guard is Ferry's: the app reads its own condition back once the table finished.
        let stored = try pair.db.read { db throws(FerryError) in try db.fetchAll("SELECT sql FROM sqlite_master WHERE name = 't_ai'") }
        #expect("\(stored)".contains("ferry_migration_guard"))
        // Statements and steps interleaved, some inside one transaction with the trigger's creation.
        pair.same(Self.writes[0])
        try pair.db.step()
        for write in Self.writes.dropFirst() {
            pair.same(write)
            sameLog(pair)
        }
        try pair.finish()
        sameLog(pair)
        try expectAsWritten(pair)
    }

    @Test(arguments: Placement.available)
    func aTriggerCreatedInTheWriteThatMovesRowsFiresForThatWriteAlone(placement: Placement) throws {
        let pair = try Pair(placement: placement, rows: Self.rows, appSchema: Self.logSchema, stepFirst: false)
        let script = Self.triggers + ["UPDATE t SET a = -a WHERE id > 2", "INSERT INTO t(id, a) VALUES (3, 33) ON CONFLICT DO NOTHING",
                                      "INSERT OR REPLACE INTO t(id, a) VALUES (4, 44)"]
        try pair.runInOneTransaction(script)
        sameLog(pair)
        try pair.finish()
        sameLog(pair)
    }

    @Test(arguments: Placement.available)
    func aValidatingTriggerDoesNotRefuseTheRowsFerryMoves(placement: Placement) throws {
        // The legacy rows predate the rule: on the finished table they are simply there.
        let rows = Self.rows.map { ($0.0, -$0.1, $0.2, $0.3) }
        let rule = "CREATE TRIGGER t_rule BEFORE INSERT ON t WHEN NEW.a < 0 BEGIN SELECT RAISE(ABORT, 'a must not be negative'); END"
        let pair = try Pair(placement: placement, rows: rows, appSchema: [rule], stepFirst: true)
        #expect(pair.same("INSERT INTO t(id, a) VALUES (50, -1)").contains("a must not be negative"))
        pair.same("UPDATE t SET c = c + 1 WHERE a < -20")  // moves pending rows
        #expect(pair.same("INSERT OR REPLACE INTO t(id, a) VALUES (6, -6)").contains("a must not be negative"))
        try pair.finish()
        #expect(pair.same("INSERT INTO t(id, a) VALUES (51, -1)").contains("a must not be negative"))
    }

    @Test(arguments: Placement.available)
    func aTriggerDroppedOrReplacedWhileTheTableMigratesStaysAsTheAppLeftIt(placement: Placement) throws {
        let pair = try Pair(placement: placement, rows: Self.rows, appSchema: Self.logSchema + Self.triggers, stepFirst: true)
        pair.same("DROP TRIGGER t_ai")
        pair.same("DROP TRIGGER t_bi")
        let replacement = "CREATE TRIGGER t_bi AFTER INSERT ON t BEGIN INSERT INTO log VALUES ('new', NEW.id, NEW.a); END"
        pair.same(replacement)
        pair.same("INSERT INTO t(id, a) VALUES (5, 5) ON CONFLICT DO NOTHING")
        pair.same("INSERT INTO t(id, a) VALUES (101, 5)")
        sameLog(pair)
        try pair.finish()
        sameLog(pair)
        pair.same("SELECT name, sql FROM sqlite_master WHERE type = 'trigger' ORDER BY name")
        let records = try pair.db.pool.read { try $0.scalar("SELECT count(*) FROM ferry_migration_triggers", as: Int.self) }
        #expect(records == 0)
    }

    @Test(arguments: Placement.available)
    func guardedTriggersSurviveAReopen(placement: Placement) throws {
        let pair = try Pair(placement: placement, rows: Self.rows, appSchema: Self.logSchema + Self.triggers, stepFirst: true)
        let reopened = try pair.reopen()
        try reopened.write { db throws(FerryError) in try db.execute("INSERT INTO t(id, a) VALUES (5, 55) ON CONFLICT DO NOTHING") }
        try reopened.migrateAllBlocking()
        let log = try reopened.read { db throws(FerryError) in try db.fetchAll("SELECT event, id FROM log ORDER BY event, id").map(\.values) }
        // The app's insert hit pending row 5 (an upsert that did nothing): only BEFORE INSERT fired.
        #expect(log == [[.text("bi"), .integer(5)]])
        let sql = try reopened.read { db throws(FerryError) in try db.fetchOne("SELECT sql FROM sqlite_master WHERE name = 't_ai'")?.values }
        #expect(sql == [.text(Self.triggers[0])])
        reopened.close()
    }

    @Test(arguments: Placement.available)
    func aTempTriggerOnTheWriterIsGuardedToo(placement: Placement) throws {
        let pair = try Pair(placement: placement, rows: Self.rows, appSchema: Self.logSchema, stepFirst: false)
        let trigger = "CREATE TEMP TRIGGER t_tmp AFTER INSERT ON t BEGIN INSERT INTO log VALUES ('tmp', NEW.id, NEW.a); END"
        let script = [trigger, "UPDATE t SET a = 0 WHERE id > 3", "INSERT INTO t(id, a) VALUES (99, 9)", "DROP TRIGGER t_tmp"]
        try pair.runInOneTransaction(script)
        sameLog(pair)
        try pair.finish()
        sameLog(pair)
    }

    /// A trigger created while `t` migrates whose body reads or writes `t` gets Ferry's calls as a
    /// trigger declared before does (its body then meets the finished table), in the transaction
    /// that creates it and after; the app's text is back once `t` finished.
    @Test(arguments: Placement.available)
    func aTriggerCreatedWhileMigratingWhoseBodyNamesTheTable(placement: Placement) throws {
        let pair = try Pair(placement: placement, rows: Self.rows, appSchema: Self.logSchema + ["CREATE TABLE ops(id INTEGER)"], stepFirst: true)
        let created = [
            "CREATE TRIGGER t_count AFTER INSERT ON t BEGIN INSERT INTO log SELECT 'n', count(*), NEW.id FROM t; END",
            "CREATE TRIGGER ops_touch AFTER INSERT ON ops BEGIN UPDATE t SET c = 0 WHERE id = NEW.id; END",
            "CREATE TRIGGER ops_self AFTER INSERT ON ops BEGIN UPDATE t SET c = (SELECT max(c) FROM t) + 1 WHERE id = NEW.id + 1; END",
            "CREATE TRIGGER t_when AFTER INSERT ON t WHEN (SELECT max(a) FROM t WHERE id < NEW.id) > 50 BEGIN INSERT INTO log VALUES ('when', NEW.id, 0); END",
        ]
        try pair.runInOneTransaction([created[0], "INSERT INTO t(id, a) VALUES (90, 9)"])
        sameLog(pair)
        pair.same(created[1])
        pair.same(created[2])
        pair.same(created[3])
        for write in ["INSERT INTO ops VALUES (5)", "INSERT INTO t(id, a) VALUES (91, 9)", "INSERT INTO ops VALUES (6)"] {
            pair.same(write)
            sameLog(pair)
            try pair.sameTable()
        }
        try pair.finish()
        sameLog(pair)
        pair.same("SELECT name, sql FROM sqlite_master WHERE type = 'trigger' ORDER BY name")
    }

    /// What the calls cannot cover would run inside SQLite and see the moved rows alone: refused.
    @Test(arguments: Placement.available)
    func aTriggerWhoseReadOfAMigratingTableRunsInsideSQLiteIsRefused(placement: Placement) throws {
        let pair = try Pair(placement: placement, rows: Self.rows, appSchema: Self.logSchema, stepFirst: true)
        for trigger in [
            "CREATE TRIGGER t_raise BEFORE INSERT ON log BEGIN SELECT CASE WHEN (SELECT count(*) FROM t) > 3 THEN RAISE(ABORT, 'full') END; END",
        ] {
            do {
                try pair.db.write { db throws(FerryError) in try db.execute(trigger) }
                Issue.record("accepted: \(trigger)")
            } catch {
                guard case .unsupportedDuringMigration(let table, _, let reason) = error else { Issue.record("\(error)"); continue }
                #expect(table == "t")
                #expect(reason.contains("trigger"))
            }
        }
        let triggers = try pair.db.read { db throws(FerryError) in try db.fetchAll("SELECT name FROM sqlite_master WHERE type = 'trigger'") }
        #expect(triggers.isEmpty)
        try pair.finish()
    }
}
