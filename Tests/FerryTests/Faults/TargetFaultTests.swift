import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@_spi(Benchmarks) @testable import Ferry

extension Faults {
    /// The target's disk fills up, or the target can only be opened read-only.
    @Suite(.timeLimit(.minutes(2)))
    struct TargetFaultTests {
        static let sourceRows = 3000

        static let options = FerryDatabase.Options.fixedBatches(of: 100)

        static func rows(_ db: FerryDatabase) throws -> [MessageRow] {
            try db.read { c in try c.fetchAll("SELECT id, conversation_id, body FROM messages").map(MessageRow.init) }.sorted()
        }

        /// Disk full on the target from some point on (every write and truncate of its files fails
        /// with SQLITE_FULL): steps fail with a typed error and change nothing, the app keeps
        /// reading exactly the right rows, its writes fail cleanly, background auto-migration backs
        /// off and stops; when space returns the migration resumes and completes.
        @Test func diskFullWhileMigrating() async throws {
            let box = Sandbox()
            let legacy = try box.makeLegacy(rows: Self.sourceRows)
            let app = box.path("app.db")
            let db = try FerryDatabase(path: app, configuration: FaultVFS.configuration(), plan: .messages(from: legacy), options: Self.options)
            defer { db.close() }
            for _ in 0..<5 { try await db.step() }
            try await db.write { try $0.execute("UPDATE messages SET body = 'kept' WHERE id IN (10, 2500)") }
            let expected = try Self.rows(db)
            #expect(expected.count == Self.sourceRows)

            let full = FaultVFS.arm(path: app, operations: [.write, .truncate], trigger: .from(0), failure: .full)
            for _ in 0..<4 {
                #expect { try db.step() } throws: { ($0 as? FerryError)?.resultCode?.primary == .full }
                #expect(try Self.rows(db) == expected, "the app reads the right rows while the disk is full")
            }
            #expect {
                try db.write { try $0.execute("INSERT INTO messages(conversation_id, body) VALUES (1, 'lost')") }
            } throws: { ($0 as? FerryError)?.resultCode?.primary == .full }
            #expect {
                try db.write { try $0.execute("DELETE FROM messages WHERE id = 2999") }
            } throws: { ($0 as? FerryError)?.resultCode?.primary == .full }
            #expect(try Self.rows(db) == expected)
            let progress = try db.progress()
            #expect(progress.tables.first?.state == .failed)
            #expect(progress.tables.first?.lastError?.resultCode?.primary == .full)
            #expect(progress.tables.first?.rowsMoved == 501, "500 by the steps, row 2500 by the app's update")

            // Auto-migration backs off on each failure and stops after a few.
            let events = db.events()
            db.startAutoMigration(.init(budget: .milliseconds(5), interval: .milliseconds(1), maximumConsecutiveFailures: 3,
                                        initialBackoff: .milliseconds(5), maximumBackoff: .milliseconds(20)))
            var errors = 0
            for await event in events {
                if case .error(let error) = event, error.resultCode?.primary == .full { errors += 1 }
                if case .autoMigrationStopped(let last) = event {
                    #expect(last.resultCode?.primary == .full)
                    break
                }
            }
            #expect(errors == 3)
            #expect(full.fired > 0)

            // Space returns.
            full.disarm()
            try db.migrateAllBlocking()
            #expect(try db.isMigrated)
            #expect(try Self.rows(db) == expected)
            #expect(try db.progress().tables.first?.rowsQuarantined == 0)
            let raw = try Connection(path: app)
            #expect(try raw.scalar("PRAGMA integrity_check", as: String.self) == "ok")
        }

        enum ReadOnlyCause: CaseIterable { case configuration, filePermissions }

        /// The target opens read-only, by configuration or because SQLite could only open the file
        /// read-only (file permissions, simulated by the fault VFS: running as root ignores them).
        /// Reads work; steps, registrations and writes fail with a typed SQLITE_READONLY error
        /// naming the file; nothing changes; once writable again the migration completes.
        @Test(arguments: ReadOnlyCause.allCases)
        func aReadOnlyTargetRefusesStepsAndRegistrationsAndChangesNothing(cause: ReadOnlyCause) throws {
            let box = Sandbox()
            let legacy = try box.makeLegacy(rows: Self.sourceRows)
            let other = try box.makeLegacy(rows: 10, name: "other.db")
            let app = box.path("app.db")
            do {
                let db = try FerryDatabase(path: app, plan: .messages(from: legacy), options: Self.options)
                for _ in 0..<3 { try db.step() }
                try db.write { try $0.execute("DELETE FROM messages WHERE id = 2000") }
                db.close()
            }
            let bytes = try Data(contentsOf: URL(fileURLWithPath: app))
            let configuration: Connection.Configuration
            var rule: FaultVFS.Rule?
            switch cause {
            case .configuration:
                configuration = .init(readOnly: true)
            case .filePermissions:
                rule = FaultVFS.arm(path: app, files: .database, operations: [.open], trigger: .from(0), failure: .openReadOnly)
                configuration = FaultVFS.configuration()
            }
            defer { rule?.disarm() }

            let db = try FerryDatabase(path: app, configuration: configuration, plan: .messages(from: legacy), options: Self.options)
            #expect(db.isReadOnly)
            #expect(try db.read { try $0.scalar("SELECT count(*) FROM messages", as: Int.self) } == Self.sourceRows - 1)
            #expect(try db.progress().tables.first?.rowsMoved == 301, "300 by the steps, row 2000 by the app's delete")
            func isReadOnlyError(_ error: any Error) -> Bool {
                (error as? FerryError)?.resultCode?.primary == .readonly
            }
            func namesTheFile(_ error: any Error) -> Bool { isReadOnlyError(error) && "\(error)".contains(app) }
            #expect { try db.step() } throws: { namesTheFile($0) }
            #expect { try db.migrateAllBlocking() } throws: { namesTheFile($0) }
            let newPlan = MigrationPlan(sources: [MigrationSource(.file(other), tables: [TableMapping(target: "others", source: "messages")])])
            #expect { try db.register(newPlan) } throws: { namesTheFile($0) }
            #expect { try db.write { try $0.execute("DELETE FROM messages WHERE id = 1") } } throws: { isReadOnlyError($0) }
            // A write transaction whose body only reads runs, as on a read-only SQLite database.
            #expect(try db.write { try $0.scalar("SELECT count(*) FROM messages", as: Int.self) } == Self.sourceRows - 1)
            db.close()
            // A first registration on a read-only target is refused at open.
            #expect { try FerryDatabase(path: app, configuration: configuration, plan: newPlan) } throws: { namesTheFile($0) }
            rule?.disarm()

            #expect(try Data(contentsOf: URL(fileURLWithPath: app)) == bytes, "the read-only target changed")
            let writable = try FerryDatabase(path: app, plan: .messages(from: legacy), options: Self.options)
            defer { writable.close() }
            #expect(!writable.isReadOnly)
            try writable.migrateAllBlocking()
            #expect(try writable.read { try $0.scalar("SELECT count(*) FROM messages", as: Int.self) } == Self.sourceRows - 1)
            #expect(try writable.read { try $0.scalar("SELECT count(*) FROM sqlite_master WHERE name = 'others'", as: Int.self) } == 0)
        }

        /// The same with real file permissions (skipped when running as root, which ignores them).
        @Test(.enabled(if: geteuid() != 0, "root ignores file permissions"))
        func aTargetWithoutWritePermissionIsReadOnly() throws {
            let box = Sandbox()
            let legacy = try box.makeLegacy(rows: 100)
            let app = box.path("app.db")
            do {
                let db = try FerryDatabase(path: app, plan: .messages(from: legacy), options: Self.options)
                db.close()
            }
            try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: app)
            defer { try? FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: app) }
            let db = try FerryDatabase(path: app, plan: .messages(from: legacy), options: Self.options)
            defer { db.close() }
            #expect(db.isReadOnly)
            #expect { try db.step() } throws: { ($0 as? FerryError)?.resultCode?.primary == .readonly }
            #expect(try db.read { try $0.scalar("SELECT count(*) FROM messages", as: Int.self) } == 100)
        }
    }
}
