/// The lexical class of a token, as SQLite's tokenizer sees it.
package enum TokenKind: UInt8, Sendable, Hashable {
    /// A bare word: an identifier or a keyword (see ``Token/keyword``).
    case identifier
    /// An identifier in `"double quotes"`, `[brackets]` or `` `backticks` ``.
    case quotedIdentifier
    /// A string literal in `'single quotes'`.
    case string
    /// A blob literal `x'0A1b'`.
    case blob
    /// An integer literal, decimal or hexadecimal (`0x1F`).
    case integer
    /// A real literal (`1.`, `.5`, `1e10`).
    case float
    /// A bound parameter: `?`, `?NNN`, `:name`, `@name`, `$name`, `#name`.
    case parameter
    /// `;`
    case semicolon
    /// `(`
    case leftParen
    /// `)`
    case rightParen
    /// `,`
    case comma
    /// `.`
    case dot
    /// `+`
    case plus
    /// `-`
    case minus
    /// `*`
    case star
    /// `/`
    case slash
    /// `%`
    case percent
    /// `||`
    case concat
    /// `->`
    case arrow
    /// `->>`
    case doubleArrow
    /// `=`
    case equal
    /// `==`
    case doubleEqual
    /// `!=`
    case notEqual
    /// `<>`
    case lessGreater
    /// `<`
    case less
    /// `<=`
    case lessEqual
    /// `>`
    case greater
    /// `>=`
    case greaterEqual
    /// `<<`
    case shiftLeft
    /// `>>`
    case shiftRight
    /// `&`
    case ampersand
    /// `|`
    case pipe
    /// `~`
    case tilde
    /// The end of the input (always the last token of a tokenized text).
    case endOfInput
}

/// One token of SQL text with its exact place in the source.
///
/// Offsets, lines and columns are stored in 32 bits (inputs are limited to 4 GiB), which keeps a token at 20 bytes.
package struct Token: Sendable, Hashable {
    /// The lexical class.
    package var kind: TokenKind
    /// For a bare word that spells a keyword, that keyword. `WINDOW`, `OVER` and `FILTER` are only keywords where
    /// SQLite's tokenizer makes them so (see `tokenize.c`); elsewhere they are plain identifiers.
    package var keyword: Keyword?
    private var start: UInt32
    private var end: UInt32
    private var storedLine: UInt32
    private var storedColumn: UInt32

    /// The UTF-8 byte offsets of the token in the source.
    package var range: Range<Int> {
        get { Int(start)..<Int(end) }
        set { start = UInt32(truncatingIfNeeded: newValue.lowerBound); end = UInt32(truncatingIfNeeded: newValue.upperBound) }
    }
    /// The 1-based line of the token's first byte.
    package var line: Int { Int(storedLine) }
    /// The 1-based column of the token's first byte, counted in Unicode scalars from the start of its line.
    package var column: Int { Int(storedColumn) }

    /// Creates a token.
    package init(kind: TokenKind, keyword: Keyword? = nil, range: Range<Int>, line: Int, column: Int) {
        self.kind = kind
        self.keyword = keyword
        self.start = UInt32(truncatingIfNeeded: range.lowerBound)
        self.end = UInt32(truncatingIfNeeded: range.upperBound)
        self.storedLine = UInt32(truncatingIfNeeded: line)
        self.storedColumn = UInt32(truncatingIfNeeded: column)
    }

    /// Whether this token is the keyword `keyword`.
    @inline(__always)
    package func `is`(_ keyword: Keyword) -> Bool { self.keyword == keyword }

    /// SQLite's `ID` class: an unquoted non-keyword word, a quoted identifier, or a keyword that falls back to an
    /// identifier where it cannot be read as a keyword.
    @inline(__always)
    var isID: Bool {
        switch kind {
        case .identifier: return keyword.map { $0.fallsBackToIdentifier } ?? true
        case .quotedIdentifier: return true
        default: return false
        }
    }

    /// SQLite's `idj` class: `ID`, `INDEXED` or a join keyword (`LEFT`, `NATURAL`, ...).
    @inline(__always)
    var isIDJ: Bool {
        if isID { return true }
        guard kind == .identifier, let keyword else { return false }
        return keyword == .indexed || keyword.isJoinKeyword
    }

    /// SQLite's `nm` class: `idj` or a string literal.
    @inline(__always)
    var isName: Bool { isIDJ || kind == .string }

    /// SQLite's `ids` class: `ID` or a string literal.
    @inline(__always)
    var isIDOrString: Bool { isID || kind == .string }
}
