import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@_spi(Benchmarks) @testable import Ferry

/// Tables registered before batches recorded their rows (`moves_recorded = 0`, simulated here)
/// clean by the mapping's filter. If the filter's meaning changed after the rows moved (simulated
/// by editing the registered filter), cleanup would delete rows that never reached the target: it
/// counts the matching rows first, refuses with `FerryError.cleanupRefused` and deletes nothing.
/// (Tables registered now delete exactly the rows their batches recorded: `RecordedMovesTests`.)
@Suite(.timeLimit(.minutes(2))) struct CleanupGateTests {
    @Test func aFilterWhoseMeaningChangedDeletesNothingInAnOlderCatalog() throws {
        let box = Sandbox()
        let legacy = try box.makeLegacy(rows: 40)
        let plan = MigrationPlan(sources: [MigrationSource(.file(legacy), tables: [TableMapping(target: "messages", source: "messages", filter: "id % 2 = 0")])])
        do {
            let db = try FerryDatabase(path: box.path("app.db"), plan: plan, options: .fixedBatches(of: 7))
            // An app write moves a row ahead of the stepper: it counts as moved.
            try db.write { try $0.execute("UPDATE messages SET body = 'edited' WHERE id = 36") }
            while let report = try db.step(), !report.tableFinished {}
            db.close()
        }
        let raw = try Connection(path: box.path("app.db"))
        #expect(try raw.scalar("SELECT rows_moved + rows_moved_ahead FROM ferry_migration_tables", as: Int.self) == 20)
        let verified = try FerryDatabase(path: box.path("app.db")).verify()
        #expect(verified.tables.first?.rowsUnaccounted == 0, "\(verified)")  // (row 36 differs: the app edited it)
        try raw.execute("UPDATE ferry_migration_tables SET filter = 'id % 3 = 0', moves_recorded = 0")
        let db = try FerryDatabase(path: box.path("app.db"), options: .fixedBatches(of: 7))
        // verify sees it before cleanup would: 13 rows match now, 20 moved.
        let verification = try db.verify()
        #expect(!verification.isConsistent)
        #expect(verification.tables.first?.rowsUnaccounted == 7, "\(verification)")
        #expect {
            while try db.step() != nil {}
        } throws: { error in
            guard case FerryError.cleanupRefused(let table, let reason) = error else { return false }
            return table == "messages" && reason.contains("13") && reason.contains("20")
        }
        #expect(try messages(try Connection(path: legacy), table: "messages").count == 40)
        #expect(try raw.scalar("SELECT count(*) FROM messages", as: Int.self) == 20)
        // Put back, the filter means what it meant: cleanup goes on and removes exactly the moved rows.
        try raw.execute("UPDATE ferry_migration_tables SET filter = 'id % 2 = 0'")
        db.close()
        let again = try FerryDatabase(path: box.path("app.db"), options: .fixedBatches(of: 7))
        try again.migrateAllBlocking()
        #expect(try messages(try Connection(path: legacy), table: "messages").map { $0[0] } == (1...40).filter { $0 % 2 == 1 }.map { Value.integer(Int64($0)) })
    }
}
