#if ServiceLifecycle
import Ferry
import FerryTestSupport
import Foundation

/// A legacy database with `rows` messages (conversation = id % 3) and an app database that
/// registers their migration, for the services tests.
struct ServiceFixture {
    typealias Box = Sandbox
    let box = Sandbox()
    let legacyPath: String
    let appPath: String
    let plan: MigrationPlan

    init(rows: Int, filter: String? = nil) throws {
        legacyPath = box.path("legacy.db")
        appPath = box.path("app.db")
        let legacy = try FerryDatabase(path: legacyPath)
        try legacy.write { db throws(FerryError) in
            try db.execute("CREATE TABLE messages(id INTEGER PRIMARY KEY, conversation INTEGER NOT NULL, body TEXT)")
            try db.execute("""
                WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < ?)
                INSERT INTO messages SELECT x, x % 3, 'message ' || x FROM n
                """, [rows])
        }
        legacy.close()
        plan = MigrationPlan(sources: [MigrationSource(.file(legacyPath), tables: [
            TableMapping(target: "messages", source: "messages", filter: filter),
        ])])
    }

    /// The app database, with the plan registered.
    func open(readOnly: Bool = false) throws(FerryError) -> FerryDatabase {
        var configuration = DatabaseConfiguration()
        configuration.readOnly = readOnly
        return try FerryDatabase(path: appPath, configuration: configuration, plan: plan)
    }

    /// Waits (polling, at most `timeout`) until `condition` holds; returns whether it did. The
    /// default outlasts the whole parallel suite (about 50 s on 2 cores): the synchronous tests
    /// around hold the cooperative threads the reporter's task needs, so under that load the
    /// condition may first be checked tens of seconds late (the suites' time limit is 2 minutes).
    static func eventually(timeout: Duration = .seconds(100), _ condition: () throws -> Bool) async rethrows -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if try condition() { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return try condition()
    }
}
#endif
