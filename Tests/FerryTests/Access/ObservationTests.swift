import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@testable import Ferry

/// `observe` yields a query's rows, then again after each commit of the app's writes that changes
/// them; never for a migration step (it does not even run the query again), nor for a commit that
/// leaves them as they were. On a migrating table (plain and encrypted), through its end.
@Suite(.timeLimit(.minutes(2))) struct ObservationTests {
    @Test(arguments: [false, SQLiteEngine.supportsEncryption])
    func observedQueriesFollowTheAppsCommitsNotTheSteps(encrypted: Bool) async throws {
        let box = Sandbox()
        let cipher: Cipher? = encrypted ? .passphrase("k", settings: CipherSettings(compatibility: 4, kdfIterations: 2)) : nil
        let legacy = try box.makeLegacy(rows: 30, cipher: cipher)
        let db = try FerryDatabase(path: box.path("app.db"), configuration: .init(cipher: cipher), plan: .messages(from: legacy, cipher: cipher),
                                   options: .fixedBatches(of: 10))
        defer { db.close() }
        try await db.write { db throws(FerryError) in try db.execute("CREATE TABLE other(x)") }

        var updates = db.observe("SELECT count(*), max(body) FROM messages WHERE conversation_id = 1").makeAsyncIterator()
        #expect(try await updates.next()?.map(\.values) == [[.integer(10), .text("message 7")]])
        let runs = db.observationRuns.load(ordering: .relaxed)
        // Steps move rows; the query's rows stay, and it does not run again.
        try await db.step()
        try await db.step()
        #expect(db.observationRuns.load(ordering: .relaxed) == runs)
        // A commit that does not change the rows yields nothing; the next one that does, yields.
        try await db.write { db throws(FerryError) in try db.execute("INSERT INTO other VALUES (1)") }
        try await db.write { db throws(FerryError) in try db.execute("UPDATE messages SET body = 'z' WHERE id = 28") }  // a pending row
        #expect(try await updates.next()?.map(\.values) == [[.integer(10), .text("z")]])
        // Records, through the end of the migration and the source's cleanup.
        struct Count: Decodable, Sendable { var n: Int }
        var counts = db.observe(Count.self, "SELECT count(*) AS n FROM messages").makeAsyncIterator()
        #expect(try await counts.next()?.first?.n == 30)
        try await db.migrateAll()
        try await db.write { db throws(FerryError) in try db.execute("DELETE FROM messages WHERE id <= 3") }
        #expect(try await counts.next()?.first?.n == 27)
    }

    /// A query that fails ends the sequence with its error; closing the database ends it.
    @Test func errorsAndClosingEndTheSequence() async throws {
        let box = Sandbox()
        let db = try FerryDatabase(path: box.path("app.db"), plan: .messages(from: try box.makeLegacy(rows: 5)))
        var failing = db.observe("SELECT * FROM nowhere").makeAsyncIterator()
        await #expect(throws: FerryError.self) { _ = try await failing.next() }
        var rows = db.observe("SELECT count(*) FROM messages").makeAsyncIterator()
        #expect(try await rows.next() != nil)
        db.close()
        #expect(try await rows.next() == nil)
    }
}
