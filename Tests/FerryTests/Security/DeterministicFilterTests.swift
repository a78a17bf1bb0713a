import FerrySQLite
import Foundation
import Testing
@testable import Ferry

/// Filters and column feeds mean the same thing at every step and at cleanup: a filter whose
/// value changes over time (the clock, randomness, the connection's state) or that has side
/// effects is refused when the plan is registered, with an error naming the function, and changes
/// nothing; a plan already registered compares with a re-applied one by meaning, not spelling.
@Suite(.timeLimit(.minutes(2))) struct DeterministicFilterTests {
    typealias World = BadInputMatrixTests.World

    /// Expects `plan` to be refused with `invalidFilter` mentioning `fragment`, changing nothing.
    func expectRefused(_ world: World, _ plan: MigrationPlan, mentioning fragment: String,
                       sourceLocation: SourceLocation = #_sourceLocation) throws {
        let before = try world.snapshot()
        let outcome = Result { try FerryDatabase(path: world.target, plan: plan) }
        switch outcome {
        case .success:
            Issue.record("accepted: \(fragment)", sourceLocation: sourceLocation)
        case .failure(FerryError.invalidFilter(_, let reason)):
            #expect(reason.lowercased().contains(fragment.lowercased()), "\(reason)", sourceLocation: sourceLocation)
        case .failure(let error):
            Issue.record("\(fragment): \(error)", sourceLocation: sourceLocation)
        }
        #expect(try world.snapshot() == before, "\(fragment) changed something", sourceLocation: sourceLocation)
    }

    @Test func clockRandomAndStatefulFiltersAreRefused() throws {
        let world = try World()
        let refused: [(filter: String, names: String)] = [
            ("id < unixepoch()", "unixepoch()"),
            ("random() % 2 = 0", "random()"),
            ("abs(random()) > 0", "random()"),
            ("id < julianday('now')", "julianday('now')"),
            ("date(id, 'unixepoch') < date('NOW')", "date('now')"),
            ("strftime('%s') > id", "strftime()"),
            ("datetime(id, 'unixepoch', 'localtime') > '2020'", "localtime"),
            ("date(id, 'unixepoch', body) > '2020'", "modifiers"),
            ("body < CURRENT_TIMESTAMP", "CURRENT_TIMESTAMP"),
            ("body < current_date", "CURRENT_DATE"),
            ("id > changes()", "changes()"),
            ("id > last_insert_rowid()", "last_insert_rowid()"),
            ("randomblob(2) IS NOT NULL", "randomblob()"),
            ("CASE WHEN id > 3 THEN random() ELSE 1 END", "random()"),
            ("id IN (1, 2, random())", "random()"),
            ("load_extension('x') IS NULL", "load_extension()"),
        ]
        for (filter, name) in refused {
            try expectRefused(world, world.plan(world.plainSource, filter: filter), mentioning: name)
        }
        if SQLiteEngine.supportsEncryption {
            try expectRefused(world, world.plan(world.plainSource, filter: "sqlcipher_export('main') IS NULL"), mentioning: "sqlcipher_export()")
        }
    }

    @Test func nonDeterministicColumnFeedsAreRefused() throws {
        let world = try World()
        try Connection(path: world.target).execute("CREATE TABLE fed(id INTEGER PRIMARY KEY, conversation_id INTEGER, body TEXT, stamp)")
        for (expression, name) in [("unixepoch()", "unixepoch()"), ("random()", "random()"), ("CURRENT_TIME", "CURRENT_TIME")] {
            let plan = MigrationPlan(sources: [MigrationSource(.file(world.plainSource), tables: [
                TableMapping(target: "fed", source: "messages", columns: [ColumnFeed("stamp", from: expression)]),
            ])])
            try expectRefused(world, plan, mentioning: name)
        }
    }

    @Test func deterministicFiltersStillWork() throws {
        let accepted = [
            "abs(id) < 10", "lower(body) LIKE 'message 1%'", "date(id, 'unixepoch') < '1970-01-01 00:00:30'",
            "strftime('%Y', id, 'unixepoch') = '1970'", "coalesce(body, '') <> ''", "id BETWEEN 3 AND 12 AND body GLOB 'm*'",
            "iif(id % 2 = 0, 1, 0) = 1", "length(body) > 3", "CAST(id AS TEXT) < '5'", "julianday(id, 'unixepoch', '+1 day') > 0",
        ]
        for filter in accepted {
            let world = try World()
            let db = try FerryDatabase(path: world.target, plan: world.plan(world.plainSource, filter: filter))
            let expected = try Connection(path: world.plainSource).scalar("SELECT count(*) FROM messages WHERE \(filter)", as: Int.self)
            #expect(try db.read { try $0.scalar("SELECT count(*) FROM messages", as: Int.self) } == expected, "\(filter)")
            try db.migrateAllBlocking()
            #expect(try db.read { try $0.scalar("SELECT count(*) FROM messages", as: Int.self) } == expected, "\(filter)")
        }
    }

    /// A catalog that holds a non-deterministic filter (registered by a version without this
    /// check, simulated by editing the catalog) is refused at open: no step moves or cleans with it.
    @Test func aRegisteredNonDeterministicFilterIsRefusedAtOpen() throws {
        let world = try World()
        do {
            let db = try FerryDatabase(path: world.target, plan: world.plan(world.plainSource, filter: "id % 2 = 0"))
            _ = try db.step()
        }
        let raw = try Connection(path: world.target)
        try raw.execute("UPDATE ferry_migration_tables SET filter = 'id % 2 = 0 OR random() > 0'")
        raw.close()
        let before = try world.snapshot()
        #expect {
            _ = try FerryDatabase(path: world.target)
        } throws: { error in
            guard case FerryError.invalidFilter(_, let reason) = error else { return false }
            return reason.contains("random()")
        }
        #expect(try world.snapshot() == before)
    }

    /// A plan re-applied with another spelling of the same filter and feeds is the same plan; a
    /// different meaning is still a conflict.
    @Test func plansCompareByMeaning() throws {
        let world = try World()
        try Connection(path: world.target).execute("CREATE TABLE fed(id INTEGER PRIMARY KEY, conversation_id INTEGER, body TEXT, shout TEXT)")
        func plan(_ filter: String, _ feed: String) -> MigrationPlan {
            MigrationPlan(sources: [MigrationSource(.file(world.plainSource), tables: [
                TableMapping(target: "fed", source: "messages", filter: filter, columns: [ColumnFeed("shout", from: feed)]),
            ])])
        }
        do { _ = try FerryDatabase(path: world.target, plan: plan("conversation_id < 2 AND body <> 'x'", "upper(body)")) }
        for (filter, feed) in [("conversation_id<2 AND body<>'x'", "upper(body)"),
                               ("(Conversation_ID < 2) and \"body\" <> 'x'", "UPPER( body )"),
                               ("  conversation_id <   2\nAND body <> 'x' ", "upper((body))")] {
            let db = try FerryDatabase(path: world.target, plan: plan(filter, feed))
            #expect(try db.progress().tables.count == 1, "\(filter)")
        }
        let before = try world.snapshot()
        for (filter, feed) in [("conversation_id < 3 AND body <> 'x'", "upper(body)"),
                               ("conversation_id < 2 AND body <> 'X'", "upper(body)"),
                               ("conversation_id < 2 AND body <> 'x'", "lower(body)")] {
            #expect("\(filter) / \(feed)") {
                _ = try FerryDatabase(path: world.target, plan: plan(filter, feed))
            } throws: { error in
                if case FerryError.invalidPlan = error { return true }
                return false
            }
        }
        #expect(try world.snapshot() == before)
    }
}
