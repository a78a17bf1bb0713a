import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@_spi(Benchmarks) @testable import Ferry

extension Faults {
    /// Two processes (or two instances) opening the same target: one owns it and its migration,
    /// the other is refused with a typed error and changes nothing.
    ///
    /// The child process is `ferry-test-child ownership` (Tests/FerryTestChild), with the plan and
    /// batches of these tests (as the crash tests do).
    @Suite(.serialized, .timeLimit(.minutes(2)))
    struct OwnershipTests {
        static let options = FerryDatabase.Options.fixedBatches(of: 100)

        /// Starts the child on `app`; returns the process and a pipe with its output.
        static func startChild(app: String, legacy: String, hold: Bool = false) throws -> (Process, Pipe) {
            let output = Pipe()
            let child = try startTestChild(["ownership", app, legacy] + (hold ? ["hold"] : []), standardOutput: output)
            return (child, output)
        }

        /// Runs the child to its end and returns its report line.
        static func runChild(app: String, legacy: String) throws -> String {
            let (child, output) = try startChild(app: app, legacy: legacy)
            let data = output.fileHandleForReading.readDataToEndOfFile()
            child.waitUntilExit()
            return String(decoding: data, as: UTF8.self).split(separator: "\n").filter { $0.hasPrefix("FERRY-CHILD") }.joined(separator: "; ")
        }

        static func snapshot(_ app: String) throws -> [String] {
            let raw = try Connection(path: app)
            defer { raw.close() }
            return try raw.fetchAll("SELECT target, cursor, rows_moved, rows_quarantined, state FROM ferry_migration_tables").map { "\($0.values)" }
                + [try raw.scalar("SELECT count(*) || ':' || total(id) FROM messages", as: String.self) ?? ""]
        }

        @Test func aSecondProcessIsRefusedWhileTheFirstOwnsTheMigration() throws {
            let box = Sandbox()
            let legacy = try box.makeLegacy(rows: 2000)
            let app = box.path("app.db")
            let db = try FerryDatabase(path: app, plan: .messages(from: legacy), options: Self.options)
            for _ in 0..<3 { try db.step() }
            try db.write { try $0.execute("UPDATE messages SET body = 'edited' WHERE id = 1500") }
            let before = try Self.snapshot(app)

            let report = try Self.runChild(app: app, legacy: legacy)
            #expect(report == "FERRY-CHILD refused \(app)")
            #expect(try Self.snapshot(app) == before, "the refused process changed the target")

            // The owner goes on undisturbed.
            try db.migrateAllBlocking()
            #expect(try db.isMigrated)
            #expect(try db.read { try $0.scalar("SELECT count(*) FROM messages", as: Int.self) } == 2000)
            #expect(try db.read { try $0.scalar("SELECT body FROM messages WHERE id = 1500", as: String.self) } == "edited")
            #expect(try db.progress().tables.first?.rowsQuarantined == 0)
            db.close()

            // Once it closed, the other process may open the target (and finds nothing to do).
            #expect(try Self.runChild(app: app, legacy: legacy) == "FERRY-CHILD opened; FERRY-CHILD migrated 0")
        }

        @Test func aKilledOwnerReleasesTheTarget() throws {
            let box = Sandbox()
            let legacy = try box.makeLegacy(rows: 2000)
            let app = box.path("app.db")
            do { _ = try FerryDatabase(path: app, plan: .messages(from: legacy), options: Self.options) }
            let (child, output) = try Self.startChild(app: app, legacy: legacy, hold: true)
            // Wait until the child owns the target.
            var opened = false
            let reader = output.fileHandleForReading
            var text = ""
            while !opened, child.isRunning {
                let data = reader.availableData
                if data.isEmpty { break }
                text += String(decoding: data, as: UTF8.self)
                opened = text.contains("FERRY-CHILD opened")
            }
            #expect(opened)
            #expect {
                try FerryDatabase(path: app, configuration: .init(busyTimeout: .milliseconds(100)), plan: .messages(from: legacy), options: Self.options)
            } throws: { error in
                guard case FerryError.migrationOwnedByAnotherProcess(let path) = error else { return false }
                return path == app && "\(error)".contains(app + "-ferry.lock")
            }
            kill(child.processIdentifier, SIGKILL)
            child.waitUntilExit()
            let db = try FerryDatabase(path: app, configuration: .init(busyTimeout: .milliseconds(100)), plan: .messages(from: legacy), options: Self.options)
            defer { db.close() }
            try db.migrateAllBlocking()
            #expect(try db.read { try $0.scalar("SELECT count(*) FROM messages", as: Int.self) } == 2000)
        }

        /// Bug without the lock: a second instance stepped from its own stale cursor, copying rows
        /// the first had moved again (into quarantine: 200 of 200 here) and overwriting the
        /// catalog's counts. A symbolic link to the target is the same target.
        @Test func aSecondInstanceThroughASymbolicLinkIsRefused() throws {
            let box = Sandbox()
            let legacy = try box.makeLegacy(rows: 1000)
            let app = box.path("app.db")
            try FileManager.default.createSymbolicLink(atPath: box.path("link.db"), withDestinationPath: app)
            let first = try FerryDatabase(path: app, plan: .messages(from: legacy), options: Self.options)
            defer { first.close() }
            try first.step()
            #expect(throws: FerryError.migrationOwnedByAnotherProcess(path: box.path("link.db"))) {
                try FerryDatabase(path: box.path("link.db"), configuration: .init(busyTimeout: .milliseconds(50)), plan: .messages(from: legacy), options: Self.options)
            }
            try first.migrateAllBlocking()
            let table = try #require(try first.progress().tables.first)
            #expect(table.rowsMoved == 1000 && table.rowsQuarantined == 0)
        }

        @Test func aSecondInstanceInTheSameProcessIsRefused() throws {
            let box = Sandbox()
            let legacy = try box.makeLegacy(rows: 500)
            let app = box.path("app.db")
            let first = try FerryDatabase(path: app, plan: .messages(from: legacy), options: Self.options)
            try first.step()
            let before = try Self.snapshot(app)
            let start = ContinuousClock.now
            #expect(throws: FerryError.migrationOwnedByAnotherProcess(path: app)) {
                try FerryDatabase(path: app, configuration: .init(busyTimeout: .milliseconds(150)), plan: .messages(from: legacy), options: Self.options)
            }
            #expect(ContinuousClock.now - start >= .milliseconds(150), "it waits for the owner up to the busy timeout")
            #expect(try Self.snapshot(app) == before)
            // A read-only instance takes no lock: it may read, and cannot write.
            let reader = try FerryDatabase(path: app, configuration: .init(readOnly: true))
            #expect(try reader.read { try $0.scalar("SELECT count(*) FROM messages", as: Int.self) } == 500)
            reader.close()
            first.close()
            let second = try FerryDatabase(path: app, configuration: .init(busyTimeout: .milliseconds(150)), plan: .messages(from: legacy), options: Self.options)
            defer { second.close() }
            try second.migrateAllBlocking()
            #expect(try second.read { try $0.scalar("SELECT count(*) FROM messages", as: Int.self) } == 500)
        }
    }
}
