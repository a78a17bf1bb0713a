import Testing
@testable import FerrySQL

/// `TriggerWriteMoves` puts a call before each statement of a trigger's body that updates or
/// deletes a migrating table, takes the calls out again byte for byte, and gives each such
/// statement as one of its own with the trigger's row as parameters.
@Suite struct TriggerWriteMovesTests {
    private func calls(_ sql: String, migrating: Set<String> = ["t"]) throws -> String? {
        try TriggerWriteMoves.withCalls(sql, schema: "main", name: "trg") { table, schema in
            (schema == nil || schema == "main") && migrating.contains(table)
        }
    }

    @Test func aCallGoesBeforeEachStatementThatWritesAMigratingTable() throws {
        let sql = "CREATE TRIGGER trg AFTER INSERT ON ops BEGIN\n  UPDATE t SET a = NEW.a WHERE id = NEW.id;\n  INSERT INTO log VALUES (NEW.id);\n  DELETE FROM main.t WHERE id = OLD.id OR a = NEW.a;\nEND"
        let expected = "CREATE TRIGGER trg AFTER INSERT ON ops BEGIN\n  SELECT ferry_trigger_moves('main', 'trg', 0, NEW.a, NEW.id); UPDATE t SET a = NEW.a WHERE id = NEW.id;\n  INSERT INTO log VALUES (NEW.id);\n  SELECT ferry_trigger_moves('main', 'trg', 2, OLD.id, NEW.a); DELETE FROM main.t WHERE id = OLD.id OR a = NEW.a;\nEND"
        #expect(try calls(sql) == expected)
        #expect(TriggerWriteMoves.withoutCalls(expected, schema: "main", name: "trg") == sql)
        // The statements of the app's text as their own, numbered as the calls pass the values.
        #expect(try TriggerWriteMoves.standaloneStatement(sql, index: 0) == "UPDATE t SET a = ?1 WHERE id = ?2")
        #expect(try TriggerWriteMoves.standaloneStatement(sql, index: 1) == "INSERT INTO log VALUES (?1)")
        #expect(try TriggerWriteMoves.standaloneStatement(sql, index: 2) == "DELETE FROM main.t WHERE id = ?1 OR a = ?2")
        #expect(try TriggerWriteMoves.standaloneStatement(sql, index: 3) == nil)
    }

    @Test func statementsOfOtherTablesOrSchemasGetNoCall() throws {
        #expect(try calls("CREATE TRIGGER trg AFTER INSERT ON ops BEGIN UPDATE u SET a = 1; DELETE FROM temp.t; INSERT INTO t VALUES (1); END") == nil)
        #expect(try calls("CREATE TRIGGER trg AFTER INSERT ON ops BEGIN UPDATE t SET a = 1; END", migrating: ["u"]) == nil)
    }

    @Test func oneValueIsPassedOnceWhateverItsSpelling() throws {
        let sql = #"CREATE TRIGGER trg BEFORE UPDATE ON t BEGIN UPDATE t SET c = "NEW"."A" + new.a WHERE id > OLD.id AND id < old."ID" + 10; END"#
        let withCalls = try #require(try calls(sql))
        #expect(withCalls.contains(#"ferry_trigger_moves('main', 'trg', 0, "NEW"."A", OLD.id); UPDATE"#))
        #expect(try TriggerWriteMoves.standaloneStatement(sql, index: 0) == "UPDATE t SET c = ?1 + ?1 WHERE id > ?2 AND id < ?2 + 10")
        #expect(TriggerWriteMoves.withoutCalls(withCalls, schema: "main", name: "TRG") == sql)
    }

    @Test func aColumnNamedBeginOrAWhenClauseDoesNotMoveTheBody() throws {
        let sql = "CREATE TRIGGER trg AFTER UPDATE ON ops WHEN NEW.\"begin\" > 0 AND NEW.begin < CASE WHEN 1 THEN 9 END BEGIN DELETE FROM t WHERE a = NEW.begin; END"
        let withCalls = try #require(try calls(sql))
        #expect(withCalls.hasSuffix("BEGIN SELECT ferry_trigger_moves('main', 'trg', 0, NEW.begin); DELETE FROM t WHERE a = NEW.begin; END"))
        #expect(TriggerWriteMoves.withoutCalls(withCalls, schema: "main", name: "TRG") == sql)
    }

    @Test func aQuoteInTheTriggersNameIsDoubled() throws {
        let sql = "CREATE TRIGGER \"it's\" AFTER INSERT ON ops BEGIN DELETE FROM t; END"
        let withCalls = try TriggerWriteMoves.withCalls(sql, schema: "main", name: "it's") { table, _ in table == "t" }
        #expect(withCalls == "CREATE TRIGGER \"it's\" AFTER INSERT ON ops BEGIN SELECT ferry_trigger_moves('main', 'it''s', 0); DELETE FROM t; END")
    }

    @Test func textWithoutCallsIsLeftAsItIs() {
        let sql = "CREATE TRIGGER trg AFTER INSERT ON ops BEGIN SELECT 1; END"
        #expect(TriggerWriteMoves.withoutCalls(sql, schema: "main", name: "trg") == sql)
        #expect(TriggerWriteMoves.withoutCalls("not sql at all ferry_trigger_moves", schema: "main", name: "trg") == "not sql at all ferry_trigger_moves")
    }

    /// Only the calls that name the trigger go (SQLite rewrote its text since Ferry stored it): a
    /// call of another trigger, or with arguments that are not literals, is the app's text.
    @Test func onlyCallsNamingTheTriggerAreTakenOut() throws {
        let sql = "CREATE TRIGGER trg AFTER INSERT ON ops BEGIN SELECT ferry_trigger_moves('main', 'other', 0); SELECT ferry_trigger_moves(NEW.a, 'trg', 0); DELETE FROM t; END"
        let withCalls = try #require(try calls(sql))
        #expect(withCalls.contains("SELECT ferry_trigger_moves('main', 'trg', 2); DELETE FROM t;"))
        #expect(TriggerWriteMoves.withoutCalls(withCalls, schema: "main", name: "trg") == sql)
        #expect(TriggerWriteMoves.withoutCalls(withCalls, schema: "temp", name: "trg") == withCalls)
        // Statements count as the app wrote them, its own calls included.
        #expect(try TriggerWriteMoves.standaloneStatement(sql, index: 2) == "DELETE FROM t")
    }
    private func readingCalls(_ sql: String) throws -> String? {
        try TriggerWriteMoves.withCalls(sql, schema: "main", name: "trg", isMigrating: { table, _ in table == "t" },
                                        isRead: { relation, schema in (schema == nil || schema == "main") && ["t", "v"].contains(relation) })
    }

    /// A statement that reads a migrating table (or a view over one), whatever it writes, is
    /// replaced by a call that runs it; the trigger's WHEN gains the guard that keeps it quiet
    /// for what that call writes; statements that read nothing migrating stay.
    @Test func aStatementThatReadsIsReplacedByACallThatRunsIt() throws {
        let sql = "CREATE TRIGGER trg AFTER INSERT ON ops WHEN NEW.kind = 1 BEGIN INSERT INTO log SELECT count(*) FROM t WHERE a > NEW.a; "
            + "INSERT INTO log VALUES (NEW.id); UPDATE t SET c = (SELECT max(c) FROM v) WHERE id = NEW.id; END"
        let expected = "CREATE TRIGGER trg AFTER INSERT ON ops WHEN ferry_trigger_fires('main', 'trg') AND ( NEW.kind = 1 ) BEGIN "
            + "SELECT ferry_trigger_run('main', 'trg', 0, NEW.a); INSERT INTO log VALUES (NEW.id); SELECT ferry_trigger_run('main', 'trg', 2, NEW.id); END"
        #expect(try readingCalls(sql) == expected)
        #expect(TriggerWriteMoves.withoutCalls(expected, schema: "main", name: "trg") == nil, "the replaced text is in the record only")
        #expect(try TriggerWriteMoves.standaloneStatement(sql, index: 0) == "INSERT INTO log SELECT count(*) FROM t WHERE a > ?1")
        // Without a WHEN, the guard is the WHEN.
        #expect(try readingCalls("CREATE TRIGGER trg AFTER DELETE ON ops BEGIN DELETE FROM log WHERE id IN (SELECT id FROM t); END")
                == "CREATE TRIGGER trg AFTER DELETE ON ops WHEN ferry_trigger_fires('main', 'trg') BEGIN SELECT ferry_trigger_run('main', 'trg', 0); END")
        #expect(try readingCalls("CREATE TRIGGER trg AFTER DELETE ON ops BEGIN DELETE FROM log WHERE id IN (SELECT id FROM temp.t); END") == nil)
    }

    /// A WHEN that reads a migrating table becomes a call that evaluates it; with a replaced
    /// statement, the guard comes first.
    @Test func aConditionThatReadsIsEvaluatedByACall() throws {
        let sql = "CREATE TRIGGER trg AFTER INSERT ON ops WHEN (SELECT count(*) FROM t WHERE a = NEW.a) > 0 BEGIN INSERT INTO log VALUES (NEW.id); END"
        #expect(try readingCalls(sql) == "CREATE TRIGGER trg AFTER INSERT ON ops WHEN ferry_trigger_when('main', 'trg', NEW.a) BEGIN INSERT INTO log VALUES (NEW.id); END")
        #expect(try TriggerWriteMoves.standaloneCondition(sql) == "SELECT ((SELECT count(*) FROM t WHERE a = ?1) > 0)")
        let both = "CREATE TRIGGER trg AFTER INSERT ON ops WHEN NEW.a < (SELECT max(a) FROM t) BEGIN INSERT INTO log SELECT id FROM t; END"
        #expect(try readingCalls(both) == "CREATE TRIGGER trg AFTER INSERT ON ops WHEN ferry_trigger_fires('main', 'trg') AND "
                + "ferry_trigger_when('main', 'trg', NEW.a) BEGIN SELECT ferry_trigger_run('main', 'trg', 0); END")
        #expect(TriggerWriteMoves.withoutCalls(try #require(try readingCalls(sql)), schema: "main", name: "trg") == nil)
        #expect(try TriggerWriteMoves.standaloneCondition("CREATE TRIGGER trg AFTER INSERT ON ops BEGIN SELECT 1; END") == nil)
    }

    /// `SELECT RAISE(...) [FROM ...] WHERE ...` keeps its RAISE under a call that tells whether the
    /// statement yields a row; RAISE in another shape is left to SQLite, and said so.
    @Test func aRaiseOverAReadKeepsItsRaiseUnderACall() throws {
        let sql = "CREATE TRIGGER trg BEFORE INSERT ON ops BEGIN SELECT RAISE(ABORT, 'taken (twice)') FROM t WHERE a = NEW.a; "
            + "SELECT CASE WHEN (SELECT count(*) FROM t) > 9 THEN RAISE(ABORT, 'full') END; END"
        #expect(try readingCalls(sql) == "CREATE TRIGGER trg BEFORE INSERT ON ops BEGIN SELECT RAISE(ABORT, 'taken (twice)') "
                + "WHERE ferry_trigger_any('main', 'trg', 0, NEW.a); SELECT CASE WHEN (SELECT count(*) FROM t) > 9 THEN RAISE(ABORT, 'full') END; END")
        #expect(try TriggerWriteMoves.standaloneExistence(sql, index: 0) == "SELECT EXISTS (SELECT 1 FROM t WHERE a = ?1)")
        let isRead = { (relation: String, _: String?) in relation == "t" }
        #expect(try TriggerWriteMoves.readsLeftToSQLite(sql, isRead: isRead) == [1])
        #expect(try TriggerWriteMoves.readsLeftToSQLite(sql, isRead: { _, _ in false }) == [])
    }
}
