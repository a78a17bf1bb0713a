import Ferry
import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The example service as its users run it: a process, driven over HTTP while its migration runs,
/// stopped with SIGTERM in the middle and started again. Afterwards every legacy row is in the
/// target exactly once, and every write the service acknowledged is there.
@Suite(.timeLimit(.minutes(5))) struct ServiceProcessTests {
    static let rows = 100_000

    @Test func sigtermMidMigrationLosesNothingAndTheNextStartFinishes() async throws {
        let directory = try Scratch()
        try Self.makeLegacy(at: directory.path("legacy.db"), rows: Self.rows)
        // Slow pacing, so that the first run is stopped mid-migration: 1 ms batches every 50 ms.
        try Self.writePlan(in: directory, schedule: #"{ "budgetMilliseconds": 1, "intervalMilliseconds": 50 }"#)
        let expected = (1...Self.rows).filter { $0 % 2000 < 1000 }.count
        var acknowledged: [Int64: String] = [:]

        // First run: reads and writes while rows move, the documented metrics, then SIGTERM.
        do {
            let service = try ServiceProcess(directory: directory)
            let status = try await service.waitForStatus { $0.rows_moved > 0 }
            #expect(status.finished == false && status.rows_left > 0)
            for id in [1, 999, 2001, Int64(Self.rows - 1001)] {
                let message = try await service.message(id)
                #expect(message?.body == "legacy \(id)")
            }
            #expect(try await service.message(Int64(1500)) == nil)  // conversation 1500: not migrated, not in the app
            for n in 0..<20 {
                let body = "first run \(n)"
                let message = try await service.post(conversation: Int64(n), body: body)
                acknowledged[message.id] = body
                #expect(try await service.message(message.id)?.body == body)
            }
            let metrics = try await service.get("metrics")
            for series in ["ferry_rows_moved_total{table=\"messages\",source=\"legacy.db/messages\"}",
                           "ferry_rows_left{table=\"messages\",source=\"legacy.db/messages\"}",
                           "ferry_table_state{table=\"messages\",source=\"legacy.db/messages\",state=\"migrating\"} 1",
                           "ferry_step_duration_seconds_bucket{table=\"messages\",source=\"legacy.db/messages\",kind=\"move\"",
                           "ferry_errors_total{kind=\"step\"} 0", "ferry_checkpoint_waits_total"] {
                #expect(metrics.contains(series), "missing \(series)")
            }
            let status2 = try await service.status()
            #expect(status2.rows_left > 0, "the migration must still run when SIGTERM arrives")
            let exitStatus = try await service.terminate()
            #expect(exitStatus == 0)
        }
        let stopped = try Self.progress(directory)
        #expect(stopped.rowsMoved > 0 && stopped.rowsLeft > 0)

        // Second run, at full speed (the schedule is the plan file's, not part of the registered
        // plan): more writes, and the migration finishes.
        try Self.writePlan(in: directory, schedule: #"{ "drain": true }"#)
        do {
            let service = try ServiceProcess(directory: directory)
            for n in 0..<10 {
                let message = try await service.post(conversation: 5, body: "second run \(n)")
                acknowledged[message.id] = "second run \(n)"
            }
            let status = try await service.waitForStatus(timeout: .seconds(120)) { $0.finished }
            #expect(status.rows_left == 0)
            #expect(try await service.message(Int64(Self.rows - 1001))?.body == "legacy \(Self.rows - 1001)")
            #expect(try await service.terminate() == 0)
        }

        // The database, checked with Ferry: every legacy row exactly once, every acknowledged write.
        let database = try FerryDatabase(path: directory.path("app.db"))
        defer { database.close() }
        #expect(try database.isMigrated)
        #expect(try database.verify().isConsistent)
        let (legacyRows, distinctLegacy, wrongBodies) = try await database.read { db in
            let row = try db.fetchOne("""
                SELECT count(*), count(DISTINCT body), sum(body != 'legacy ' || id) FROM messages WHERE body LIKE 'legacy %'
                """)!
            return (try row.get(0, as: Int.self), try row.get(1, as: Int.self), try row.get(2, as: Int.self))
        }
        #expect(legacyRows == expected && distinctLegacy == expected && wrongBodies == 0)
        for (id, body) in acknowledged {
            let stored = try await database.read { db in try db.scalar("SELECT body FROM messages WHERE id = ?", [id], as: String.self) }
            #expect(stored == body, "acknowledged write \(id)")
        }
    }

    /// The plan file: conversations below 1000 move from legacy.db into app.db, with `schedule`.
    static func writePlan(in directory: Scratch, schedule: String) throws {
        try """
            { "target": { "path": "app.db" },
              "sources": [ { "path": "legacy.db",
                             "tables": [ { "source": "messages", "filter": "conversation_id < 1000" } ] } ],
              "schedule": \(schedule) }
            """.write(toFile: directory.path("plan.json"), atomically: true, encoding: .utf8)
    }

    /// The demo's legacy schema, with bodies that name their row.
    static func makeLegacy(at path: String, rows: Int) throws {
        let legacy = try FerryDatabase(path: path)
        defer { legacy.close() }
        try legacy.write { db in
            try db.execute("CREATE TABLE messages(id INTEGER PRIMARY KEY, conversation_id INTEGER NOT NULL, sender TEXT, body TEXT, sent_at REAL)")
            try db.execute("""
                WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < ?)
                INSERT INTO messages SELECT x, x % 2000, 'user', 'legacy ' || x, 1700000000 + x FROM n
                """, [rows])
        }
    }

    static func progress(_ directory: Scratch) throws -> MigrationProgress {
        let database = try FerryDatabase(path: directory.path("app.db"))
        defer { database.close() }
        return try database.progress()
    }
}
