import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@testable import Ferry

/// `verify` tells the app's ordinary edits of moved rows from real differences: the rows the app
/// updates, deletes or replaces after they moved are recorded as it writes them, left out of the
/// comparison and counted apart; a row changed behind Ferry's back is still reported. On every
/// placement, with and without a filter (recorded cleanup or rowid ranges), while migrating and
/// once finished until the source is cleaned.
@Suite(.timeLimit(.minutes(2))) struct VerifyAppEditsTests {
    typealias Placement = TestPlacement

    /// (The filter matches every row: its batches record their rows, which verify reads.)
    @Test(arguments: Placement.available, [nil, "conversation_id < 3"])
    func ordinaryEditsAreNotDifferencesAndRealOnesStillAre(placement: Placement, filter: String?) throws {
        let box = Sandbox()
        let files = placement.files(in: box, table: "messages", sameFileTable: "messages_old")
        let cipher = files.cipher, app = files.appPath
        _ = try box.makeLegacy(rows: 300, name: placement == .sameFile ? "app.db" : "legacy.db", cipher: cipher, table: files.sourceTable)
        let db = try FerryDatabase(path: app, configuration: .init(cipher: cipher), plan: files.plan(target: "messages", filter: filter),
                                   options: .fixedBatches(of: 100))
        defer { db.close() }
        try db.step()
        try db.step()  // ids 1-200 moved
        try db.write { db throws(FerryError) in
            try db.execute("UPDATE messages SET body = body || ' (edited)' WHERE id BETWEEN 11 AND 30")  // 20 moved rows
            try db.execute("DELETE FROM messages WHERE id BETWEEN 41 AND 50")                          // 10
            for id in 61...65 {                                                                          // 5, replaced
                try db.execute("INSERT OR REPLACE INTO messages(id, conversation_id, body) VALUES (?, ?, 'replaced')", [.integer(Int64(id)), .integer(Int64(id % 3))])
            }
            try db.execute("UPDATE messages SET body = 'moved ahead, then edited' WHERE id BETWEEN 251 AND 255")  // 5 pending rows
            try db.execute("UPDATE messages SET id = id + 1000 WHERE id = 70")                          // a key change: both rowids
        }
        // The recording changes nothing SQL's changes() shows the rest of the statement (the
        // DELETE's 1 for every row, as on the finished table), and the app cannot call the recorder.
        let bodies = try db.write { db throws(FerryError) in
            try db.execute("DELETE FROM messages WHERE id = 299")
            return try db.fetchAll("UPDATE messages SET body = 'after ' || changes() WHERE id BETWEEN 101 AND 104 RETURNING body")
                .map { row throws(FerryError) in try sqlite(row.column(0, as: String.self)) }
        }
        #expect(bodies == Array(repeating: "after 1", count: 4))
        #expect { try db.write { try $0.execute("SELECT ferry_record_edit('messages', 7)") } } throws: { error in
            if case FerryError.accessDenied? = error as? FerryError { return true }
            return false
        }
        // A rolled-back edit is not recorded (its record rolls back with it).
        #expect(throws: FerryError.self) {
            try db.write { db throws(FerryError) in
                try db.execute("UPDATE messages SET body = 'never' WHERE id = 90")
                throw FerryError.misuse("roll back")
            }
        }
        var verification = try db.verify()
        var table = try #require(verification.tables.first)
        #expect(verification.isConsistent, "\(table)")
        #expect(table.rowsMissing == 0 && table.rowsDiffering == 0)
        #expect(table.rowsEditedByApp == 20 + 10 + 5 + 5 + 1 + 1 + 4, "\(table)")  // and rows 299, 101-104

        // A moved row changed behind Ferry's back is still a difference.
        let raw = try Connection(path: app, configuration: .init(cipher: cipher))
        try raw.execute("UPDATE messages SET body = 'tampered' WHERE id = 100")
        verification = try db.verify()
        table = try #require(verification.tables.first)
        #expect(table.rowsDiffering == 1 && table.sampleRowids == [100], "\(table)")
        try raw.execute("UPDATE messages SET body = 'message 100' WHERE id = 100")

        // Finished, source not cleaned yet: edits are still recorded, and compared no more.
        while try db.progress().tables.first?.state != .finished { try db.step() }
        try db.write { try $0.execute("UPDATE messages SET body = 'after the end' WHERE id = 290") }
        table = try #require(try db.verify().tables.first)
        #expect(table.isConsistent && table.rowsEditedByApp == 47, "\(table)")
        #expect(try raw.scalar("SELECT count(*) FROM ferry_migration_edited", as: Int.self) == 47 + 1)  // row 70 twice: 70 and 1070

        // Cleaned: nothing is compared any more, and the record is gone.
        try db.migrateAllBlocking()
        #expect(try db.verify().isConsistent)
        #expect(try raw.scalar("SELECT count(*) FROM ferry_migration_edited", as: Int.self) == 0)
        raw.close()
    }

    /// A target matched to its source by key (a source and target `WITHOUT ROWID`): the app's edits
    /// are recorded by the digest of the row's key, and left out alike; a tampered row is reported.
    @Test(arguments: Placement.available)
    func editsOfATargetMatchedByKey(placement: Placement) throws {
        let box = Sandbox()
        let files = placement.files(in: box, table: "kv", sameFileTable: "kv_old")
        let cipher = files.cipher, app = files.appPath, sourceTable = files.sourceTable
        let source = try files.openSource()
        try source.execute("CREATE TABLE \(sourceTable)(k TEXT, n INTEGER, v TEXT, PRIMARY KEY (k, n)) WITHOUT ROWID")
        try source.execute("WITH RECURSIVE i(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM i WHERE x < 100) "
                           + "INSERT INTO \(sourceTable) SELECT printf('k%03d', x), x % 2, 'v' || x FROM i")
        source.close()
        let db = try FerryDatabase(path: app, configuration: .init(cipher: cipher), plan: files.plan(target: "kv"), options: .fixedBatches(of: 50))
        defer { db.close() }
        try db.step()  // k001-k050 moved
        try db.write { db throws(FerryError) in
            try db.execute("UPDATE kv SET v = v || ' (edited)' WHERE k BETWEEN 'k001' AND 'k010'")      // 10 moved rows
            try db.execute("DELETE FROM kv WHERE k BETWEEN 'k011' AND 'k015'")                          // 5
            try db.execute("INSERT OR REPLACE INTO kv VALUES ('k020', 0, 'replaced'), ('k022', 0, 'replaced')")  // 2, replaced
            try db.execute("UPDATE kv SET v = 'moved ahead, then edited' WHERE k = 'k090'")              // 1 pending row
            try db.execute("UPDATE kv SET k = 'k030b' WHERE k = 'k030'")                                 // a key change
        }
        var table = try #require(try db.verify().tables.first)
        #expect(table.isConsistent && table.rowsMissing == 0 && table.rowsDiffering == 0, "\(table)")
        #expect(table.rowsEditedByApp == 10 + 5 + 2 + 1 + 1, "\(table)")
        // A moved row changed behind Ferry's back is still a difference.
        let raw = try Connection(path: app, configuration: .init(cipher: cipher))
        defer { raw.close() }
        try raw.execute("UPDATE kv SET v = 'tampered' WHERE k = 'k040'")
        table = try #require(try db.verify().tables.first)
        #expect(table.rowsDiffering == 1, "\(table)")
        try raw.execute("UPDATE kv SET v = 'v40' WHERE k = 'k040'")
        try db.migrateAllBlocking()
        #expect(try db.verify().isConsistent)
    }

    /// The app renames the migrating table and back, with edits before, between and after, some
    /// written at a step, some still in memory, one in the rename's own transaction: every rename
    /// succeeds (it once failed on Ferry's record of the edits, found by the differential harness,
    /// seed 70197), and verify leaves out exactly the edited rows under whatever name the table has.
    @Test(arguments: Placement.available)
    func editsFollowTheTableThroughRenames(placement: Placement) throws {
        let box = Sandbox()
        let files = placement.files(in: box, table: "messages", sameFileTable: "messages_old")
        _ = try box.makeLegacy(rows: 300, name: placement == .sameFile ? "app.db" : "legacy.db", cipher: files.cipher, table: files.sourceTable)
        let db = try FerryDatabase(path: files.appPath, configuration: .init(cipher: files.cipher), plan: files.plan(target: "messages"),
                                   options: .fixedBatches(of: 100))
        defer { db.close() }
        try db.step()  // ids 1-100 moved
        try db.write { db throws(FerryError) in try db.execute("DELETE FROM messages WHERE id BETWEEN 1 AND 5") }  // kept in memory
        try db.write { db throws(FerryError) in
            try db.execute("UPDATE messages SET body = 'edited' WHERE id BETWEEN 6 AND 8")
            try db.execute("ALTER TABLE messages RENAME TO messages2")
            try db.execute("UPDATE messages2 SET body = 'edited' WHERE id IN (6, 9)")  // 6 again, under the new name
        }
        try db.step()  // written at this step, under messages2; ids 101-200 moved
        try db.write { db throws(FerryError) in try db.execute("DELETE FROM messages2 WHERE id IN (10, 150)") }
        try db.write { db throws(FerryError) in try db.execute("ALTER TABLE messages2 RENAME TO messages") }
        try db.step()
        try db.write { db throws(FerryError) in try db.execute("ALTER TABLE messages RENAME TO messages2") }
        try db.write { db throws(FerryError) in try db.execute("ALTER TABLE messages2 RENAME TO messages") }
        let table = try #require(try db.verify().tables.first)
        #expect(table.isConsistent && table.rowsMissing == 0 && table.rowsDiffering == 0, "\(table)")
        #expect(table.rowsEditedByApp == 5 + 3 + 1 + 2, "\(table)")
        try db.migrateAllBlocking()
        #expect(try db.verify().isConsistent)
    }
}
