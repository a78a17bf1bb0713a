import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@_spi(Benchmarks) @testable import Ferry

/// A file put in the place of a registered source (same path, same table name) is not migrated:
/// Ferry records the source's fingerprint at registration (its salt when encrypted, a sampled row
/// per table) and checks it at every attach and before every step whose file changed on disk since
/// a check passed. Another file is
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

        func open(batch: Int = 10) throws -> FerryDatabase {
            try FerryDatabase(path: box.path("app.db"), configuration: .init(cipher: cipher), plan: plan, options: .fixedBatches(of: batch))
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

        /// Writes `file`'s bytes into the source file itself (same inode), as `cp` over it does.
        /// The file's change time moves on first: a copy within the clock's tick of the last
        /// check would otherwise leave the stamp as it was.
        func overwriteSourceInPlace(with file: String) throws {
            usleep(10_000)
            let bytes = try Data(contentsOf: URL(fileURLWithPath: file))
            let handle = try #require(FileHandle(forUpdatingAtPath: legacy))
            defer { try? handle.close() }
            try handle.truncate(atOffset: 0)
            try handle.write(contentsOf: bytes)
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

    /// Another encrypted file's bytes written into the source's own inode (a copy over it in
    /// place, which the rename check cannot see) stop the next step: its salt differs. (A plain
    /// file overwritten in place may pass, its sampled row read from the page cache: see
    /// Limitations.)
    @Test(.enabled(if: SQLiteEngine.supportsEncryption)) func anotherEncryptedFileCopiedOverInPlaceStopsTheNextStep() throws {
        let world = try World(encrypted: true)
        let db = try world.open()
        _ = try db.step()
        let impostor = try world.makeImpostor("other.db")
        try World.checkpoint(impostor, cipher: world.cipher)
        let before = try world.snapshot()
        try world.overwriteSourceInPlace(with: impostor)
        world.expectMismatch { _ = try db.step() }
        try world.overwriteSourceInPlace(with: world.backup)
        #expect(try world.snapshot() == before)
        try db.migrateAllBlocking()
        #expect(try db.read { try $0.fetchAll("SELECT id FROM messages ORDER BY id").map { try $0.get(0, as: Int.self) } } == Array(1...40))
    }

    /// The fingerprint is read again at a step only when the file changed since a check passed
    /// (its inode, size or change time, or its WAL's): steps on an untouched source do not pay for
    /// it (every step read it before), and a write into the file, even of the same bytes, is
    /// checked.
    @Test(arguments: placements) func aStepReadsTheFingerprintOnlyWhenTheFileChanged(encrypted: Bool) throws {
        let world = try World(encrypted: encrypted)
        let db = try world.open(batch: 2)  // 20 move steps
        let attacher = db.engine.attacher
        func reads() -> Int { attacher.fingerprintReads.load(ordering: .relaxed) }
        // The first steps may see the source's WAL file touched by a connection's first read of
        // it (a change, checked once).
        for _ in 0..<3 { _ = try db.step() }
        let settled = reads()
        for _ in 0..<8 { #expect(try db.step()?.kind == .move) }
        #expect(reads() - settled <= 1)
        // The same bytes written back: a change all the same, checked, and the file passes.
        let beforeWrite = reads()
        try world.overwriteSourceInPlace(with: world.backup)
        #expect(try db.step()?.kind == .move)
        #expect(reads() > beforeWrite)
        try db.migrateAllBlocking()
        #expect(try db.read { try $0.fetchAll("SELECT id FROM messages ORDER BY id").map { try $0.get(0, as: Int.self) } } == Array(1...40))
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
