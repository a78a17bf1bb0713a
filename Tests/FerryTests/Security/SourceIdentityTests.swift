import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@_spi(Benchmarks) @testable import Ferry

/// A file put in the place of a registered source (same path, same table name) is not migrated:
/// Ferry records the source's fingerprint at registration (its salt when encrypted, a sampled row
/// per table) and checks it at every attach and before every step. Another file is
/// `FerryError.sourceMismatch`, nothing moves or is deleted, and the migration resumes when the
/// registered file, or a byte copy of it, is back.
@Suite(.timeLimit(.minutes(2))) struct SourceIdentityTests {
    final class World {
        let box = Sandbox()
        let legacy: String
        let cipher: Cipher?
        let plan: MigrationPlan
        /// A byte copy of the registered source, taken before anything ran.
        let backup: String

        init(encrypted: Bool) throws {
            cipher = encrypted ? .passphrase("identity", settings: CipherSettings(compatibility: 4, kdfIterations: 2)) : nil
            legacy = try box.makeLegacy(rows: 40, cipher: cipher)
            backup = box.path("backup.db")
            try Self.checkpoint(legacy, cipher: cipher)
            try FileManager.default.copyItem(atPath: legacy, toPath: backup)
            plan = MigrationPlan(sources: [MigrationSource(.file(legacy), cipher: cipher, tables: [TableMapping(target: "messages", source: "messages")])])
        }

        func open() throws -> FerryDatabase {
            try FerryDatabase(path: box.path("app.db"), configuration: .init(cipher: cipher), plan: plan, options: .fixedBatches(of: 10))
        }

        /// Makes `name` a database like the source, with other rows: same table, same key.
        func makeImpostor(_ name: String, sameRows: Bool = false) throws -> String {
            try box.makeLegacy(rows: sameRows ? 40 : 45, name: name, cipher: cipher)
            if !sameRows {
                try Connection(path: box.path(name), configuration: .init(cipher: cipher)).execute("UPDATE messages SET body = 'impostor ' || id")
            }
            return box.path(name)
        }

        /// Moves everything of a WAL-mode database into its main file (so that a copy of it is whole).
        static func checkpoint(_ path: String, cipher: Cipher?) throws {
            let db = try Connection(path: path, configuration: .init(cipher: cipher))
            defer { db.close() }
            try db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        }

        /// Replaces the source file by a copy of `file` (renamed over it, as an operator's `mv` would).
        func replaceSource(with file: String) throws {
            try Self.checkpoint(file, cipher: cipher)
            let incoming = legacy + ".incoming"
            try? FileManager.default.removeItem(atPath: incoming)
            try FileManager.default.copyItem(atPath: file, toPath: incoming)
            #expect(rename(incoming, legacy) == 0)
        }

        /// The target's rows (raw), and the source file's rows.
        func snapshot() throws -> [String] {
            let target = try Connection(path: box.path("app.db"), configuration: .init(cipher: cipher))
            defer { target.close() }
            let source = try Connection(path: legacy, configuration: .init(cipher: cipher))
            defer { source.close() }
            return try messages(target).map { "target \($0)" } + messages(source, table: "messages").map { "source \($0)" }
                + target.fetchAll("SELECT cursor, rows_moved, state FROM ferry_migration_tables").map { "\($0.values)" }
        }

        func expectMismatch(_ body: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) {
            do {
                try body()
                Issue.record("accepted", sourceLocation: sourceLocation)
            } catch FerryError.sourceMismatch(let path, let reason) {
                #expect(path == legacy && !reason.isEmpty, sourceLocation: sourceLocation)
            } catch {
                Issue.record("\(error)", sourceLocation: sourceLocation)
            }
        }
    }

    static var placements: [Bool] { SQLiteEngine.supportsEncryption ? [false, true] : [false] }

    @Test(arguments: placements) func anotherFileBetweenOpensIsRefusedAndTheOriginalResumes(encrypted: Bool) throws {
        let world = try World(encrypted: encrypted)
        do {
            let db = try world.open()
            _ = try db.step()
            db.close()
        }
        // Other rows; and, when encrypted, the same rows in a file of its own (another salt).
        let impostors = [try world.makeImpostor("other.db")] + (encrypted ? [try world.makeImpostor("same-rows.db", sameRows: true)] : [])
        for impostor in impostors {
            try world.replaceSource(with: impostor)
            let before = try world.snapshot()
            world.expectMismatch { _ = try world.open() }
            if !encrypted {  // (an encrypted source's key comes with the plan)
                world.expectMismatch { _ = try FerryDatabase(path: world.box.path("app.db"), configuration: .init(cipher: world.cipher)) }
            }
            #expect(try world.snapshot() == before)
        }
        // A byte copy of the registered file is the registered file.
        try world.replaceSource(with: world.backup)
        let db = try world.open()
        try db.migrateAllBlocking()
        #expect(try db.read { try $0.fetchAll("SELECT id FROM messages ORDER BY id").map { try $0.get(0, as: Int.self) } } == Array(1...40))
        #expect(try db.verify().isConsistent)
    }

    @Test(arguments: placements) func anotherFileWhileOpenStopsStepsAndReads(encrypted: Bool) throws {
        let world = try World(encrypted: encrypted)
        let db = try world.open()
        _ = try db.step()
        let spare = world.box.path("spare.db")
        try FileManager.default.copyItem(atPath: world.backup, toPath: spare)
        try world.replaceSource(with: try world.makeImpostor("other.db"))
        let before = try world.snapshot()
        world.expectMismatch { _ = try db.step() }
        // Until its next check of the file (`sourceFileCheckInterval`), a connection reads the
        // registered file it has open: its rows, never the other file's.
        let registered = (1...40).map { [Value.integer(Int64($0)), .text("message \($0)")] }
        do {
            #expect(try db.read { try $0.fetchAll("SELECT id, body FROM messages ORDER BY id").map(\.values) } == registered)
        } catch let error as FerryError {
            #expect(error.isSourceUnavailable, "\(error)")
        }
        Faults.SourceFaultTests.waitForTheNextFileCheck(FerryDatabase.Options())
        do {
            _ = try db.read { try $0.fetchAll("SELECT * FROM messages") }
            Issue.record("read through another file")
        } catch let error as FerryError {
            #expect(error.isSourceUnavailable, "\(error)")
        }
        #expect(try db.read { try $0.scalar("SELECT 1", as: Int.self) } == 1)  // other statements work
        let table = try #require(try db.progress().tables.first)
        #expect(table.state == .failed)
        if case .sourceMismatch? = table.lastError {} else { Issue.record("progress: \(String(describing: table.lastError))") }
        #expect(try world.snapshot() == before)
        // The registered file back in place: the migration goes on and loses nothing.
        try world.replaceSource(with: spare)
        try db.migrateAllBlocking()
        #expect(try db.read { try $0.fetchAll("SELECT id, body FROM messages ORDER BY id").map(\.values) }
                == (1...40).map { [Value.integer(Int64($0)), .text("message \($0)")] })
    }

    /// A catalog written before fingerprints existed records the file in place at the next open.
    @Test func olderCatalogsRecordTheirSourcesFingerprintAtOpen() throws {
        let world = try World(encrypted: false)
        do { _ = try world.open() }
        let raw = try Connection(path: world.box.path("app.db"))
        try raw.execute("UPDATE ferry_migration_sources SET fingerprint = NULL")
        do { _ = try world.open() }
        let recorded = try raw.scalar("SELECT fingerprint FROM ferry_migration_sources", as: String.self)
        #expect(SourceFingerprint.decode(recorded)?.tables["messages"]?.rowid == 40)
    }
}
