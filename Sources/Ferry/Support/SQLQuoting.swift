import FerrySQLite


/// Double-quotes an identifier.
func q(_ identifier: String) -> String { Connection.quoteIdentifier(identifier) }

/// A single-quoted SQL string literal.
func sqlString(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "''") + "'" }
