import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@_spi(Benchmarks) @testable import Ferry

/// `waitUntilMigrated()` returns once every table is migrated, whenever it is called: before,
/// during or after the completion.
@Suite(.timeLimit(.minutes(1))) struct CompletionTests {
    @Test func aCompletionBeforeTheCallIsNotMissed() async throws {
        let box = Sandbox()
        let db = try FerryDatabase(path: box.path("app.db"), plan: .messages(from: try box.makeLegacy(rows: 100)))
        defer { db.close() }
        try db.migrateAllBlocking()
        try await db.waitUntilMigrated()  // would hang on an event loop: .allFinished came before
        #expect(try db.isMigrated)
    }

    @Test func itWaitsForAutoMigration() async throws {
        let box = Sandbox()
        let db = try FerryDatabase(path: box.path("app.db"), plan: .messages(from: try box.makeLegacy(rows: 3000)),
                                   options: .fixedBatches(of: 100))
        defer { db.close() }
        #expect(try !db.isMigrated)
        db.startAutoMigration()
        try await db.waitUntilMigrated()
        #expect(try db.isMigrated)
        #expect(try await db.read { try $0.scalar("SELECT count(*) FROM messages", as: Int.self) } == 3000)
    }

    @Test func closingTheDatabaseEndsTheWait() async throws {
        let box = Sandbox()
        let db = try FerryDatabase(path: box.path("app.db"), plan: .messages(from: try box.makeLegacy(rows: 100)))
        let waiter = Task { try await db.waitUntilMigrated() }
        try await Task.sleep(for: .milliseconds(50))
        db.close()
        await #expect(throws: FerryError.connectionClosed) { try await waiter.value }
    }

    @Test func cancellingTheTaskEndsTheWait() async throws {
        let box = Sandbox()
        let db = try FerryDatabase(path: box.path("app.db"), plan: .messages(from: try box.makeLegacy(rows: 100)))
        defer { db.close() }
        let waiter = Task { try await db.waitUntilMigrated() }
        try await Task.sleep(for: .milliseconds(50))
        waiter.cancel()
        await #expect(throws: FerryError.cancelled) { try await waiter.value }
    }
}
