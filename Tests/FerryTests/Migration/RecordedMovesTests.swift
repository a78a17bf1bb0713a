import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@_spi(Benchmarks) @testable import Ferry

/// Cleanup deletes exactly the source rows the batches recorded as moved (`MovedRows`), never a row
/// the filter matches by then: a row whose filter value changed after its batch (a value following
/// the clock, an edited source, a changed filter) is never lost and never hidden.
@Suite(.timeLimit(.minutes(2))) struct RecordedMovesTests {
    enum Placement: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case crossFile, encryptedSource, sameFile
        var testDescription: String { rawValue }
        static var available: [Placement] { SQLiteEngine.supportsEncryption ? allCases : [.crossFile, .sameFile] }
    }

    static let key = Cipher.passphrase("k", settings: CipherSettings(compatibility: 4, kdfIterations: 2))

    /// A 40-row source (`conversation_id = id % 3`) migrated with the filter `conversation_id = 0`
    /// (13 rows), in batches of 4: `sourcePath` is where its table lives, `table` its name there.
    struct Fixture {
        let box = Sandbox()
        let db: FerryDatabase
        let sourcePath: String
        let table: String
        let cipher: Cipher?

        init(_ placement: Placement) throws {
            cipher = placement == .encryptedSource ? RecordedMovesTests.key : nil
            if placement == .sameFile {
                table = "old_messages"
                sourcePath = try box.makeLegacy(rows: 40, name: "app.db", table: table)
            } else {
                table = "messages"
                sourcePath = try box.makeLegacy(rows: 40, cipher: cipher)
            }
            sameFile = placement == .sameFile
            db = try FerryDatabase(path: box.path("app.db"), plan: Self.plan(sameFile: sameFile, sourcePath: sourcePath, table: table, cipher: cipher),
                                   options: .fixedBatches(of: 4))
        }

        let sameFile: Bool

        /// The plan, with `filter`.
        static func plan(sameFile: Bool, sourcePath: String, table: String, cipher: Cipher?, filter: String = "conversation_id = 0") -> MigrationPlan {
            let mapping = TableMapping(target: "messages", source: table, filter: filter)
            return MigrationPlan(sources: [sameFile ? MigrationSource(.targetFile, tables: [mapping])
                : MigrationSource(.file(sourcePath), cipher: cipher, tables: [mapping])])
        }

        /// The plan, with `filter`.
        func plan(filter: String) -> MigrationPlan {
            Self.plan(sameFile: sameFile, sourcePath: sourcePath, table: table, cipher: cipher, filter: filter)
        }

        /// Runs SQL on the source file behind Ferry's back.
        func editSource(_ sql: String) throws {
            let raw = try Connection(path: sourcePath, configuration: .init(cipher: cipher))
            defer { raw.close() }
            try raw.execute(sql)
        }

        /// The ids left in the source table (nil once it is dropped).
        func sourceIDs() throws -> [Int64]? {
            let raw = try Connection(path: sourcePath, configuration: .init(cipher: cipher))
            defer { raw.close() }
            guard try raw.tableExists(table) else { return nil }
            return try raw.fetchAll("SELECT id FROM \(table) ORDER BY id").map { try $0.get(0) }
        }

        func targetIDs(on other: FerryDatabase? = nil) throws -> [Int64] {
            try (other ?? db).read { try $0.fetchAll("SELECT id FROM messages ORDER BY id").map { try $0.get(0) } }
        }
    }

    /// The shape: both halves count the same, so a count gate passes, but the rows the
    /// filter matches at cleanup are not the rows that moved. Row 3 moved (by a batch), row 36 moved
    /// ahead (by an app write); then the filter's meaning changes (as an app-defined function or
    /// collation may change; simulated by editing the registered filter): 3 and 36 stop matching,
    /// 1 and 2, which never moved, start. Cleanup deletes 3 and 36 (they are in the target) and
    /// keeps 1 and 2 (they would be in neither file otherwise).
    @Test(arguments: Placement.available)
    func cleanupDeletesTheRecordedRowsNotTheRowsTheFilterMatchesNow(placement: Placement) throws {
        let fixture = try Fixture(placement)
        let db = fixture.db
        try db.write { try $0.execute("UPDATE messages SET body = 'edited' WHERE id = 36") }
        while let report = try db.step(), !report.tableFinished {}
        let moved = (1...40).filter { $0 % 3 == 0 }.map(Int64.init)
        #expect(try fixture.targetIDs() == moved)
        db.close()
        let changed = "(conversation_id = 0 AND id NOT IN (3, 36)) OR id IN (1, 2)"
        let raw = try Connection(path: fixture.box.path("app.db"))
        try raw.execute("UPDATE ferry_migration_tables SET filter = ?", [.text(changed)])
        raw.close()
        let reopened = try FerryDatabase(path: fixture.box.path("app.db"), plan: fixture.plan(filter: changed), options: .fixedBatches(of: 4))
        defer { reopened.close() }
        try reopened.migrateAllBlocking()
        #expect(try fixture.targetIDs(on: reopened) == moved)
        let left = try #require(try fixture.sourceIDs(), "rows that never moved keep the source table")
        #expect(left == (1...40).map(Int64.init).filter { !moved.contains($0) })
        // Nothing lost: every row is in one file or the other, none in both.
        #expect(Set(left).isDisjoint(with: moved) && left.count + moved.count == 40)
    }

    /// The source holds other rows than the ones that moved (edited behind Ferry's back, or another
    /// file put at its path): each batch's rows are digested again before the first of them is
    /// deleted, and a difference refuses cleanup. A byte copy of the file passes.
    @Test(arguments: Placement.available)
    func aSourceEditedOrSwappedAfterTheRowsMovedIsNotCleaned(placement: Placement) throws {
        let fixture = try Fixture(placement)
        defer { fixture.db.close() }
        while let report = try fixture.db.step(), !report.tableFinished {}
        try fixture.editSource("UPDATE \(fixture.table) SET body = 'not what moved' WHERE id = 3")
        #expect(performing: { while try fixture.db.step() != nil {} }, throws: { error in
            guard case FerryError.cleanupRefused(let table, let reason) = error else { return false }
            return table == "messages" && reason.contains("batch 1")
        })
        #expect(try fixture.sourceIDs()?.count == 40, "nothing deleted")
        // Put back as it was: cleanup goes on.
        try fixture.editSource("UPDATE \(fixture.table) SET body = 'message 3' WHERE id = 3")
        while try fixture.db.step() != nil {}
        #expect(try fixture.sourceIDs() == (1...40).filter { $0 % 3 != 0 }.map(Int64.init))
    }

    @Test func aByteCopyOfTheSourcePasses() throws {
        let fixture = try Fixture(.crossFile)
        while let report = try fixture.db.step(), !report.tableFinished {}
        fixture.db.close()
        let copy = fixture.box.path("copy.db")
        try FileManager.default.copyItem(atPath: fixture.sourcePath, toPath: copy)
        try FileManager.default.removeItem(atPath: fixture.sourcePath)
        try FileManager.default.moveItem(atPath: copy, toPath: fixture.sourcePath)
        let reopened = try FerryDatabase(path: fixture.box.path("app.db"), options: .fixedBatches(of: 4))
        defer { reopened.close() }
        try reopened.migrateAllBlocking()
        #expect(try fixture.sourceIDs() == (1...40).filter { $0 % 3 != 0 }.map(Int64.init))
    }

    /// The registered filter edited after the rows moved: cleanup still deletes what moved.
    @Test func aChangedFilterDeletesWhatMovedAndNothingElse() throws {
        let fixture = try Fixture(.crossFile)
        defer { fixture.db.close() }
        while let report = try fixture.db.step(), !report.tableFinished {}
        let raw = try Connection(path: fixture.box.path("app.db"))
        defer { raw.close() }
        try raw.execute("UPDATE ferry_migration_tables SET filter = 'id % 2 = 0'")
        fixture.db.close()
        let reopened = try FerryDatabase(path: fixture.box.path("app.db"), options: .fixedBatches(of: 4))
        defer { reopened.close() }
        // verify reads the record, not the filter: the rows that moved are all there.
        let verification = try #require(try reopened.verify().tables.first)
        #expect(verification.isConsistent && verification.rowsChecked == 13, "\(verification)")
        while try reopened.step() != nil {}
        #expect(try fixture.sourceIDs() == (1...40).filter { $0 % 3 != 0 }.map(Int64.init))
    }

    /// verify checks the recorded rows against both files: a moved row edited in the source
    /// differs from its target row, a moved row deleted from the source is unaccounted for; an
    /// app's edit of a row that has not moved is not a difference.
    @Test func verifyChecksTheRecordAgainstBothFiles() throws {
        let fixture = try Fixture(.crossFile)
        defer { fixture.db.close() }
        for _ in 0..<2 { try fixture.db.step() }  // rows 3 to 24 moved (batches of 4 matching rows)
        #expect(try fixture.db.verify().isConsistent)
        try fixture.editSource("UPDATE messages SET body = 'changed' WHERE id = 6; DELETE FROM messages WHERE id = 9")
        let table = try #require(try fixture.db.verify().tables.first)
        #expect(table.rowsDiffering == 1 && table.sampleRowids == [6], "\(table)")
        #expect(table.rowsUnaccounted == 1, "row 9 moved and is gone from the source")
        #expect(!table.isConsistent)
    }

    /// Each batch's record is written in its own transaction; the record and the counts must
    /// agree before anything is deleted. A record with a batch missing refuses cleanup.
    @Test func anIncompleteRecordRefusesCleanupAndDeletesNothing() throws {
        let fixture = try Fixture(.crossFile)
        defer { fixture.db.close() }
        while let report = try fixture.db.step(), !report.tableFinished {}
        let raw = try Connection(path: fixture.box.path("app.db"))
        defer { raw.close() }
        #expect(try raw.scalar("SELECT sum(row_count) FROM ferry_migration_moved_rows", as: Int.self) == 13)
        #expect(try raw.scalar("SELECT count(*) FROM ferry_migration_moved_rows", as: Int.self) ?? 0 > 1, "a record per batch")
        try raw.execute("DELETE FROM ferry_migration_moved_rows WHERE batch = 2")
        fixture.db.close()
        let reopened = try FerryDatabase(path: fixture.box.path("app.db"), options: .fixedBatches(of: 4))
        defer { reopened.close() }
        #expect {
            while try reopened.step() != nil {}
        } throws: { error in
            guard case FerryError.cleanupRefused(let table, let reason) = error else { return false }
            return table == "messages" && reason.contains("13")
        }
        #expect(try fixture.sourceIDs()?.count == 40)
    }

    /// Cleanup keeps to its chunk size within a batch's record, and a cleanup interrupted between
    /// chunks (a new process) deletes the rest, deleting nothing twice.
    @Test func cleanupResumesAfterAnInterruption() throws {
        let fixture = try Fixture(.crossFile)
        while let report = try fixture.db.step(), !report.tableFinished {}
        let first = try #require(try fixture.db.step())
        #expect(first.kind == .cleanup && first.sourceRowsDeleted == 4)
        fixture.db.close()
        let reopened = try FerryDatabase(path: fixture.box.path("app.db"), options: .fixedBatches(of: 4))
        defer { reopened.close() }
        var deleted = 0
        while let report = try reopened.step() { deleted += report.sourceRowsDeleted }
        #expect(deleted == 9)
        #expect(try fixture.sourceIDs() == (1...40).filter { $0 % 3 != 0 }.map(Int64.init))
    }

    /// The recorder function is Ferry's own: the app's statements cannot call it.
    @Test func theAppCannotCallTheRecorder() throws {
        let fixture = try Fixture(.crossFile)
        defer { fixture.db.close() }
        _ = try fixture.db.step()
        #expect(throws: FerryError.self) {
            try fixture.db.write { try $0.execute("SELECT \(ResolvedMapping.movedRowRecorderFunction)(1)") }
        }
        #expect(throws: FerryError.self) {
            try fixture.db.read { try $0.fetchAll("SELECT \(ResolvedMapping.movedRowRecorderFunction)(id) FROM messages") }
        }
    }

    /// A source `WITHOUT ROWID` records its moved rows by row key: cleanup deletes exactly those
    /// (the filter changed since), and refuses a source edited since.
    @Test func aSourceWithoutRowidRecordsItsMovesByKey() throws {
        let box = Sandbox()
        let legacy = try box.makeLegacy(rows: 40, options: "WITHOUT ROWID")
        let plan = { (filter: String) in
            MigrationPlan(sources: [MigrationSource(.file(legacy), tables: [TableMapping(target: "messages", source: "messages", filter: filter)])])
        }
        do {
            let db = try FerryDatabase(path: box.path("app.db"), plan: plan("conversation_id = 0"), options: .fixedBatches(of: 4))
            try db.write { try $0.execute("UPDATE messages SET body = 'edited' WHERE id = 36") }  // moved ahead
            while let report = try db.step(), !report.tableFinished {}
            db.close()
        }
        let moved = (1...40).filter { $0 % 3 == 0 }.map(Int64.init)
        let changed = "(conversation_id = 0 AND id NOT IN (3, 36)) OR id IN (1, 2)"
        let raw = try Connection(path: box.path("app.db"))
        #expect(try raw.scalar("SELECT sum(row_count) FROM ferry_migration_moved_rows", as: Int.self) == 13)
        try raw.execute("UPDATE ferry_migration_tables SET filter = ?", [.text(changed)])
        raw.close()
        // Row 6 edited in the source: its batch is refused, nothing of it deleted.
        let source = try Connection(path: legacy)
        try source.execute("UPDATE messages SET body = 'not what moved' WHERE id = 6")
        let db = try FerryDatabase(path: box.path("app.db"), plan: plan(changed), options: .fixedBatches(of: 4))
        defer { db.close() }
        #expect(performing: { while try db.step() != nil {} }, throws: { error in
            if case FerryError.cleanupRefused = error { return true }
            return false
        })
        #expect(try source.scalar("SELECT count(*) FROM messages WHERE id IN (3, 6)", as: Int.self) == 2, "nothing of batch 1 deleted")
        try source.execute("UPDATE messages SET body = 'message 6' WHERE id = 6")
        while try db.step() != nil {}
        let left: [Int64] = try source.fetchAll("SELECT id FROM messages ORDER BY id").map { try $0.get(0) }
        #expect(left == (1...40).map(Int64.init).filter { !moved.contains($0) })
        source.close()
    }

    @Test func movedRowsRoundTrip() {
        for rowids: [Int64] in [[], [1], [5, 3, 3, 1], [-9, Int64.min, Int64.max, 0, 1 << 40], Array(stride(from: 7, to: 70_000, by: 7))] {
            let rows = MovedRows(rowids.map { ($0, UInt64(bitPattern: $0 &* 31)) })
            #expect(rows.rowids == Array(Set(rowids)).sorted())
            #expect(rows.digest == Set(rowids).reduce(UInt64(0)) { $0 &+ UInt64(bitPattern: $1 &* 31) }, "a row listed twice counts once")
            #expect(MovedRows(decoding: rows.encoded, digest: rows.digest) == rows)
        }
        #expect(MovedRows((1...1000).map { (Int64($0), UInt64(0)) }).encoded.count < 1010, "consecutive rowids cost a byte each")
        #expect(MovedRows(decoding: [0, 0x80], digest: 0) == nil, "a truncated varint")
        #expect(MovedRows(decoding: [0, 2, 0], digest: 0) == nil, "a zero difference")
        #expect(MovedRows(decoding: [7, 2], digest: 0) == nil, "an unknown tag")
        #expect(MovedRows(decoding: [], digest: 0) == nil)
        // Row keys of a source without rowid.
        let keyed = MovedRows(keyed: [([3, 1], 5), ([1], 7), ([3, 1], 5), ([], 1)])
        #expect(keyed.keys == [[], [1], [3, 1]] && keyed.rowids.isEmpty && keyed.count == 3 && keyed.digest == 13)
        #expect(MovedRows(decoding: keyed.encoded, digest: keyed.digest) == keyed)
        #expect(MovedRows(decoding: [1, 5, 1], digest: 0) == nil, "a key longer than the bytes left")
    }
}
