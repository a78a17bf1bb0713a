/// Splits SQL text into tokens exactly as SQLite's `tokenize.c` does, on UTF-8 bytes.
///
/// Whitespace and comments are skipped; every other token is returned with its byte range, line and column, followed
/// by one ``TokenKind/endOfInput`` token. Text SQLite would reject with "unrecognized token" throws.
package enum Tokenizer {
    /// Tokenizes `sql`.
    package static func tokenize(_ sql: String) throws(SQLSyntaxError) -> [Token] {
        try tokenize(SourceText(sql))
    }

    /// Tokenizes UTF-8 bytes, first checking that they are valid UTF-8.
    package static func tokenize(utf8 bytes: [UInt8]) throws(SQLSyntaxError) -> [Token] {
        try tokenize(validating: bytes)
    }

    /// Checks that `bytes` are valid UTF-8 and wraps them.
    package static func validate(utf8 bytes: [UInt8]) throws(SQLSyntaxError) -> SourceText {
        if let bad = firstInvalidUTF8Offset(bytes) {
            var line = 1
            var lineStart = 0
            for i in 0..<bad where bytes[i] == 0x0A {
                line += 1
                lineStart = i + 1
            }
            var column = 1
            for i in lineStart..<bad where bytes[i] & 0xC0 != 0x80 { column += 1 }
            let safe = SourceText(validatedBytes: bytes.map { $0 < 0x80 ? $0 : 0x3F })
            throw SQLSyntaxError.make(.invalidUTF8, "invalid UTF-8 at byte \(bad)", range: bad..<bad + 1, line: line, column: column, in: safe)
        }
        return SourceText(validatedBytes: bytes)
    }

    static func tokenize(validating bytes: [UInt8]) throws(SQLSyntaxError) -> [Token] {
        try tokenize(validate(utf8: bytes))
    }

    /// Tokenizes source text.
    package static func tokenize(_ source: SourceText) throws(SQLSyntaxError) -> [Token] {
        if source.count >= Int(UInt32.max) {
            throw SQLSyntaxError(kind: .unrecognizedToken, message: "input larger than 4 GiB", token: "", range: 0..<0, line: 1, column: 1, excerpt: "")
        }
        var lexer = Lexer(source: source)
        return try lexer.run()
    }

    /// The offset of the first byte that is not part of valid UTF-8, if any.
    static func firstInvalidUTF8Offset(_ b: [UInt8]) -> Int? {
        var i = 0
        let n = b.count
        while i < n {
            let c = b[i]
            if c < 0x80 { i += 1; continue }
            var need = 0
            var minScalar: UInt32 = 0
            var scalar: UInt32 = 0
            if c & 0xE0 == 0xC0 { need = 1; minScalar = 0x80; scalar = UInt32(c & 0x1F) }
            else if c & 0xF0 == 0xE0 { need = 2; minScalar = 0x800; scalar = UInt32(c & 0x0F) }
            else if c & 0xF8 == 0xF0 { need = 3; minScalar = 0x10000; scalar = UInt32(c & 0x07) }
            else { return i }
            if i + need >= n { return i }
            for k in 1...need {
                let d = b[i + k]
                if d & 0xC0 != 0x80 { return i }
                scalar = scalar << 6 | UInt32(d & 0x3F)
            }
            if scalar < minScalar || scalar > 0x10FFFF || (scalar >= 0xD800 && scalar <= 0xDFFF) { return i }
            i += need + 1
        }
        return nil
    }
}

/// Character classes of ASCII bytes, after SQLite's `aiClass`.
@usableFromInline
enum CharClass {
    /// Whether `c` may appear in an identifier: letters, digits, `_`, `$` and every byte >= 0x80.
    @inline(__always) static func isIdChar(_ c: UInt8) -> Bool {
        (c >= 0x61 && c <= 0x7A) || (c >= 0x41 && c <= 0x5A) || (c >= 0x30 && c <= 0x39) || c == 0x5F || c == 0x24 || c >= 0x80
    }
    @inline(__always) static func isDigit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }
    @inline(__always) static func isHexDigit(_ c: UInt8) -> Bool {
        (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46)
    }
    /// SQLite's `sqlite3Isspace`: space, \t, \n, \v, \f, \r.
    @inline(__always) static func isSpace(_ c: UInt8) -> Bool { c == 0x20 || (c >= 0x09 && c <= 0x0D) }
}

/// The scanning state of one tokenization.
struct Lexer {
    let source: SourceText
    var tokens: [Token] = []
    var line = 1
    var lineStart = 0
    /// UTF-8 continuation bytes seen on the current line before the scan position (to count columns in scalars).
    var continuationBytesOnLine = 0

    init(source: SourceText) {
        self.source = source
    }

    mutating func run() throws(SQLSyntaxError) -> [Token] {
        let bytes = source.bytes
        let count = bytes.count
        tokens.reserveCapacity(count / 4 + 2)
        var error: SQLSyntaxError?
        bytes.withUnsafeBufferPointer { z in
            var i = 0
            while i < count {
                let start = i
                let c = z[i]
                // Whitespace
                if CharClass.isSpace(c) {
                    i += 1
                    if c == 0x0A { newLine(at: i) }
                    while i < count, CharClass.isSpace(z[i]) {
                        if z[i] == 0x0A { newLine(at: i + 1) }
                        i += 1
                    }
                    continue
                }
                var kind: TokenKind
                var keyword: Keyword? = nil
                var illegal = false
                let column = start - lineStart - continuationBytesOnLine + 1
                let tokenLine = line
                switch c {
                case 0x2D: // -
                    let n1 = at(z, i + 1)
                    if n1 == 0x2D { // -- comment to end of line
                        i += 2
                        while i < count && z[i] != 0x0A { countContinuation(z[i]); i += 1 }
                        continue
                    } else if n1 == 0x3E {
                        if at(z, i + 2) == 0x3E { kind = .doubleArrow; i += 3 } else { kind = .arrow; i += 2 }
                    } else { kind = .minus; i += 1 }
                case 0x28: kind = .leftParen; i += 1
                case 0x29: kind = .rightParen; i += 1
                case 0x3B: kind = .semicolon; i += 1
                case 0x2B: kind = .plus; i += 1
                case 0x2A: kind = .star; i += 1
                case 0x2F: // /
                    if at(z, i + 1) != 0x2A || i + 2 >= count {
                        kind = .slash; i += 1
                    } else {
                        // Block comment; an unterminated one runs to the end of the input, as in SQLite.
                        i += 2
                        while i < count {
                            let d = z[i]
                            if d == 0x2A && at(z, i + 1) == 0x2F { i += 2; break }
                            if d == 0x0A { newLine(at: i + 1) } else { countContinuation(d) }
                            i += 1
                        }
                        continue
                    }
                case 0x25: kind = .percent; i += 1
                case 0x3D: // =
                    if at(z, i + 1) == 0x3D { kind = .doubleEqual; i += 2 } else { kind = .equal; i += 1 }
                case 0x3C: // <
                    let n1 = at(z, i + 1)
                    if n1 == 0x3D { kind = .lessEqual; i += 2 }
                    else if n1 == 0x3E { kind = .lessGreater; i += 2 }
                    else if n1 == 0x3C { kind = .shiftLeft; i += 2 }
                    else { kind = .less; i += 1 }
                case 0x3E: // >
                    let n1 = at(z, i + 1)
                    if n1 == 0x3D { kind = .greaterEqual; i += 2 }
                    else if n1 == 0x3E { kind = .shiftRight; i += 2 }
                    else { kind = .greater; i += 1 }
                case 0x21: // !
                    if at(z, i + 1) == 0x3D { kind = .notEqual; i += 2 } else { kind = .notEqual; illegal = true; i += 1 }
                case 0x7C: // |
                    if at(z, i + 1) == 0x7C { kind = .concat; i += 2 } else { kind = .pipe; i += 1 }
                case 0x2C: kind = .comma; i += 1
                case 0x26: kind = .ampersand; i += 1
                case 0x7E: kind = .tilde; i += 1
                case 0x27, 0x22, 0x60: // ' " `
                    let delim = c
                    i += 1
                    var closed = false
                    while i < count {
                        let d = z[i]
                        if d == delim {
                            if at(z, i + 1) == delim { i += 2; continue }
                            i += 1
                            closed = true
                            break
                        }
                        if d == 0x0A { newLine(at: i + 1) } else { countContinuation(d) }
                        i += 1
                    }
                    kind = delim == 0x27 ? .string : .quotedIdentifier
                    illegal = !closed
                case 0x2E: // .
                    if CharClass.isDigit(at(z, i + 1)) {
                        (kind, illegal) = scanNumber(z, &i)
                    } else { kind = .dot; i += 1 }
                case 0x30...0x39:
                    (kind, illegal) = scanNumber(z, &i)
                case 0x5B: // [
                    i += 1
                    var closed = false
                    while i < count {
                        let d = z[i]
                        i += 1
                        if d == 0x5D { closed = true; break }
                        if d == 0x0A { newLine(at: i) } else { countContinuation(d) }
                    }
                    kind = .quotedIdentifier
                    illegal = !closed
                case 0x3F: // ?
                    i += 1
                    while i < count && CharClass.isDigit(z[i]) { i += 1 }
                    kind = .parameter
                case 0x24, 0x40, 0x3A, 0x23: // $ @ : #
                    kind = .parameter
                    i += 1
                    var n = 0
                    while i < count {
                        let d = z[i]
                        if CharClass.isIdChar(d) {
                            n += 1
                            countContinuation(d)
                            i += 1
                        } else if d == 0x28 && n > 0 {
                            i += 1
                            while i < count && !CharClass.isSpace(z[i]) && z[i] != 0x29 { countContinuation(z[i]); i += 1 }
                            if i < count && z[i] == 0x29 { i += 1 } else { illegal = true }
                            break
                        } else if d == 0x3A && at(z, i + 1) == 0x3A {
                            i += 2
                        } else {
                            break
                        }
                    }
                    if n == 0 { illegal = true }
                case 0x78 where at(z, i + 1) == 0x27, 0x58 where at(z, i + 1) == 0x27: // x'...'
                    kind = .blob
                    i += 2
                    while i < count && CharClass.isHexDigit(z[i]) { i += 1 }
                    if at(z, i) != 0x27 || (i - start) % 2 == 1 {
                        illegal = true
                        while i < count && z[i] != 0x27 { countContinuation(z[i]); i += 1 }
                    }
                    if i < count { i += 1 }
                default:
                    if (c >= 0x61 && c <= 0x7A) || (c >= 0x41 && c <= 0x5A) || c == 0x5F || c >= 0x80 {
                        i += 1
                        countContinuation(c)
                        while i < count && CharClass.isIdChar(z[i]) { countContinuation(z[i]); i += 1 }
                        kind = .identifier
                        keyword = Keyword.lookup(z, start: start, count: i - start)
                    } else {
                        // NUL, control characters and other stray bytes.
                        kind = .notEqual
                        illegal = true
                        i += 1
                    }
                }
                if illegal {
                    let message = "unrecognized token: \"\(source.string(start..<i))\""
                    error = SQLSyntaxError.make(.unrecognizedToken, message, range: start..<i, line: tokenLine, column: column, in: source)
                    return
                }
                tokens.append(Token(kind: kind, keyword: keyword, range: start..<i, line: tokenLine, column: column))
            }
        }
        if let error { throw error }
        let column = count - lineStart - continuationBytesOnLine + 1
        tokens.append(Token(kind: .endOfInput, range: count..<count, line: line, column: column))
        classifyWindowKeywords()
        return tokens
    }

    @inline(__always) func at(_ z: UnsafeBufferPointer<UInt8>, _ i: Int) -> UInt8 { i < z.count ? z[i] : 0 }

    @inline(__always) mutating func newLine(at offset: Int) {
        line += 1
        lineStart = offset
        continuationBytesOnLine = 0
    }

    @inline(__always) mutating func countContinuation(_ b: UInt8) {
        if b & 0xC0 == 0x80 { continuationBytesOnLine += 1 }
    }

    /// Scans a number starting at `i` (a digit or `.` followed by a digit). Returns its kind and whether it is illegal.
    func scanNumber(_ z: UnsafeBufferPointer<UInt8>, _ i: inout Int) -> (TokenKind, Bool) {
        var kind = TokenKind.integer
        if z[i] == 0x30 && (at(z, i + 1) | 0x20) == 0x78 && CharClass.isHexDigit(at(z, i + 2)) {
            i += 3
            while CharClass.isHexDigit(at(z, i)) { i += 1 }
            // A hex literal ends at the first non-hex character (`0x1G` is `0x1` then `G`), except at `_`: SQLite
            // 3.46 reads `0xFF_FF` as 65535 (a digit separator; `0xFF__EF` and `0xFFEF_` are errors there), older
            // versions as `0xFF` with the alias `_FF`. Keeping the whole run in one token prints it back as written,
            // so the printed SQL means what the original meant in either version.
            if at(z, i) == 0x5F {
                while CharClass.isIdChar(at(z, i)) { i += 1 }
            }
            return (kind, false)
        }
        while CharClass.isDigit(at(z, i)) { i += 1 }
        if at(z, i) == 0x2E {
            i += 1
            while CharClass.isDigit(at(z, i)) { i += 1 }
            kind = .float
        }
        let e = at(z, i)
        if e == 0x65 || e == 0x45 {
            let n1 = at(z, i + 1)
            if CharClass.isDigit(n1) || ((n1 == 0x2B || n1 == 0x2D) && CharClass.isDigit(at(z, i + 2))) {
                i += 2
                while CharClass.isDigit(at(z, i)) { i += 1 }
                kind = .float
            }
        }
        var illegal = false
        while CharClass.isIdChar(at(z, i)) { illegal = true; i += 1 }
        return (kind, illegal)
    }

    /// Applies SQLite's rules for the contextual keywords `WINDOW`, `OVER` and `FILTER` (`tokenize.c`):
    /// WINDOW is a keyword when followed by an identifier and then `AS`; OVER when it follows `)` and precedes `(`
    /// or an identifier; FILTER when it follows `)` and precedes `(`. Elsewhere they are identifiers.
    mutating func classifyWindowKeywords() {
        let n = tokens.count
        for i in 0..<n {
            guard let k = tokens[i].keyword, k == .window || k == .over || k == .filter else { continue }
            let next = i + 1 < n ? tokens[i + 1] : nil
            let keep: Bool
            switch k {
            case .window:
                keep = next.map(Lexer.collapsesToID) == true && i + 2 < n && tokens[i + 2].keyword == .as
            case .over:
                keep = i > 0 && tokens[i - 1].kind == .rightParen
                    && (next?.kind == .leftParen || next.map(Lexer.collapsesToID) == true)
            default:
                keep = i > 0 && tokens[i - 1].kind == .rightParen && next?.kind == .leftParen
            }
            if !keep { tokens[i].keyword = nil }
        }
    }

    /// SQLite's `getToken` view of a token: ID, STRING, JOIN_KW, WINDOW, OVER and fallback keywords all count as ID.
    static func collapsesToID(_ t: Token) -> Bool {
        switch t.kind {
        case .quotedIdentifier, .string: return true
        case .identifier:
            guard let k = t.keyword else { return true }
            return k.fallsBackToIdentifier || k.isJoinKeyword || k == .window || k == .over
        default: return false
        }
    }
}
