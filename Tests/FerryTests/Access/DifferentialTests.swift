import FerryTestSupport
import FerrySQLite
import FerrySQL
import Foundation
import Testing
@_spi(Benchmarks) @testable import Ferry

/// The differential harness of the migration contract.
///
/// Each workload draws a random schema (rowid-only, INTEGER PRIMARY KEY or AUTOINCREMENT, with or
/// without a UNIQUE column and defaults, sometimes a generated column in the target), random source rows, a random filter and a random mix of
/// statements (reads, writes of every shape, and schema statements: indexes, unique indexes that
/// the pending rows may violate, describing pragmas); for some workloads a reshaped target with held
/// rows, a real column named like the rowid, or a second table joined to `t` (`DifferentialShapes`). The statements run through a migrating `FerryDatabase` with migration steps at
/// random points, and on an oracle: a plain database whose table already holds exactly the matching
/// source rows. After every statement the harness compares the outcome (rows, or the error's
/// primary code), `changes`, `lastInsertRowid` and the whole table. Seeded and reproducible: a
/// failure is replayed with actions removed one at a time until every remaining one is needed,
/// and that minimal script is printed with the seed.
///
/// `FERRY_DIFFERENTIAL_WORKLOADS=N` runs N workloads instead of the default;
/// `FERRY_DIFFERENTIAL_DEBUG=1` prints every error either side raised (the comparison sees codes only);
/// `FERRY_DIFFERENTIAL_TRACE=1` prints every statement's outcome on both sides.
@Suite(.timeLimit(.minutes(5 + differentialWorkloadCount / 50)))
struct DifferentialTests {
    static var workloadCount: Int { differentialWorkloadCount }
    /// The first seed: the normal run replays seeds 0..<300; an engine fuzzing session explores
    /// new ones (`FERRY_DIFFERENTIAL_FIRST_SEED=$RANDOM$RANDOM`).
    static var firstSeed: UInt64 {
        ProcessInfo.processInfo.environment["FERRY_DIFFERENTIAL_FIRST_SEED"].flatMap(UInt64.init) ?? 0
    }

    @Test func migratingTableBehavesLikeTheFinishedOne() throws {
        var mix: [String: Int] = [:]
        for seed in Self.firstSeed..<(Self.firstSeed + UInt64(Self.workloadCount)) {
            var workload = Workload(seed: seed)
            let actions = workload.generateActions()
            for case .statement(let kind, _) in actions { mix[kind, default: 0] += 1 }
            var replay = Workload(seed: seed)
            let failure: String?
            do {
                failure = try replay.execute(actions)
            } catch {
                // Not a divergence: Ferry (or the setup) failed outright.
                Issue.record(Comment(rawValue: "workload \(seed) failed: \(error)\n" + Workload(seed: seed).script(actions)))
                return
            }
            guard let failure else { continue }
            let minimal = try Workload.shrink(seed: seed, actions: actions)
            Issue.record(Comment(rawValue: "workload \(seed) diverged: \(failure)\n"
                + "minimal reproduction (\(minimal.actions.count) of \(actions.count) actions), diverging with: \(minimal.failure)\n"
                + Workload(seed: seed).script(minimal.actions)))
            return
        }
        print("differential: \(Self.workloadCount) workloads from seed \(Self.firstSeed), statement mix \(mix.sorted { $0.key < $1.key })")
    }
}

/// SplitMix64: a small, seedable generator so every workload is reproducible.
/// `FERRY_DIFFERENTIAL_WORKLOADS`, default 300 (outside the suite: its time limit depends on it).
let differentialWorkloadCount = ProcessInfo.processInfo.environment["FERRY_DIFFERENTIAL_WORKLOADS"].flatMap(Int.init) ?? 300

struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// One random workload.
struct Workload {
    /// The table's key: `withoutRowid` has source and target `WITHOUT ROWID`, `withoutRowidSource`
    /// a source `WITHOUT ROWID` whose key feeds the target's INTEGER PRIMARY KEY.
    enum Flavour: CaseIterable { case rowidOnly, integerPrimaryKey, autoincrement, withoutRowid, withoutRowidSource }
    /// Where the source lives and how both files are encrypted.
    enum Placement: CaseIterable {
        case otherFile, sameFile, encryptedV3SourceV4Target, encryptedV4SourceV3Target, plainSourceEncryptedTarget
        // Passphrases with few KDF iterations keep hundreds of workloads fast; the compatibility
        // settings (page size, HMAC, KDF algorithm) are those of SQLCipher 3 and 4.
        static func cipher(_ passphrase: String, compatibility: Int) -> Cipher {
            .passphrase(passphrase, settings: CipherSettings(compatibility: compatibility, kdfIterations: 2))
        }
        var sourceCipher: Cipher? {
            switch self {
            case .encryptedV3SourceV4Target: return Self.cipher("source-key", compatibility: 3)
            case .encryptedV4SourceV3Target: return Self.cipher("source-key", compatibility: 4)
            default: return nil
            }
        }
        var targetCipher: Cipher? {
            switch self {
            case .encryptedV3SourceV4Target, .plainSourceEncryptedTarget: return Self.cipher("target-key", compatibility: 4)
            case .encryptedV4SourceV3Target: return Self.cipher("target-key", compatibility: 3)
            default: return nil
            }
        }
    }
    let seed: UInt64
    var random: SeededGenerator
    let flavour: Flavour
    let uniqueB: Bool
    let filter: String?
    let placement: Placement
    /// The target exists before the plan, with a view over it (`v`), read by two statement kinds.
    let withView: Bool
    /// The target exists before the plan with a generated column `g` the source lacks.
    let withGenerated: Bool
    /// The target exists before the plan with the app's triggers (`appTriggers`), writing `log`.
    let withTriggers: Bool
    /// Reshaped targets, real columns named like the rowid, a second table (`DifferentialShapes`).
    let shapes: DifferentialShapes

    init(seed: UInt64) {
        self.seed = seed
        random = SeededGenerator(state: seed &* 7919 &+ 17)
        flavour = Flavour.allCases.randomElement(using: &random)!
        uniqueB = Bool.random(using: &random)
        filter = [nil, "a % 3 = 0", "a < 40", "b IS NOT NULL", "c <> 7"].randomElement(using: &random)!
        let placements = SQLiteEngine.supportsEncryption ? Placement.allCases : [.otherFile, .sameFile]
        placement = placements.randomElement(using: &random)!
        withView = Bool.random(using: &random)
        withGenerated = Int.random(in: 0...3, using: &random) == 0
        // (The app's triggers read NEW.rowid, which a table without rowid has not.)
        withTriggers = Int.random(in: 0...3, using: &random) == 0 && flavour != .withoutRowid
        shapes = DifferentialShapes(seed: seed, flavour: flavour, uniqueB: uniqueB, withGenerated: withGenerated)
    }

    /// Rows per batch: odd seeds step in fixed batches of 1 to 12 rows, so statements meet the
    /// table part-way (with a cursor among the rows); even seeds adapt batches to the budget, and
    /// their first step usually moves every row.
    var batchRows: Int? { seed % 2 == 0 ? nil : Int((seed / 2) % 12) + 1 }

    /// The target exists before the plan registers (else the plan creates it like the source).
    var targetExists: Bool { withView || withGenerated || withTriggers || flavour == .withoutRowidSource || shapes.reshape != nil }
    /// What ends the source's definition.
    var sourceOptions: String { flavour == .withoutRowid || flavour == .withoutRowidSource ? " WITHOUT ROWID" : "" }
    /// What ends the target's and the oracle's definition.
    var targetOptions: String { flavour == .withoutRowid ? " WITHOUT ROWID" : "" }

    /// The log the app's triggers write (every workload has it; the triggers come with
    /// `withTriggers` or a statement creates them).
    static let logSQL = "CREATE TABLE log(event TEXT, k INTEGER, a INTEGER)"
    /// A table of the legacy file (other files only) that no mapping moves.
    static let legacyOtherTableSQL = "CREATE TABLE legacy_notes(n INTEGER); INSERT INTO legacy_notes VALUES (1), (2)"
    /// The app's child table of `t` (workloads whose `t` has a declared key): the foreign key is
    /// enforced, cascades on delete, and refuses a re-keyed parent.
    static let kidsSQL = "CREATE TABLE kids(id INTEGER PRIMARY KEY, tid INTEGER REFERENCES t(id) ON DELETE CASCADE)"
    /// The app's triggers on `t`, by name: one for each event, a conditional BEFORE INSERT, and a
    /// rule that refuses some inserts (some source rows break it: they are moved all the same).
    static let appTriggers: [(name: String, sql: String)] = [
        // They name `c` and the rowid alone: `a` and `b` may be renamed (a trigger naming a column
        // that is gone fails every insert, Ferry's moves included; Limitations.md).
        ("t_ai", "CREATE TRIGGER IF NOT EXISTS t_ai AFTER INSERT ON t BEGIN INSERT INTO log VALUES ('ai', NEW.rowid, NEW.c); END"),
        ("t_bi", "CREATE TRIGGER IF NOT EXISTS t_bi BEFORE INSERT ON t WHEN NEW.c > 2 BEGIN INSERT INTO log VALUES ('bi', NEW.c, NULL); END"),
        ("t_au", "CREATE TRIGGER IF NOT EXISTS t_au AFTER UPDATE OF c ON t BEGIN INSERT INTO log VALUES ('au', NEW.rowid, NEW.c - OLD.c); END"),
        ("t_ad", "CREATE TRIGGER IF NOT EXISTS t_ad AFTER DELETE ON t BEGIN INSERT INTO log VALUES ('ad', OLD.rowid, OLD.c); END"),
        ("t_rule", "CREATE TRIGGER IF NOT EXISTS t_rule BEFORE INSERT ON t WHEN NEW.c = 8 BEGIN SELECT RAISE(ABORT, 'eight'); END"),
        // Reads of `t` itself: its pending rows count too.
        ("t_count", "CREATE TRIGGER IF NOT EXISTS t_count AFTER INSERT ON t WHEN (SELECT count(*) FROM t WHERE c = NEW.c) > 1 "
            + "BEGIN INSERT INTO log SELECT 'cnt', NEW.c, count(*) FROM t WHERE c < NEW.c; END"),
        ("t_cap", "CREATE TRIGGER IF NOT EXISTS t_cap BEFORE INSERT ON t WHEN NEW.c = 7 BEGIN SELECT RAISE(ABORT, 'seven again') FROM t WHERE c = 7; END"),
    ]

    /// A trigger of another table, declared before the migration, whose body updates and deletes
    /// rows of `t` (its pending rows included): with `withTriggers`, where `kids` exists.
    static let kidsTrigger = "CREATE TRIGGER IF NOT EXISTS kids_touch AFTER INSERT ON kids BEGIN "
        + "UPDATE t SET c = c + 1 WHERE id = NEW.tid + 1 OR c = NEW.tid % 10; DELETE FROM t WHERE id = NEW.tid + 2 AND c > 5; END"
    /// A trigger of another table, declared before the migration, whose condition and body read
    /// `t` (a subquery, an aggregate over it): they read its pending rows too.
    static let kidsReadingTrigger = "CREATE TRIGGER IF NOT EXISTS kids_read AFTER INSERT ON kids "
        + "WHEN (SELECT count(*) FROM t WHERE c <= NEW.tid % 10) > 0 BEGIN "
        + "INSERT INTO log VALUES ('kr', NEW.tid, (SELECT max(c) FROM t WHERE c <= NEW.tid % 10)); "
        + "INSERT INTO log SELECT 'kn', NEW.tid, count(*) FROM t WHERE c > 4; END"

    /// The app's schema besides `t`: the log, `kids` (not for rowid-only tables), the triggers.
    var appSchema: [String] {
        [Self.logSQL] + (flavour != .rowidOnly ? [Self.kidsSQL] : []) + (withTriggers ? Self.appTriggers.map(\.sql) : [])
            + (withTriggers && flavour != .rowidOnly ? [Self.kidsTrigger, Self.kidsReadingTrigger] : [])
    }

    /// The generated column of `withGenerated` workloads, in the target and the oracle.
    static let generatedColumn = "g INTEGER GENERATED ALWAYS AS (a * 2 + c) VIRTUAL"

    /// The target's and the oracle's declaration (reshaped, when `shapes.reshape`).
    var targetDeclaration: String {
        let reshape = shapes.reshape
        let columns = "\(keyDeclaration)a \(reshape?.aTypes?.target ?? "INTEGER"), b TEXT\(reshape?.nocaseB == true ? " COLLATE NOCASE" : "")"
            + "\(uniqueB ? " UNIQUE" : ""), c INTEGER DEFAULT 7\(shapes.shadow.map { ", \($0) INTEGER" } ?? "")"
            + (reshape?.notNullDefault == true ? ", e INTEGER NOT NULL DEFAULT 5" : "")
        return withGenerated ? columns + ", " + Self.generatedColumn : columns
    }

    /// The view of `withView` workloads, in the target and in the oracle.
    static let viewSQL = "CREATE VIEW v(x, y) AS SELECT a, c FROM t WHERE c > 3"

    var keyDeclaration: String {
        switch flavour {
        case .rowidOnly: return ""
        case .integerPrimaryKey, .withoutRowid, .withoutRowidSource: return "id INTEGER PRIMARY KEY, "
        case .autoincrement: return "id INTEGER PRIMARY KEY AUTOINCREMENT, "
        }
    }

    /// The source's declaration.
    var declaration: String {
        "\(keyDeclaration)a \(shapes.reshape?.aTypes?.source ?? "INTEGER"), b TEXT\(uniqueB ? " UNIQUE" : ""), c INTEGER DEFAULT 7"
            + (shapes.shadow.map { ", \($0) INTEGER" } ?? "")
    }

    /// The rowid column as the statements spell it (a spelling no real column shadows).
    var key: String { flavour == .rowidOnly ? rowidSpelling : "id" }

    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &random) }
    /// A value for `b`. Under a target's unique `lower(b)`, values no source row holds under
    /// `lower`: an app write colliding with a pending row there is found only when the row moves
    /// (Limitations.md, expression unique indexes).
    mutating func text() -> String {
        if int(0...5) == 0 { return "NULL" }
        let n = int(0...30)
        if let reshape = shapes.reshape {
            if reshape.lowerUnique { return "'U\(n)'" }
            if reshape.nocaseB && n % 2 == 0 { return "'T\(n)'" }
        }
        return "'t\(n)'"
    }

    /// A random statement of the workload, and its kind for the statistics. (A table without
    /// rowid reads no rowid: where the engine gives subqueries a NULL one, those statements are
    /// left out, see `EngineQuirks`.)
    mutating func statement() -> (kind: String, sql: String) {
        let drawn = anyStatement()
        if flavour == .withoutRowid && EngineQuirks.subqueryRowidReadsNull && RowidUsage.names(in: (try? Tokenizer.tokenize(drawn.sql)) ?? [],
                                                                                                  source: SourceText(drawn.sql)).count > 0 {
            return ("select-star", "SELECT * FROM t ORDER BY id")
        }
        if shapes.reshape?.lowerUnique == true && drawn.sql.hasPrefix("INSERT") && drawn.sql.contains("SELECT * FROM") {
            // Copies `b` of (maybe pending) rows: a collision under the target's unique `lower(b)`
            // with a pending row is found only when it moves (Limitations.md).
            return ("select-star", "SELECT * FROM t ORDER BY \(key)")
        }
        return drawn
    }

    private mutating func anyStatement() -> (kind: String, sql: String) {
        let table = "t"
        if let drawn = shapeStatement() { return drawn }
        if int(0...6) == 0 {
            // Keys at the cursor, where an off-by-one would show: `{cursor}` is replaced, as the
            // statement runs, by the first key not moved yet (`Workload.nearCursor`).
            let near = ["{cursor}", "{cursor-1}", "{cursor+1}"].randomElement(using: &random)!
            return [("select-near-cursor", "SELECT \(key), a, b, c FROM \(table) WHERE \(key) = \(near)"),
                    ("select-near-cursor", "SELECT \(key), a FROM \(table) WHERE \(key) < \(near) ORDER BY \(key) DESC LIMIT 3"),
                    ("write-near-cursor", "DELETE FROM \(table) WHERE \(key) <= \(near) AND a % 5 = \(int(0...4)) RETURNING \(key)"),
                    ("write-near-cursor", "UPDATE \(table) SET c = c + 1 WHERE \(key) IN (\(near), 1) RETURNING \(key), c")].randomElement(using: &random)!
        }
        if int(0...25) == 0 {
            // A table of the legacy file that no mapping moves: the finished database lacks it
            // until the app creates its own.
            return ("legacy-other-table", ["SELECT count(*), max(n) FROM legacy_notes", "INSERT INTO legacy_notes VALUES (\(int(0...9)))",
                                           "CREATE TABLE IF NOT EXISTS legacy_notes(n INTEGER)", "DROP TABLE IF EXISTS legacy_notes"].randomElement(using: &random)!)
        }
        var kind = int(0...(withView ? 31 : 29))
        if int(0...15) == 0 {
            return [("add-column", "ALTER TABLE \(table) ADD COLUMN d INTEGER DEFAULT 3"),
                    ("use-added-column", "UPDATE \(table) SET d = d + a WHERE a < \(int(0...80))"),
                    ("use-added-column", "SELECT count(*), total(d), max(d) FROM \(table) WHERE d > \(int(0...9))"),
                    ("drop-column", "ALTER TABLE \(table) DROP COLUMN d")].randomElement(using: &random)!
        }
        if int(0...12) == 0 {
            return [("create-view", "CREATE VIEW IF NOT EXISTS nv AS SELECT a, c FROM \(table) WHERE a > \(int(0...60))"),
                    ("drop-view", "DROP VIEW IF EXISTS nv"),
                    ("select-new-view", "SELECT count(*), total(c), max(a) FROM nv WHERE c < \(int(0...9))")].randomElement(using: &random)!
        }
        if int(0...20) == 0 {
            // Renamed and back: the other statements name the columns as declared.
            let (old, new) = [("a", "a2"), ("a2", "a"), ("b", "label"), ("label", "b")].randomElement(using: &random)!
            return ("rename-column", "ALTER TABLE \(table) RENAME COLUMN \(old) TO \(new)")
        }
        if flavour != .rowidOnly && int(0...10) == 0 {
            return [("insert-kid", "INSERT INTO kids(tid) VALUES (\(int(1...70)))"), ("insert-kid", "INSERT INTO kids(tid) VALUES (\(int(1...70)))"),
                    ("fk-check", ["PRAGMA foreign_key_check", "PRAGMA foreign_key_check(kids)"].randomElement(using: &random)!)].randomElement(using: &random)!
        }
        if int(0...30) == 0 {
            // Renamed and back: the other statements name `t` (and fail on both meanwhile).
            return ("rename-table", ["ALTER TABLE t RENAME TO t2", "ALTER TABLE t2 RENAME TO t"].randomElement(using: &random)!)
        }
        if int(0...12) == 0 && flavour != .withoutRowid {
            let trigger = Self.appTriggers.randomElement(using: &random)!
            return Bool.random(using: &random) ? ("create-trigger", trigger.sql) : ("drop-trigger", "DROP TRIGGER IF EXISTS \(trigger.name)")
        }
        if withGenerated && int(0...5) == 0 {
            return ("select-generated", ["SELECT g, count(*), max(\(key)) FROM \(table) WHERE g > \(int(0...120)) GROUP BY g ORDER BY g",
                                         "UPDATE \(table) SET a = a + 1 WHERE g < \(int(0...120)) RETURNING \(key), g"].randomElement(using: &random)!)
        }
        if !withView && kind >= 22 { kind += 2 }  // the view statements need the view
        switch kind {
        case 24: return ("create-index", "CREATE INDEX IF NOT EXISTS t_a ON \(table)(a)")
        case 25:
            let index = ["t_ac ON \(table)(a, c)", "t_ab ON \(table)(a, b)", "t_c_partial ON \(table)(c) WHERE a > 70"].randomElement(using: &random)!
            return ("create-unique-index", "CREATE UNIQUE INDEX IF NOT EXISTS \(index)")
        case 26: return ("drop-index", "DROP INDEX IF EXISTS \(["t_a", "t_ac", "t_ab", "t_c_partial"].randomElement(using: &random)!)")
        case 28:
            return ("select-indexed", ["SELECT \(key), a, b FROM \(table) INDEXED BY t_a WHERE a > \(int(0...80)) ORDER BY a, \(key)",
                                       "SELECT count(*), total(c) FROM \(table) NOT INDEXED WHERE c = \(int(0...9))",
                                       "SELECT x.a, y.c FROM \(table) AS x INDEXED BY t_a JOIN \(table) y NOT INDEXED ON y.\(key) = x.\(key) WHERE x.a < \(int(0...40)) ORDER BY 1, 2"]
                .randomElement(using: &random)!)
        case 29:
            return ("write-indexed", ["UPDATE \(table) INDEXED BY t_a SET c = c + 1 WHERE a < \(int(0...80))",
                                      "DELETE FROM \(table) NOT INDEXED WHERE a = \(int(0...80))"].randomElement(using: &random)!)
        case 30:
            return ("select-rowid-star", ["SELECT rowid, * FROM \(table) WHERE c > \(int(0...9)) ORDER BY rowid",
                                          "SELECT \(table).*, oid FROM \(table) WHERE a < \(int(0...80)) ORDER BY 1, 2, 3",
                                          "SELECT x._rowid_, x.*, y.* FROM \(table) AS x JOIN \(table) AS y ON y.a = x.a + \(int(0...2)) ORDER BY 1, 2, 3, 4, 5, 6",
                                          "SELECT * FROM (SELECT rowid AS r, * FROM \(table)) WHERE r > \(int(0...60)) ORDER BY r",
                                          "SELECT count(*) FROM \(table) WHERE (a, b, c) IN (SELECT * FROM \(table) WHERE rowid > \(int(0...60)))"]
                .randomElement(using: &random)!)
        case 31:
            return ("write-rowid-star", ["UPDATE \(table) SET c = c + 1 WHERE a < \(int(0...80)) RETURNING rowid, *",
                                         "DELETE FROM \(table) WHERE (a, b, c) IN (SELECT * FROM \(table) WHERE rowid < \(int(0...40))) RETURNING *, rowid",
                                         "INSERT INTO \(table)(a, b, c) SELECT * FROM \(table) WHERE rowid < \(int(0...20)) AND a < 10 ORDER BY rowid"]
                .randomElement(using: &random)!)
        case 27: return ("describe", ["PRAGMA index_list(\(table))", "PRAGMA table_info(\(table))", "PRAGMA index_info(t_ac)",
                                      "PRAGMA integrity_check(\(table))", "PRAGMA quick_check(\(table))"].randomElement(using: &random)!)
        case 20: return ("select-scalar-subquery", "SELECT (SELECT  max(a)\nFROM \(table) WHERE c > \(int(0...9))), Count( * ), \(key) FROM \(table) WHERE a > \(int(0...40)) GROUP BY \(key) ORDER BY \(key) LIMIT 3")
        case 21: return ("update-returning-subquery", "UPDATE \(table) SET c = c + 1 WHERE \(key) = \(int(1...70)) RETURNING \(key), (SELECT count(*) FROM \(table)) - a, rowid")
        case 22: return ("select-view", "SELECT count(*), total(x), max(y) FROM v WHERE x > \(int(0...60))")
        case 23: return ("select-view-join", "SELECT v.x, \(table).c FROM v JOIN \(table) ON \(table).a = v.x + \(int(0...2)) ORDER BY 1, 2")
        case 19: return ("select-star", "SELECT * FROM \(table) WHERE c > \(int(0...9)) ORDER BY a, b, c")
        case 16: return ("update-order-limit", "UPDATE \(table) SET c = c + 10 WHERE a > \(int(0...60)) ORDER BY \(key) DESC LIMIT \(int(1...4))")
        case 17: return ("delete-order-limit", "DELETE FROM \(table) WHERE c < \(int(0...9)) ORDER BY a, \(key) LIMIT \(int(1...3))")
        case 18: return ("update-from", "UPDATE \(table) SET c = x.m FROM (SELECT max(a) AS m FROM \(table)) AS x WHERE \(table).a < \(int(0...40))")
        case 0: return ("insert", "INSERT INTO \(table)(a, b, c) VALUES (\(int(0...80)), \(text()), \(int(0...9)))")
        case 1: return ("insert-explicit-key", "INSERT INTO \(table)(\(key), a, b) VALUES (\(int(1...70)), \(int(0...80)), \(text()))")
        case 2: return ("insert-or-replace", "INSERT OR REPLACE INTO \(table)(\(key), a, b, c) VALUES (\(int(1...70)), \(int(0...80)), \(text()), \(int(0...9)))")
        case 3: return ("insert-or-ignore", "INSERT OR IGNORE INTO \(table)(\(key), a, b) VALUES (\(int(1...70)), \(int(0...80)), \(text()))")
        case 4:
            let conflict = uniqueB && Bool.random(using: &random) ? "b" : key
            return ("upsert", "INSERT INTO \(table)(\(key), a, b) VALUES (\(int(1...70)), \(int(0...80)), \(text())) ON CONFLICT(\(conflict)) DO UPDATE SET c = c + 100, a = excluded.a")
        case 5: return ("insert-select", "INSERT INTO \(table)(a, b) SELECT a + 1000, NULL FROM \(table) WHERE a < \(int(0...20)) ORDER BY \(key)")
        case 6: return ("update", "UPDATE \(table) SET c = c + 1 WHERE a < \(int(0...80))")
        case 7:
            // OR REPLACE deletes the rows its new keys collide with: which rows it changes then
            // depends on the order it visits them in.
            let conflict = Bool.random(using: &random) ? "IGNORE" : "REPLACE"
            return ("update-key", "UPDATE OR \(conflict) \(table) SET \(key) = \(key) + \(int(1...5)) WHERE a % 7 = \(int(0...6))")
        case 8: return ("update-returning", "UPDATE \(table) SET b = \(text()) WHERE \(key) = \(int(1...70)) RETURNING \(key), a, b, c")
        case 9: return ("update-subquery", "UPDATE \(table) SET a = a + 1 WHERE \(key) IN (SELECT \(key) FROM \(table) WHERE c > \(int(0...9)))")
        case 10: return ("delete", "DELETE FROM \(table) WHERE a % 5 = \(int(0...4))")
        case 11: return ("delete-returning", "DELETE FROM \(table) WHERE \(key) > \(int(30...80)) RETURNING \(key), a")
        case 12: return ("select-aggregate", "SELECT count(*), sum(a), max(\(key)), min(b), max(b), total(c) FROM \(table) WHERE c >= \(int(0...9))")
        case 13: return ("select-join", "SELECT x.\(key), y.a FROM \(table) x JOIN \(table) y ON x.a = y.a + 1 ORDER BY 1, 2")
        case 14: return ("select-subquery", "SELECT \(key), a FROM \(table) WHERE a IN (SELECT a + 1 FROM \(table)) ORDER BY 1")
        default:
            // Point statements by key: once the key moved, Ferry serves them from the target alone (`KeyShortcut`).
            switch int(0...5) {
            case 0: return ("select-by-key", "SELECT \(key), a, b, c FROM \(table) WHERE \(key) = \(int(1...70))")
            case 1: return ("delete-by-key", "DELETE FROM \(table) WHERE \(key) = \(int(1...70)) RETURNING *")
            case 2: return ("select-below-key", "SELECT \(key), a FROM \(table) WHERE \(key) < \(int(1...70)) ORDER BY \(key) DESC LIMIT 5")
            case 3: return ("update-key-list", "UPDATE \(table) SET c = c + 1 WHERE \(key) IN (\(int(1...70)), \(int(1...70))) RETURNING \(key), c")

            default: return ("select-rowid", "SELECT rowid, a, b, c FROM \(table) WHERE rowid BETWEEN \(int(0...40)) AND \(int(30...90)) ORDER BY rowid")
            }
        }
    }

    /// One step of a workload: a migration step, or a statement of the app.
    enum Action: Hashable {
        case step(microseconds: Int)
        case statement(kind: String, sql: String)
    }

    /// The workload's actions, drawn after the data (call on a fresh workload).
    mutating func generateActions() -> [Action] {
        _ = drawData()
        var actions: [Action] = []
        for _ in 0..<int(10...30) {
            if int(0...3) == 0 { actions.append(.step(microseconds: int(50...400))) }
            let (kind, sql) = statement()
            actions.append(.statement(kind: kind, sql: sql))
        }
        return actions
    }

    /// The source rows and sequence bump, drawn first so that a replay sees the same data.
    mutating func drawData() -> (rows: [[Value]], bumpSequence: Bool) {
        var rows: [[Value]] = []
        var rowid = 0
        for _ in 0..<int(0...50) {
            rowid += int(1...3)
            rows.append([.integer(Int64(rowid)), .integer(Int64(int(0...80))), int(0...4) == 0 ? .null : .text("t\(int(0...40))"), .integer(Int64(int(0...9)))])
        }
        return (rows, flavour == .autoincrement && Bool.random(using: &random))
    }

    /// A readable script of actions, with the setup, for a bug report.
    func script(_ actions: [Action]) -> String {
        var lines = ["-- {cursor}: the first source key not moved when the statement ran", "-- seed \(seed): \(flavour), \(placement), filter \(filter ?? "none"), unique b: \(uniqueB), batch rows: \(batchRows.map(String.init) ?? "adaptive")",
                     "-- shapes: \(shapes.summary)", "CREATE TABLE t(\(targetDeclaration))\(targetOptions);"]
            + (withView ? [Self.viewSQL + ";"] : [])
            + (shapes.reshape?.indexes ?? []).map { $0 + ";" }
            + (shapes.reshape?.held ?? []).map { "INSERT OR IGNORE INTO t(\(targetKey), a, b, c) VALUES (\($0.map(Self.literal).joined(separator: ", "))); -- held before the plan registers" }
            + ["-- source: CREATE TABLE (\(declaration))\(sourceOptions);", "-- legacy file (other files only): \(Self.legacyOtherTableSQL);",
               Self.logSQL + ";"] + (withTriggers ? Self.appTriggers.map { $0.sql + ";" } : []) + (withTriggers && flavour != .rowidOnly ? [Self.kidsTrigger + ";"] : []) + (shapes.withOther ? DifferentialShapes.otherSQL.map { $0 + ";" } : [])
        for action in actions {
            switch action {
            case .step(let microseconds): lines.append("-- migration step (budget \(microseconds) µs)")
            case .statement(_, let sql): lines.append(sql + ";")
            }
        }
        return lines.joined(separator: "\n")
    }

    /// A value as an SQL literal, for scripts.
    static func literal(_ value: Value) -> String {
        switch value {
        case .null: return "NULL"
        case .integer(let number): return String(number)
        case .text(let text): return "'\(text.replacingOccurrences(of: "'", with: "''"))'"
        default: return "\(value)"
        }
    }

    /// The target's key column as the harness's own SQL names it.
    var targetKey: String { targetOptions.isEmpty ? rowidSpelling : "id" }

    /// Removes actions one at a time while the workload still diverges: a minimal reproduction.
    static func shrink(seed: UInt64, actions: [Action]) throws -> (actions: [Action], failure: String) {
        var current = actions
        var first = Workload(seed: seed)
        var failure = try first.execute(current) ?? "no divergence on replay"
        var changed = true
        while changed {
            changed = false
            for index in current.indices.reversed() {
                var candidate = current
                candidate.remove(at: index)
                var replay = Workload(seed: seed)
                if let message = try replay.execute(candidate) {
                    current = candidate
                    failure = message
                    changed = true
                }
            }
        }
        return (current, failure)
    }

    /// Runs the workload's actions on Ferry and on the oracle; the divergence, or nil.
    mutating func execute(_ actions: [Action]) throws -> String? {
        do {
            try run(actions)
            return nil
        } catch let divergence as Divergence {
            return divergence.message
        }
    }

    private mutating func run(_ actions: [Action]) throws {
        let box = Sandbox()
        let appPath = box.path("app.db")
        let sourcePath = placement == .sameFile ? appPath : box.path("legacy.db")
        let sourceTable = placement == .sameFile ? "t_legacy" : "t"
        let legacy = try Connection(path: sourcePath, configuration: .init(cipher: placement == .sameFile ? placement.targetCipher : placement.sourceCipher))
        try legacy.execute("CREATE TABLE \(sourceTable)(\(declaration))\(sourceOptions)")
        if placement != .sameFile { try legacy.execute(Self.legacyOtherTableSQL) }
        let sourceKey = sourceOptions.isEmpty ? rowidSpelling : "id"
        let shadowColumn = shapes.shadow.map { ", \($0)" } ?? ""
        // Source rows with gaps in their rowids.
        let data = drawData()
        // A reshaped target: the source rows the finished table can hold together (its unique keys
        // are the target's), so that only collisions with held rows are quarantined.
        let fitting = try shapes.reshape.map { reshape in
            let scratch = try Connection.inMemory()
            try scratch.execute("CREATE TABLE t(\(targetDeclaration))\(targetOptions)")
            for sql in reshape.indexes { try scratch.execute(sql) }
            return try data.rows.filter { row in
                try scratch.execute("INSERT OR IGNORE INTO t(\(targetKey), a, b, c) VALUES (?, ?, ?, ?)", .positional(row))
                return scratch.changes == 1
            }
        }
        for row in fitting ?? data.rows {
            try legacy.execute("INSERT OR IGNORE INTO \(sourceTable)(\(sourceKey), a, b, c\(shadowColumn)) VALUES (?, ?, ?, ?\(shapes.shadow == nil ? "" : ", ?"))",
                               .positional(row + (shapes.shadow == nil ? [] : [DifferentialShapes.shadowValue(row)])))
        }
        if data.bumpSequence {
            try legacy.execute("UPDATE sqlite_sequence SET seq = seq + 5 WHERE name = ?", [.text(sourceTable)])  // deleted rows at the end
        }
        // The oracle: the finished table.
        if shapes.withOther {
            // The app's other table, in the target file before the plan registers (its inserts
            // would otherwise count in the first statement's `changes`).
            let app = placement == .sameFile ? legacy : try Connection(path: appPath, configuration: .init(cipher: placement.targetCipher))
            for sql in DifferentialShapes.otherSQL { try app.execute(sql) }
            if placement != .sameFile { app.close() }
        }
        // The rows a reshaped target holds before the plan registers (on the oracle too).
        let reshapeSetup = (shapes.reshape?.indexes ?? []).map { ($0, [Value]()) }
            + (shapes.reshape?.held ?? []).map { ("INSERT OR IGNORE INTO t(\(targetKey), a, b, c) VALUES (?, ?, ?, ?)", $0) }
        if targetExists {
            // An existing target, with a view over it, a generated column or triggers (in the source's file when sameFile).
            let app = placement == .sameFile ? legacy : try Connection(path: appPath, configuration: .init(cipher: placement.targetCipher))
            try app.execute("CREATE TABLE t(\(targetDeclaration))\(targetOptions)")
            for (sql, values) in reshapeSetup { try app.execute(sql, .positional(values)) }
            if withView { try app.execute(Self.viewSQL) }
            for sql in appSchema { try app.execute(sql) }
            if placement != .sameFile { app.close() }
        }
        let setup = try Connection(path: box.path("oracle.db"))
        try setup.execute("CREATE TABLE t(\(targetDeclaration))\(targetOptions)")
        for (sql, values) in reshapeSetup { try setup.execute(sql, .positional(values)) }
        if withView { try setup.execute(Self.viewSQL) }
        // Source rows that collide with a held row are quarantined: the held row stays.
        var expectedQuarantined = 0
        for row in try legacy.fetchAll("SELECT \(sourceKey), a, b, c\(shadowColumn) FROM \(sourceTable) WHERE \(filter ?? "1")") {
            try setup.execute("INSERT \(shapes.reshape == nil ? "" : "OR IGNORE ")INTO t(\(targetKey), a, b, c\(shadowColumn)) VALUES (?, ?, ?, ?\(shapes.shadow == nil ? "" : ", ?"))",
                              .positional(row.values))
            if setup.changes == 0 { expectedQuarantined += 1 }
        }
        for sql in appSchema + (shapes.withOther ? DifferentialShapes.otherSQL : []) { try setup.execute(sql) }  // after the rows: they predate the triggers
        if flavour == .autoincrement, let seq = try legacy.scalar("SELECT seq FROM sqlite_sequence WHERE name = ?", [.text(sourceTable)], as: Int64.self) {
            // (Held rows may have larger keys than the source's sequence.)
            let held = try setup.scalar("SELECT seq FROM sqlite_sequence WHERE name = 't'", as: Int64.self) ?? 0
            try setup.execute("DELETE FROM sqlite_sequence")
            try setup.execute("INSERT INTO sqlite_sequence(name, seq) VALUES ('t', ?)", [.integer(max(seq, held))])
        }
        setup.close()
        legacy.close()
        let oracle = try Connection(path: box.path("oracle.db"))  // fresh: changes and last rowid start at 0

        let location: MigrationSourceLocation = placement == .sameFile ? .targetFile : .file(sourcePath)
        let plan = MigrationPlan(sources: [MigrationSource(location, cipher: placement.sourceCipher,
                                                           tables: [TableMapping(target: "t", source: sourceTable, filter: filter)])])
        var options = FerryDatabase.Options()
        options.fixedBatchRows = batchRows
        let db = try FerryDatabase(path: appPath, configuration: .init(cipher: placement.targetCipher), plan: plan, options: options)
        defer { db.close() }
        if !targetExists {
            try db.write { db throws(FerryError) in for sql in appSchema { try db.execute(sql) } }
        }
        try compareTables(db, oracle)

        for action in actions {
            let sql: String
            switch action {
            case .step(let microseconds):
                try db.step(budget: .microseconds(microseconds))
                continue
            case .statement(_, let text):
                sql = Self.nearCursor(text, db: db)
            }
            // Result column names are compared too: the rewrite must not show through them.
            let expected = outcome { () throws(FerryError) in
                do throws(SQLiteError) {
                    let statement = try oracle.prepare(sql)
                    let rows = try statement.fetchAll().map(\.values)
                    return (statement.columnNames, rows, oracle.changes, oracle.lastInsertRowid)
                } catch { throw FerryError(error) }
            }
            let actual = outcome { () throws(FerryError) in
                try db.write { db throws(FerryError) in
                    let (columns, rows) = try db.query(sql)
                    return (columns, rows.map(\.values), db.changes, db.lastInsertRowid)
                }
            }
            if Self.traces { print("trace: `\(sql)`: expected \(expected), got \(actual)") }
            try check(actual == expected, "outcome of `\(sql)`: expected \(expected), got \(actual)")
            try compareTables(db, oracle)
        }
        try db.migrateAllBlocking()
        try compareTables(db, oracle)
        let quarantined = try db.pool.read { try $0.scalar("SELECT count(*) FROM sqlite_master WHERE name LIKE 'ferry_quarantine%'", as: Int.self) }
        if expectedQuarantined == 0 {
            try check(quarantined == 0, "rows were quarantined")
        } else {
            // The source rows that collide with held rows, and only those.
            let rows = try db.pool.read { try $0.scalar("SELECT count(*) FROM ferry_quarantine_t", as: Int.self) }
            try check(quarantined == 1 && rows == expectedQuarantined, "\(rows ?? 0) rows quarantined, expected \(expectedQuarantined)")
        }
    }

    /// `sql` with `{cursor}`, `{cursor-1}` and `{cursor+1}` replaced by the first source key the
    /// migration has not passed yet (and its neighbours), as the engine knows it now: 0 before the
    /// first step, 100 once the table finished. With fixed batches the value is the same at every
    /// replay of the workload.
    static func nearCursor(_ sql: String, db: FerryDatabase) -> String {
        guard sql.contains("{cursor") else { return sql }
        let cursor: Int64
        if let mapping = db.engine.migratingMappings.first {
            if mapping.sourceHasRowid {
                cursor = (mapping.record.cursor ?? 0) + 1
            } else if let key = mapping.record.keyCursor, case .integer(let first)? = Connection.rowKeyValues(key)?.first {
                cursor = first
            } else {
                cursor = 100
            }
        } else {
            cursor = 100
        }
        return sql.replacingOccurrences(of: "{cursor-1}", with: String(cursor - 1))
            .replacingOccurrences(of: "{cursor+1}", with: String(cursor + 1))
            .replacingOccurrences(of: "{cursor}", with: String(cursor))
    }

    /// `FERRY_DIFFERENTIAL_TRACE=1` prints every statement's outcome on both sides.
    static let traces = ProcessInfo.processInfo.environment["FERRY_DIFFERENTIAL_TRACE"] != nil

    /// Result column names, rows (as a sorted multiset, since RETURNING order is unspecified),
    /// changes and last rowid; or the primary result code of the error.
    struct Outcome: Equatable, CustomStringConvertible {
        var columns: [String] = []
        var rows: [String] = []
        var changes = 0
        var lastRowid: Int64 = 0
        var errorCode: Int32?
        var description: String {
            errorCode.map { "error \($0)" } ?? "columns \(columns), rows \(rows), changes \(changes), last rowid \(lastRowid)"
        }
    }

    func outcome(_ body: () throws(FerryError) -> ([String], [[Value]], Int, Int64)) -> Outcome {
        do {
            let (columns, rows, changes, rowid) = try body()
            return Outcome(columns: columns, rows: rows.map { "\($0)" }.sorted(), changes: changes, lastRowid: rowid)
        } catch {
            if ProcessInfo.processInfo.environment["FERRY_DIFFERENTIAL_DEBUG"] != nil { print("error: \(error)") }
            return Outcome(errorCode: error.resultCode?.primary.extendedCode ?? -1)
        }
    }

    func compareTables(_ db: FerryDatabase, _ oracle: Connection) throws {
        // The table's name now (a statement may have renamed it).
        let name = try oracle.scalar("SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('t', 't2')", as: String.self) ?? "t"
        let query = targetOptions.isEmpty ? "SELECT \(rowidSpelling), * FROM \(name) ORDER BY \(rowidSpelling)" : "SELECT * FROM \(name) ORDER BY id"
        let actual = try db.read { try $0.fetchAll(query).map(\.values) }
        let expected = try oracle.fetchAll(query).map(\.values)
        try check(actual == expected, "table contents differ:\n  expected \(expected)\n  got      \(actual)")
        // What the app's triggers wrote (sorted: an UPDATE may visit rows in another order).
        if flavour != .rowidOnly {
            let kids = "SELECT * FROM kids ORDER BY id"
            let actualKids = try db.read { try $0.fetchAll(kids).map(\.values) }
            try check(actualKids == (try oracle.fetchAll(kids).map(\.values)), "kids differ: got \(actualKids)")
        }
        if shapes.withOther {
            let others = "SELECT rowid, * FROM other ORDER BY rowid"
            let actualOthers = try db.read { try $0.fetchAll(others).map(\.values) }
            try check(actualOthers == (try oracle.fetchAll(others).map(\.values)), "other differs: got \(actualOthers)")
        }
        let logQuery = "SELECT event, k, a FROM log ORDER BY 1, 2, 3"
        let actualLog = try db.read { try $0.fetchAll(logQuery).map(\.values) }
        let expectedLog = try oracle.fetchAll(logQuery).map(\.values)
        try check(actualLog == expectedLog, "trigger log differs:\n  expected \(expectedLog)\n  got      \(actualLog)")
        if flavour == .autoincrement {
            // The next automatic key is part of the contract too (checked by the next insert).
        }
    }

    func check(_ condition: Bool, _ message: @autoclosure () -> String) throws {
        guard !condition else { return }
        throw Divergence(message: message())
    }

    /// The first difference between Ferry and the oracle.
    struct Divergence: Error {
        let message: String
    }
}
