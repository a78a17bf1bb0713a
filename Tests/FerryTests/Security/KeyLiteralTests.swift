import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@_spi(Benchmarks) @testable import Ferry

/// The app's refused statements that carry a key are echoed in errors without it.
@Suite(.timeLimit(.minutes(1))) struct KeyLiteralTests {
    @Test(arguments: ["PRAGMA key = 'hunter2-secret'", "PRAGMA rekey = 'hunter2-secret'", "PRAGMA hexkey = x'68756e74657232'",
                      "PRAGMA hexrekey = '68756e74657232'", "PRAGMA main.textkey = 'hunter2-secret'"])
    func aRefusedKeyStatementIsEchoedWithoutTheKey(statement: String) throws {
        let box = Sandbox()
        let legacy = try box.makeLegacy(rows: 10)
        let db = try FerryDatabase(path: box.path("app.db"), plan: .messages(from: legacy))
        defer { db.close() }
        do {
            try db.write { try $0.execute(statement) }
            Issue.record("\(statement) was accepted")
        } catch {
            let texts = ["\(error)", String(reflecting: error)]
            for text in texts {
                #expect(!text.contains("hunter2") && !text.contains("68756e74657232"), "\(text)")
            }
        }
    }
}

/// A step whose statements the authorizer refuses (an app trigger on the target that writes Ferry's
/// state compiles into every move) fails with the typed error that says what and why.
@Suite(.timeLimit(.minutes(1))) struct StepDenialTests {
    @Test func aStepRefusedByTheAuthorizerSaysWhy() throws {
        let box = Sandbox()
        let legacy = try box.makeLegacy(rows: 10)
        let db = try FerryDatabase(path: box.path("app.db"), plan: .messages(from: legacy), options: .fixedBatches(of: 4))
        defer { db.close() }
        try db.write { try $0.execute("CREATE TRIGGER audit AFTER INSERT ON messages BEGIN INSERT INTO ferry_migration_flags(key, value) VALUES ('x', 1); END") }
        #expect(performing: { try db.step() }, throws: { error in
            guard case FerryError.accessDenied(let object, let statement, let reason) = error else { return false }
            return object.contains("ferry_migration_flags") && statement.contains("messages") && reason.contains("audit")
        })
    }
}

/// A database path holding a NUL byte is refused before any file is touched.
@Suite struct NulPathTests {
    @Test func aPathWithANulByteIsRefusedAndCreatesNothing() throws {
        let box = Sandbox()
        #expect(throws: FerryError.self) { try FerryDatabase(path: box.path("app.db") + "\u{0}.x") }
        #expect(try FileManager.default.contentsOfDirectory(atPath: box.path("")).isEmpty)
    }
}
