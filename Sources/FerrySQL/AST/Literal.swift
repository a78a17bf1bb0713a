/// A literal value, kept exactly as written so it prints back byte for byte.
package enum Literal: Sendable, Hashable {
    /// An integer as written (`42`, `0x2A`).
    case integer(String)
    /// A real as written (`1.5`, `.5`, `1e10`).
    case real(String)
    /// A string's value (quotes removed, `''` undone); printed back with `'` doubled.
    case string(String)
    /// A blob's hex digits as written (`0aFF` for `x'0aFF'`).
    case blob(String)
    /// `NULL`
    case null
    /// `TRUE` (SQLite reads the bare word as 1 when no column is so named).
    case `true`
    /// `FALSE`
    case `false`
    /// `CURRENT_TIME`
    case currentTime
    /// `CURRENT_DATE`
    case currentDate
    /// `CURRENT_TIMESTAMP`
    case currentTimestamp
}

/// A bound parameter, kept as written and with the index SQLite binds it to.
package struct Parameter: Sendable, Hashable {
    /// The parameter as written: `?`, `?3`, `:name`, `@name`, `$name`, `#name`.
    package var text: String
    /// The 1-based index SQLite assigns: `?` takes the largest index so far plus one, `?NNN` is NNN, and a named
    /// parameter takes the next index at its first appearance and reuses it afterwards.
    package var index: Int

    /// Creates a parameter.
    package init(_ text: String, index: Int) {
        self.text = text
        self.index = index
    }

    /// Whether this is the anonymous form `?`.
    package var isAnonymous: Bool { text == "?" }
}
