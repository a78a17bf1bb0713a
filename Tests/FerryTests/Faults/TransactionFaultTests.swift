import FerryTestSupport
import Foundation
import Testing
@_spi(Benchmarks) @testable import Ferry

extension Faults {
    /// An I/O error inside `write { }` or `read { }` whose error the app catches.
    @Suite(.timeLimit(.minutes(1)))
    struct TransactionFaultTests {
        static func migrating(_ box: Sandbox) throws -> (FerryDatabase, legacy: String) {
            let legacy = try box.makeLegacy(rows: 5000)
            var options = FerryDatabase.Options()
            options.fixedBatchRows = 100
            let plan = MigrationPlan.messages(from: legacy)
            let db = try FerryDatabase(path: box.path("app.db"), configuration: FaultVFS.configuration(), plan: plan, options: options)
            return (db, legacy)
        }

        /// Bug: after an I/O error SQLite rolls the whole transaction back by itself. When the app
        /// caught that error inside `write { }` and went on, its next statements ran in autocommit
        /// mode and committed one by one, although `write { }` then threw ("cannot commit - no
        /// transaction is active"): a write that returned an error had an effect. (A move of
        /// pending source rows committed that way could even leave a row in the target but not in
        /// the moved set.) Now the statements after the rollback are refused.
        @Test func statementsAfterARolledBackWriteAreRefused() throws {
            let box = Sandbox()
            let (db, legacy) = try Self.migrating(box)
            defer { db.close() }
            try db.write { try $0.execute("CREATE TABLE log(x)") }
            let rule = FaultVFS.arm(path: legacy, operations: [.read], trigger: .from(0), failure: .ioError, maxFailures: 1)
            var refused: FerryError?
            #expect(throws: FerryError.self) {
                try db.write { c in
                    do { try c.execute("UPDATE messages SET body = 'x' WHERE id > 4000") } catch {}
                    do { try c.execute("INSERT INTO log VALUES (1)") } catch { refused = error as? FerryError }
                    try c.execute("UPDATE messages SET body = 'y' WHERE id = 1")
                }
            }
            rule.disarm()
            #expect(rule.fired == 1)
            #expect(refused?.resultCode == .abortRollback)
            #expect(try db.read { try $0.scalar("SELECT count(*) FROM log", as: Int.self) } == 0)
            #expect(try db.read { try $0.scalar("SELECT count(*) FROM messages WHERE body IN ('x', 'y')", as: Int.self) } == 0)
            try db.migrateAllBlocking()
            #expect(try db.read { try $0.scalar("SELECT count(*) FROM messages", as: Int.self) } == 5000)
            #expect(try db.progress().tables.first?.rowsQuarantined == 0)
        }

        /// A read whose transaction SQLite rolled back would read its next statements from another
        /// snapshot each: they are refused. (SQLite keeps a read transaction after an I/O error in a
        /// read-only statement: then the next statement reads on, in the same snapshot.)
        @Test func aReadGoesOnInItsSnapshotOrIsRefused() throws {
            let box = Sandbox()
            let (db, legacy) = try Self.migrating(box)
            defer { db.close() }
            // The reader attaches the source (and caches only the pages of row 1).
            #expect(try db.read { try $0.scalar("SELECT body FROM messages WHERE id = 1", as: String.self) } == "message 1")
            let rule = FaultVFS.arm(path: legacy, operations: [.read], trigger: .from(0), failure: .ioError, maxFailures: 1)
            defer { rule.disarm() }
            var outcome: (first: Bool, stillInTransaction: Bool, second: Result<Int?, FerryError>)?
            do {
                try db.read { c in
                    let first = (try? c.scalar("SELECT count(*) FROM messages", as: Int.self)) != nil
                    let inTransaction = c.isInTransaction
                    do {
                        outcome = (first, inTransaction, .success(try c.scalar("SELECT count(*) FROM messages", as: Int.self)))
                    } catch {
                        outcome = (first, inTransaction, .failure(error as? FerryError ?? .misuse("\(error)")))
                    }
                }
                // The read transaction survived the error: the second statement read on in it.
                #expect(outcome?.stillInTransaction == true)
                if case .success(let count)? = outcome?.second { #expect(count == 5000) } else { Issue.record("\(String(describing: outcome))") }
            } catch {
                // SQLite rolled it back: the second statement was refused, and so was the read.
                #expect(error.resultCode == .abortRollback)
                #expect(outcome?.stillInTransaction == false)
                if case .failure(let refusal)? = outcome?.second { #expect(refusal.resultCode == .abortRollback) } else { Issue.record("\(String(describing: outcome))") }
            }
            #expect(rule.fired == 1)
            #expect(outcome?.first == false)
            #expect(try db.read { try $0.scalar("SELECT count(*) FROM messages", as: Int.self) } == 5000)
        }
    }
}
