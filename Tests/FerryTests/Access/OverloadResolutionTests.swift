import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@testable import Ferry

/// Which form of `read`, `write`, `inSavepoint` and `forEach` Swift picks for the spellings apps
/// write: the typed form (`throws(FerryError)`) for a body that says it throws only `FerryError`
/// or throws nothing, and the async form in async code.
///
/// Typed: checked when this file compiles. A `do` statement's caught error has the type the calls
/// in it throw, and each probe below hands that error to `typed(_:)`, which takes a `FerryError`:
/// were the untyped form picked, the error would be `any Error` and the test target would not
/// build. (Inside a closure Swift infers no typed error for a plain `do`, whatever it calls: the
/// probes there use `do throws(FerryError)`, which fails to build the same way.)
///
/// Async: checked when the tests run. The async forms run the body on the pool's own queue,
/// outside any task; the blocking forms run it on the calling thread, inside the caller's task.
/// A body that sees no current task ran in the async form; the blocking control below shows the
/// probe tells them apart.
@Suite(.timeLimit(.minutes(1))) struct OverloadResolutionTests {
    struct AppError: Error {}

    /// Takes a typed error only: the compile-time probe.
    private func typed(_ error: FerryError) {}

    /// True when the calling code runs inside a Swift task.
    @Sendable private static func inTask(_ db: FerryConnection) -> Bool { withUnsafeCurrentTask { $0 != nil } }

    static func database(_ box: Sandbox) throws -> FerryDatabase {
        let legacy = try box.makeLegacy(rows: 20)
        let db = try FerryDatabase(path: box.path("app.db"), plan: .messages(from: legacy), options: .fixedBatches(of: 10))
        try db.step()  // messages is migrating
        return db
    }

    @Test func typedBodiesTakeTheTypedForms() throws {
        let box = Sandbox()
        let db = try Self.database(box)
        defer { db.close() }
        let migrator = SchemaMigrator()

        do { _ = try db.read { db throws(FerryError) in try db.fetchAll("SELECT * FROM messages") } } catch { typed(error) }
        do { _ = try db.read { _ in 1 } } catch { typed(error) }  // a body that throws nothing
        do { _ = try db.read(migrator.appliedIdentifiers) } catch { typed(error) }  // a typed function
        do {
            let count = try db.write { db throws(FerryError) -> Int in
                try db.execute("UPDATE messages SET body = 'w' WHERE id = 15")
                return db.changes
            }
            #expect(count == 1)
        } catch { typed(error) }
        do {
            try db.write { db throws(FerryError) in
                try db.inSavepoint { () throws(FerryError) in try db.execute("UPDATE messages SET body = 's' WHERE id = 16") }
                _ = try db.inSavepoint { 1 }
                try db.fetchCursor("SELECT id FROM messages").forEach { row throws(FerryError) in _ = try row["id"] as Int64 }
            }
        } catch { typed(error) }

        // Inside closures: an untyped throwing closure, a generic one, `Result`.
        let work: () throws -> Void = {
            do throws(FerryError) { try db.write { db throws(FerryError) in try db.execute("UPDATE messages SET body = 'c' WHERE id = 17") } } catch { throw error }
        }
        try work()
        func run<E: Error>(_ body: () throws(E) -> Void) throws(E) { try body() }
        try run {
            do throws(FerryError) { _ = try db.read { db throws(FerryError) in try db.fetchOne("SELECT 1") } } catch { throw error }
        }
        let result = Result { () throws(FerryError) in try db.read { db throws(FerryError) in try db.scalar("SELECT count(*) FROM messages", as: Int.self) } }
        #expect(try result.get() == 20)

        // A body that throws the app's own error takes the untyped form, and the error passes unchanged.
        do {
            try db.write { _ in throw AppError() }
            Issue.record("no error")
        } catch {
            #expect(error is AppError)
        }
        #expect(try db.read { db throws(FerryError) in try db.fetchAll("SELECT body FROM messages WHERE id IN (15, 16, 17) ORDER BY id") }
            .map { $0[0] } == [.text("w"), .text("s"), .text("c")])
    }

    @Test func asyncCallsTakeTheAsyncForms() async throws {
        let box = Sandbox()
        let db = try Self.database(box)
        defer { db.close() }

        // The control: the blocking form runs the body inside the calling task.
        #expect(try blockingRead(db))

        #expect(try await !db.read(Self.inTask))
        #expect(try await !db.write(Self.inTask))
        #expect(try await !db.read { db throws(FerryError) in _ = try db.fetchAll("SELECT * FROM messages"); return Self.inTask(db) })
        #expect(try await !db.read { db in _ = try db.fetchAll("SELECT * FROM messages"); return Self.inTask(db) })
        #expect(try await !db.write { db throws(FerryError) in try db.execute("UPDATE messages SET body = 'a' WHERE id = 12"); return Self.inTask(db) })
        #expect(try await !db.write { db in if db.changes < 0 { throw AppError() }; return Self.inTask(db) })
        do { _ = try await db.read { db throws(FerryError) in try db.fetchAll("SELECT 1") } } catch { typed(error) }
        do { try await db.write { db throws(FerryError) in try db.execute("UPDATE messages SET body = 'b' WHERE id = 13") } } catch { typed(error) }
        // In a task and in a task group.
        #expect(try await Task { try await !db.read { db throws(FerryError) in Self.inTask(db) } }.value)
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask { try await db.write { db throws(FerryError) in Self.inTask(db) } }
            for try await inTask in group { #expect(!inTask) }
        }
    }

    /// `read` from synchronous code: the blocking form.
    private func blockingRead(_ db: FerryDatabase) throws(FerryError) -> Bool {
        try db.read { db throws(FerryError) in Self.inTask(db) }
    }
}
