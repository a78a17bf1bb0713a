/// An error found while tokenizing or parsing SQL text.
///
/// Every error carries the offending token's text, where it is (UTF-8 byte range, 1-based line and column) and a
/// short excerpt of the source around it, so callers can show it without keeping the source.
package struct SQLSyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, broadly.
    package enum Kind: Sendable, Equatable {
        /// A byte sequence that is not valid UTF-8.
        case invalidUTF8
        /// Text that is no SQLite token (an unterminated string, `!` alone, `123abc`, a NUL byte, ...).
        case unrecognizedToken
        /// A token the grammar does not allow here.
        case syntax
        /// The input ended inside a statement.
        case incompleteInput
        /// Nesting deeper than the parser's limit (see ``ParserOptions/maximumDepth``).
        case tooDeeplyNested
        /// A parameter SQLite would reject (`?0`, `?40000`, `#1`).
        case invalidParameter
        /// A construct that SQLite rejects while parsing (e.g. an unknown join type).
        case invalidConstruct
    }

    /// What went wrong, broadly.
    package var kind: Kind
    /// A sentence describing the error, in SQLite's words where it has some.
    package var message: String
    /// The text of the offending token (empty at the end of the input).
    package var token: String
    /// The UTF-8 byte range of the offending token.
    package var range: Range<Int>
    /// The 1-based line of the offending token.
    package var line: Int
    /// The 1-based column (in Unicode scalars) of the offending token.
    package var column: Int
    /// Up to about 40 characters of source on each side of the error, on one line.
    package var excerpt: String

    /// Creates an error.
    package init(kind: Kind, message: String, token: String, range: Range<Int>, line: Int, column: Int, excerpt: String) {
        self.kind = kind
        self.message = message
        self.token = token
        self.range = range
        self.line = line
        self.column = column
        self.excerpt = excerpt
    }

    /// A one-line description: message, position and excerpt.
    package var description: String {
        "\(message) at line \(line), column \(column): \(excerpt)"
    }

    /// Builds an error for `range` of `source`.
    static func make(_ kind: Kind, _ message: String, range: Range<Int>, line: Int, column: Int, in source: SourceText) -> SQLSyntaxError {
        let lower = max(0, min(range.lowerBound, source.count))
        let upper = max(lower, min(range.upperBound, source.count))
        let token = source.string(lower..<upper)
        var start = max(0, lower - 40)
        var end = min(source.count, upper + 40)
        // Do not cut a UTF-8 sequence in half.
        while start > 0 && start < source.count && source[start] & 0xC0 == 0x80 { start -= 1 }
        while end < source.count && source[end] & 0xC0 == 0x80 { end += 1 }
        var excerptBytes = Array(source.bytes[start..<end])
        for i in excerptBytes.indices where excerptBytes[i] == 0x0A || excerptBytes[i] == 0x0D || excerptBytes[i] == 0x09 {
            excerptBytes[i] = 0x20
        }
        let excerpt = String(decoding: excerptBytes, as: UTF8.self)
        return SQLSyntaxError(kind: kind, message: message, token: token, range: lower..<upper, line: line, column: column, excerpt: excerpt)
    }
}
