/// Keeps key material out of errors and logs: the text of a statement that may carry a key
/// (`PRAGMA key = '…'`, `rekey`, `hexkey`, `ATTACH … KEY '…'`, anything that names a key) with
/// every string and blob literal replaced by `'…'`. Other statements are returned unchanged, so
/// that errors and logs keep the values that explain them.
package enum SecretRedaction {
    /// `sql` with its literals hidden when it names a key (a word containing `key`, any case).
    /// A literal holding a doubled quote (`'it''s'`) reads as two literals, each hidden.
    package static func redactingKeyLiterals(_ sql: String) -> String {
        namesKey(sql) ? redactingLiterals(sql) : sql
    }

    /// True when `sql` names a key (a word containing `key`, any case): its literals may be one.
    package static func namesKey(_ sql: String) -> Bool { sql.lowercased().contains("key") }

    /// `text` with every string and blob literal replaced by `'…'` (an error message about a
    /// statement that names a key quotes its literals without naming the key itself).
    package static func redactingLiterals(_ text: String) -> String {
        let sql = text
        var output = ""
        output.reserveCapacity(sql.count)
        var inLiteral = false
        for character in sql {
            if inLiteral {
                if character == "'" { inLiteral = false }
                continue
            }
            if character == "'" {
                if output.last == "x" || output.last == "X" { output.removeLast() }  // a blob: x'…'
                output += "'…'"
                inLiteral = true
                continue
            }
            output.append(character)
        }
        return output
    }
}
