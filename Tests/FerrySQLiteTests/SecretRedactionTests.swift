import Testing
@testable import FerrySQLite

/// `SecretRedaction` hides the literals of a statement that names a key, and only of such a one.
@Suite struct SecretRedactionTests {
    @Test func keyStatementsLoseTheirLiterals() {
        #expect(SecretRedaction.redactingKeyLiterals("PRAGMA key = 'hunter2'") == "PRAGMA key = '…'")
        #expect(SecretRedaction.redactingKeyLiterals("pragma rekey='a''b'") == "pragma rekey='…''…'")
        #expect(SecretRedaction.redactingKeyLiterals("PRAGMA hexkey = x'00ff'") == "PRAGMA hexkey = '…'")
        #expect(SecretRedaction.redactingKeyLiterals("ATTACH 'f.db' AS s KEY 'secret'") == "ATTACH '…' AS s KEY '…'")
        #expect(SecretRedaction.redactingKeyLiterals("statement aborts at 3: [PRAGMA textkey = 'p'] not authorized") == "statement aborts at 3: [PRAGMA textkey = '…'] not authorized")
    }

    @Test func otherStatementsKeepTheirValues() {
        #expect(SecretRedaction.redactingKeyLiterals("SELECT 'x' FROM t") == "SELECT 'x' FROM t")
        #expect(SecretRedaction.redactingKeyLiterals("UPDATE t SET b = 'it''s'") == "UPDATE t SET b = 'it''s'")
    }
}
