import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@_spi(Benchmarks) @testable import Ferry

/// A setting the app's statements change on a connection outlives the app's transaction: one that
/// would leave the writer unusable for Ferry (and for every later write) is refused with
/// `FerryError.accessDenied`, and the writer goes on.
@Suite(.timeLimit(.minutes(2))) struct WriterSettingsTests {
    /// `PRAGMA query_only = 1` used to stay on the writer: every later write and step failed with
    /// "attempt to write a readonly database", even the app's `PRAGMA query_only = 0`.
    @Test func queryOnlyCannotLeaveTheWriterReadOnly() throws {
        let world = try AuthorizerTests.World()
        for sql in ["PRAGMA query_only = 1", "PRAGMA query_only = ON", "PRAGMA main.query_only = true"] {
            try world.expectDenied(sql, object: "PRAGMA")
        }
        // The pair the app would run, in one write and in two.
        #expect(throws: FerryError.self) {
            try world.db.write { db in
                try db.execute("PRAGMA query_only = 1")
                try db.execute("PRAGMA query_only = 0")
            }
        }
        _ = try? world.db.write { try $0.execute("PRAGMA query_only = 1") }
        try world.db.write { try $0.execute("PRAGMA query_only = 0") }
        // Reading the setting, and switching it off, stay allowed.
        #expect(try world.db.write { try $0.scalar("PRAGMA query_only", as: Int.self) } == 0)
        // The migrating table takes writes (id 35 is still in the source), and steps go on.
        try world.db.write { try $0.execute("UPDATE messages SET body = 'edited' WHERE id = 35; INSERT INTO keep VALUES (2)") }
        #expect((try world.db.step()?.rowsMoved ?? 0) > 0)
        try world.expectMigrationCompletes()
        #expect(try world.db.read { try $0.scalar("SELECT body FROM messages WHERE id = 35", as: String.self) } == "edited")
    }

    /// The heap limits are process-wide (every connection shares them) and SQL can only lower
    /// `hard_heap_limit`: refused with a value (decided without running them, as they would starve
    /// every other test of the process).
    @Test func heapLimitsAreRefused() {
        let policy = AccessPolicy(targetPath: "/nonexistent/app.db", sourcePaths: { [] })
        func denied(_ name: String, _ value: String?) -> Bool {
            if case .deny = policy.decide(.init(action: .pragma, first: name, second: value), trust: .untrusted) { return true }
            return false
        }
        #expect(denied("hard_heap_limit", "100000"))
        #expect(denied("soft_heap_limit", "1"))
        #expect(!denied("hard_heap_limit", nil))
        #expect(denied("query_only", "yes"))
        #expect(!denied("query_only", "off"))
        #expect(!denied("query_only", nil))
    }
}
