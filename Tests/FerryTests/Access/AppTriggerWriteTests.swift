import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@testable import Ferry

/// The app's triggers declared before a table started migrating, whose body updates or deletes
/// its rows, reach its pending rows as on the finished table: each scenario compares the table
/// with the finished one (an oracle database) after every write, on every placement, before and
/// after steps, inside a transaction, across a reopen, and the triggers read as the app wrote them
/// once the table finished.
@Suite(.timeLimit(.minutes(3)))
struct AppTriggerWriteTests {
    typealias Pair = SchemaStatementTests.Pair
    typealias Placement = SchemaStatementTests.Placement

    static let rows = SchemaStatementTests.rows

    /// Triggers of another table (`ops`) and of `t` itself that write `t`.
    static let triggers = [
        "CREATE TRIGGER ops_set AFTER INSERT ON ops WHEN NEW.kind = 'set' BEGIN\n  UPDATE t SET a = NEW.value WHERE id = NEW.id;\nEND",
        "CREATE TRIGGER ops_drop AFTER INSERT ON ops WHEN NEW.kind = 'drop' BEGIN INSERT INTO log VALUES (NEW.id); DELETE FROM t WHERE id = NEW.id OR a > NEW.value; END",
        "CREATE TRIGGER ops_undo AFTER DELETE ON ops BEGIN UPDATE t SET c = c + 1 WHERE id >= OLD.id; END",
        "CREATE TRIGGER t_next AFTER UPDATE OF a ON t WHEN NEW.a < 1000 BEGIN UPDATE t SET b = 'after ' || NEW.id WHERE id = NEW.id + 1; END",
    ]
    static let appSchema = ["CREATE TABLE ops(id INTEGER, kind TEXT, value INTEGER)", "CREATE TABLE log(id INTEGER)"] + triggers

    static let writes = [
        "INSERT INTO ops VALUES (3, 'set', 333)",
        "INSERT INTO ops VALUES (6, 'drop', 10000)",
        "DELETE FROM ops WHERE id = 3",
        "UPDATE t SET a = 7 WHERE id = 4",
        "INSERT INTO ops VALUES (1, 'drop', 55)",
    ]

    func sameEverywhere(_ pair: Pair, sourceLocation: SourceLocation = #_sourceLocation) throws {
        try pair.sameTable(sourceLocation: sourceLocation)
        pair.same("SELECT id FROM log ORDER BY id", sourceLocation: sourceLocation)
    }

    /// Expects `triggers` (by default the scenario's) stored as the app wrote them.
    func expectAsWritten(_ pair: Pair, _ triggers: [String] = Self.triggers, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let stored = try pair.db.read { db throws(FerryError) in
            try db.fetchAll("SELECT sql FROM sqlite_master WHERE type = 'trigger' ORDER BY name").map(\.values)
        }
        #expect(stored == triggers.sorted { $0.split(separator: " ")[2] < $1.split(separator: " ")[2] }.map { [.text($0)] },
                sourceLocation: sourceLocation)
    }

    /// Expects the triggers stored as the oracle (the finished database) stores them.
    func sameTriggers(_ pair: Pair, sourceLocation: SourceLocation = #_sourceLocation) {
        pair.same("SELECT name, sql FROM sqlite_master WHERE type = 'trigger' ORDER BY name", sourceLocation: sourceLocation)
    }

    @Test(arguments: Placement.available, [false, true])
    func aTriggerThatWritesTheMigratingTableReachesItsPendingRows(placement: Placement, stepFirst: Bool) throws {
        let pair = try Pair(placement: placement, rows: Self.rows, appSchema: Self.appSchema, stepFirst: stepFirst)
        for write in Self.writes {
            pair.same(write)
            try sameEverywhere(pair)
        }
        try pair.db.step()
        pair.same("INSERT INTO ops VALUES (2, 'set', 22)")
        try sameEverywhere(pair)
        try pair.finish()
        try sameEverywhere(pair)
        // Finished: the triggers read as the app wrote them, and still write the table.
        try expectAsWritten(pair)
        pair.same("INSERT INTO ops VALUES (2, 'set', 23)")
        try sameEverywhere(pair)
    }

    /// A source without rowid (its rows found by key), and a target that compares `b` under
    /// NOCASE where the source compares it under BINARY: the trigger's DELETE picks the pending
    /// rows under the finished table's collation.
    @Test(arguments: Placement.available)
    func aSourceWithoutRowidAndAReshapedTarget(placement: Placement) throws {
        let byB = "CREATE TRIGGER ops_drop_b AFTER INSERT ON ops WHEN NEW.kind = 'b' BEGIN DELETE FROM t WHERE b = NEW.b; END"
        let schema = ["CREATE TABLE ops(id INTEGER, kind TEXT, value INTEGER, b TEXT)", "CREATE TABLE log(id INTEGER)", byB] + Self.triggers
        let rows = Self.rows + [(7, 70, "X", 7), (8, 80, "Z", 8)]
        for (sourceOptions, targetCollation) in [("WITHOUT ROWID", nil), ("", "COLLATE NOCASE")] as [(String, String?)] {
            let pair = try Pair(placement: placement, rows: rows, targetBCollation: targetCollation, appSchema: schema,
                                sourceOptions: sourceOptions, stepFirst: true)
            for write in ["INSERT INTO ops VALUES (7, 'set', 777, NULL)", "INSERT INTO ops VALUES (0, 'b', 0, 'x')",
                          "INSERT INTO ops VALUES (0, 'b', 0, 'z')", "INSERT INTO ops VALUES (2, 'drop', 75, NULL)"] {
                pair.same(write)
                try sameEverywhere(pair)
            }
            try pair.finish()
        }
    }

    /// Triggers whose body reads `t` (a subquery, an INSERT ... SELECT, an IN list, a view over
    /// `t`), declared before the migration: what they read is the finished table's, pending rows
    /// included, and the triggers fire in the order they do there. (In SQL order: without ORDER
    /// BY, rows come in another order while migrating, see Limitations.)
    static let readingTriggers = [
        "CREATE TRIGGER ops_count AFTER INSERT ON ops WHEN NEW.kind = 'count' BEGIN INSERT INTO log VALUES ((SELECT count(*) FROM t WHERE a >= NEW.value)); END",
        "CREATE TRIGGER ops_copy AFTER INSERT ON ops WHEN NEW.kind = 'copy' BEGIN INSERT INTO log SELECT id FROM t WHERE id > NEW.value ORDER BY id;\n  INSERT INTO log VALUES (-NEW.id); END",
        "CREATE TRIGGER ops_plain AFTER INSERT ON ops BEGIN INSERT INTO log VALUES (3000 + NEW.id); END",  // no call: fires in its place
        "CREATE TRIGGER ops_view AFTER INSERT ON ops WHEN NEW.kind = 'view' BEGIN INSERT INTO log SELECT n FROM t_sum; END",
        "CREATE TRIGGER ops_prune AFTER UPDATE OF value ON ops BEGIN DELETE FROM log WHERE id IN (SELECT a FROM t WHERE c = NEW.value); END",
        "CREATE TRIGGER t_total AFTER UPDATE OF a ON t BEGIN UPDATE totals SET n = (SELECT sum(a) FROM t); END",
        "CREATE TRIGGER ops_self AFTER INSERT ON ops WHEN NEW.kind = 'count' BEGIN UPDATE t SET c = (SELECT max(c) FROM t) + NEW.id WHERE id = NEW.id + 1; END",
        "CREATE TRIGGER ops_limit BEFORE INSERT ON ops WHEN NEW.kind = 'limit' BEGIN SELECT RAISE(ABORT, 'too many') WHERE (SELECT count(*) FROM t WHERE a > NEW.value) > 3; END",
        "CREATE TRIGGER ops_skip BEFORE INSERT ON ops WHEN NEW.kind = 'skip' BEGIN SELECT RAISE(IGNORE) FROM t WHERE a = NEW.value; END",
        "CREATE TRIGGER ops_when AFTER INSERT ON ops WHEN (SELECT count(*) FROM t WHERE a > NEW.value) > 2 BEGIN INSERT INTO log VALUES (1000 + NEW.id); END",
        "CREATE TRIGGER ops_when_run AFTER INSERT ON ops WHEN NEW.value < (SELECT max(a) FROM t) BEGIN INSERT INTO log SELECT 2000 + count(*) FROM t; END",
    ]
    static let readingSchema = ["CREATE TABLE ops(id INTEGER, kind TEXT, value INTEGER)", "CREATE TABLE log(id INTEGER)",
                                "CREATE TABLE totals(n INTEGER)", "INSERT INTO totals VALUES (0)",
                                "CREATE VIEW t_sum AS SELECT count(*) * 1000 + sum(a) AS n FROM t"] + readingTriggers
    static let reads = [
        "INSERT INTO ops VALUES (1, 'count', 25)",
        "INSERT INTO ops VALUES (2, 'copy', 2)",
        "INSERT INTO ops VALUES (3, 'view', 0)",
        "INSERT INTO log VALUES (30), (50)",
        "UPDATE ops SET value = 5 WHERE id = 1",  // c = 5: row 5, a = 50
        "UPDATE t SET a = a + 1 WHERE id = 2",
        "INSERT INTO ops VALUES (4, 'count', 0)",
        "INSERT INTO ops VALUES (8, 'limit', 0)",  // refused: 6 rows above 0
        "INSERT INTO ops VALUES (8, 'limit', 35)",  // 3 rows above 35 (and 51): accepted
        "INSERT INTO ops VALUES (8, 'skip', 60)",  // skipped: a (pending) row holds 60
        "INSERT INTO ops VALUES (8, 'skip', 61)",
    ]

    func sameReads(_ pair: Pair, sourceLocation: SourceLocation = #_sourceLocation) throws {
        try pair.sameTable(sourceLocation: sourceLocation)
        pair.same("SELECT id FROM log ORDER BY rowid", sourceLocation: sourceLocation)
        pair.same("SELECT n FROM totals", sourceLocation: sourceLocation)
        pair.same("SELECT * FROM ops ORDER BY rowid", sourceLocation: sourceLocation)  // what RAISE let in
    }

    @Test(arguments: Placement.available, [false, true])
    func aTriggerThatReadsTheMigratingTableSeesItsPendingRows(placement: Placement, stepFirst: Bool) throws {
        let pair = try Pair(placement: placement, rows: Self.rows, appSchema: Self.readingSchema, stepFirst: stepFirst)
        for read in Self.reads {
            pair.same(read)
            try sameReads(pair)
        }
        // changes() and the last rowid of the app's statement are the finished table's.
        pair.same("INSERT INTO ops VALUES (9, 'copy', 0) RETURNING id, changes(), last_insert_rowid()")
        let rowid = try pair.db.write { db throws(FerryError) in db.lastInsertRowid }
        #expect(rowid == pair.oracle.lastInsertRowid)
        try pair.db.step()
        pair.same("INSERT INTO ops VALUES (5, 'view', 0)")
        try sameReads(pair)
        try pair.runInOneTransaction(["INSERT INTO ops VALUES (6, 'count', 0)", "UPDATE t SET a = 1 WHERE id = 6", "INSERT INTO ops VALUES (7, 'copy', 3)"])
        try sameReads(pair)
        // The app cannot call the procedure itself.
        #expect { try pair.db.write { try $0.execute("SELECT ferry_trigger_run('main', 'ops_count', 0, 1)") } } throws: { error in
            if case FerryError.accessDenied? = error as? FerryError { return true }
            return false
        }
        try pair.finish()
        try sameReads(pair)
        // Finished: the triggers read as the app wrote them.
        try expectAsWritten(pair, Self.readingTriggers)
    }

    /// ALTER TABLE while the calls stand in for the app's statements: SQLite renames within the
    /// app's text (a table the body writes, a column of the migrating table it reads), and refuses
    /// to drop a column a trigger reads, as on the finished database.
    @Test(arguments: Placement.available)
    func schemaChangesMeetTheAppsTriggerText(placement: Placement) throws {
        let pair = try Pair(placement: placement, rows: Self.rows, appSchema: Self.readingSchema, stepFirst: true)
        pair.same("ALTER TABLE log RENAME TO journal")
        pair.same("INSERT INTO ops VALUES (1, 'count', 25)")
        pair.same("ALTER TABLE t RENAME COLUMN c TO c2")
        pair.same("UPDATE ops SET value = 4 WHERE id = 1")
        #expect(pair.same("ALTER TABLE t DROP COLUMN c2").contains("error"))
        try pair.runInOneTransaction(["ALTER TABLE journal RENAME TO log2", "INSERT INTO ops VALUES (2, 'copy', 3)"])
        pair.same("SELECT id FROM log2 ORDER BY rowid")
        try pair.db.migrateAllBlocking()
        pair.same("SELECT id, a, b, c2 FROM t ORDER BY id")
        sameTriggers(pair)
    }

    /// A trigger whose replaced statement writes the trigger's own table: SQLite does not fire a
    /// trigger again from its own body (recursive triggers are off, as Ferry keeps them while
    /// tables migrate), and the statement run by Ferry's call does not either (it would recurse
    /// without end), nor do the trigger's other statements run again.
    @Test(arguments: Placement.available)
    func aReplacedStatementDoesNotFireItsOwnTriggerAgain(placement: Placement) throws {
        let again = "CREATE TRIGGER ops_again AFTER INSERT ON ops WHEN NEW.kind = 'again' BEGIN "
            + "INSERT INTO ops SELECT NEW.id + 1, 'again', NEW.value FROM t WHERE id = NEW.value AND NEW.id < 20; END"
        let mixed = "CREATE TRIGGER ops_mixed AFTER INSERT ON ops WHEN NEW.kind = 'mixed' BEGIN INSERT INTO log VALUES (NEW.id); "
            + "INSERT INTO ops SELECT NEW.id + 1, 'mixed', NEW.value FROM t WHERE id = NEW.value AND NEW.id < 20; END"
        let pair = try Pair(placement: placement, rows: Self.rows, appSchema: Self.readingSchema + [again, mixed], stepFirst: true)
        pair.same("INSERT INTO ops VALUES (1, 'again', 5)")
        pair.same("INSERT INTO ops VALUES (1, 'mixed', 6)")
        pair.same("SELECT * FROM ops ORDER BY rowid")
        try sameReads(pair)
        try pair.runInOneTransaction(["INSERT INTO ops VALUES (10, 'again', 4)", "INSERT INTO ops VALUES (15, 'mixed', 3)"])
        pair.same("SELECT * FROM ops ORDER BY rowid")
        try sameReads(pair)
        try pair.finish()
        pair.same("INSERT INTO ops VALUES (16, 'mixed', 2)")
        try sameReads(pair)
    }

    /// A schema migration that renames a table the triggers write, while `t` migrates: its ALTER
    /// TABLE meets the app's trigger text too, and the triggers keep reading the finished table.
    @Test(arguments: Placement.available)
    func aSchemaMigrationRenamesWithinTheAppsTriggerText(placement: Placement) throws {
        let pair = try Pair(placement: placement, rows: Self.rows, appSchema: Self.readingSchema, stepFirst: true)
        var migrator = SchemaMigrator()
        try migrator.registerMigration("v1", sql: "ALTER TABLE log RENAME TO journal")
        try pair.db.migrateSchema(migrator)
        try pair.oracle.execute("ALTER TABLE log RENAME TO journal")
        pair.same("INSERT INTO ops VALUES (1, 'copy', 2)")
        pair.same("INSERT INTO ops VALUES (2, 'count', 25)")
        pair.same("SELECT id FROM journal ORDER BY rowid")
        try pair.db.migrateAllBlocking()
        sameTriggers(pair)
    }

    @Test(arguments: Placement.available)
    func inOneTransaction(placement: Placement) throws {
        let pair = try Pair(placement: placement, rows: Self.rows, appSchema: Self.appSchema, stepFirst: false)
        try pair.runInOneTransaction(Self.writes)
        try sameEverywhere(pair)
        try pair.finish()
        try expectAsWritten(pair)
    }

    @Test(arguments: Placement.available)
    func theTriggersKeepReachingPendingRowsAfterAReopen(placement: Placement) throws {
        let pair = try Pair(placement: placement, rows: Self.rows, appSchema: Self.appSchema, stepFirst: true)
        pair.db.close()
        let db = try pair.reopen()
        try db.write { db throws(FerryError) in try db.execute("INSERT INTO ops VALUES (5, 'set', 555)") }
        try pair.oracle.execute("INSERT INTO ops VALUES (5, 'set', 555)")
        let rows = try db.read { db throws(FerryError) in try db.fetchAll("SELECT id, a, b, c FROM t ORDER BY id").map(\.values) }
        #expect(rows == (try pair.oracle.fetchAll("SELECT id, a, b, c FROM t ORDER BY id").map(\.values)))
        try db.migrateAllBlocking()
        let stored = try db.read { db throws(FerryError) in try db.fetchAll("SELECT sql FROM sqlite_master WHERE name = 'ops_set'").map(\.values) }
        #expect(stored == [[.text(Self.triggers[0])]])
        db.close()
    }

    /// Ferry records the app's text when it adds its calls and puts that text back: a call of the
    /// procedure the app wrote into its own trigger is the app's text, and stays.
    @Test(arguments: Placement.available)
    func aCallTheAppWroteStaysInItsTrigger(placement: Placement) throws {
        // On a table the writes below leave alone: the oracle has no such function.
        let own = "CREATE TRIGGER quiet_own AFTER INSERT ON quiet BEGIN SELECT ferry_trigger_moves('main', 'quiet_own', 0); DELETE FROM t WHERE id = NEW.id; END"
        let pair = try Pair(placement: placement, rows: Self.rows, appSchema: Self.appSchema + ["CREATE TABLE quiet(id INTEGER)", own], stepFirst: true)
        let recorded = try pair.db.read { db throws(FerryError) in
            try db.fetchAll("SELECT name, app_sql FROM ferry_migration_trigger_writes ORDER BY name").map(\.values)
        }
        #expect(recorded.count == 5)
        #expect(recorded.contains([.text("quiet_own"), .text(own)]))
        let stored = try pair.db.read { db throws(FerryError) in try db.scalar("SELECT sql FROM sqlite_master WHERE name = 'quiet_own'", as: String.self) }
        #expect(stored == own.replacingOccurrences(of: "; DELETE", with: "; SELECT ferry_trigger_moves('main', 'quiet_own', 1, NEW.id); DELETE"))
        pair.same("INSERT INTO ops VALUES (3, 'set', 333)")
        try sameEverywhere(pair)
        try pair.finish()
        let after = try pair.db.read { db throws(FerryError) in try db.scalar("SELECT sql FROM sqlite_master WHERE name = 'quiet_own'", as: String.self) }
        #expect(after == own)
        let left = try pair.db.read { db throws(FerryError) in try db.scalar("SELECT count(*) FROM ferry_migration_trigger_writes", as: Int.self) }
        #expect(left == 0)
    }

    /// A column the trigger reads renamed while the table migrates: SQLite rewrites the stored
    /// text (Ferry's calls included), the trigger still reaches the pending rows, and once the
    /// table finished it reads as SQLite rewrote the app's own text (the oracle's).
    @Test(arguments: Placement.available)
    func aTriggerRewrittenBySQLiteKeepsWorking(placement: Placement) throws {
        let pair = try Pair(placement: placement, rows: Self.rows, appSchema: Self.appSchema, stepFirst: true)
        pair.same("ALTER TABLE ops RENAME COLUMN value TO amount")
        for write in Self.writes {
            pair.same(write)
            try sameEverywhere(pair)
        }
        try pair.finish()
        try sameEverywhere(pair)
        sameTriggers(pair)
        let stored = try pair.db.read { db throws(FerryError) in try db.fetchAll("SELECT sql FROM sqlite_master WHERE type = 'trigger'").map(\.values) }
        #expect(stored.contains { $0.last == .text(Self.triggers[0].replacingOccurrences(of: "NEW.value", with: "NEW.amount")) })
    }

    @Test(arguments: Placement.available)
    func theAppCannotCallTheProcedureItself(placement: Placement) throws {
        let pair = try Pair(placement: placement, rows: Self.rows, appSchema: Self.appSchema, stepFirst: true)
        do {
            try pair.db.write { db throws(FerryError) in try db.execute("SELECT ferry_trigger_moves('main', 'ops_set', 0, 1, 2)") }
            Issue.record("accepted")
        } catch {
            guard case .accessDenied = error else { Issue.record("\(error)"); return }
        }
        try pair.finish()
    }
}
