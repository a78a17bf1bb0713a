/// Limits and switches for the parser.
package struct ParserOptions: Sendable, Hashable {
    /// The deepest nesting of expressions, subqueries and parenthesized joins accepted before parsing stops with a
    /// ``SQLSyntaxError/Kind/tooDeeplyNested`` error. Each nested expression, subquery, prefix operator or wrapping
    /// postfix operator (`COLLATE`, `LIKE`, `ISNULL`, ...) counts one level; long flat chains (`a OR b OR ...`, many
    /// VALUES rows, many UNIONs) do not count. The default, 100 (SQLite allows 1000), keeps parsing and then
    /// printing, hashing or analysing the result within a 512 KiB thread stack in debug builds, where Swift's stack
    /// frames are several times larger than in release builds (see `DepthLimitTests`). Raise it for threads with
    /// larger stacks.
    package var maximumDepth: Int
    /// The most stack, in bytes, the parser's recursion may use before it stops with
    /// ``SQLSyntaxError/Kind/tooDeeplyNested``, whatever ``maximumDepth`` says: a guard for debug builds, whose
    /// frames are large (a nested subquery costs about 9 KiB of stack there, 1 KiB in release builds).
    package var stackBudget: Int

    /// Creates options.
    package init(maximumDepth: Int = 100, stackBudget: Int = 256 * 1024) {
        self.maximumDepth = maximumDepth
        self.stackBudget = stackBudget
    }

    /// The default options.
    package static let `default` = ParserOptions()
}

/// Parses SQLite's SQL dialect into ``Statement`` values.
package enum Parser {
    /// Parses exactly one statement, optionally followed by `;`.
    package static func parseStatement(_ sql: String, options: ParserOptions = .default) throws(SQLSyntaxError) -> Statement {
        let source = SourceText(sql)
        return try parseStatement(source: source, tokens: Tokenizer.tokenize(source), options: options)
    }

    /// Parses exactly one statement from already tokenized source.
    /// The tokens must come from ``Tokenizer`` on the same source; tokens outside the source are rejected.
    package static func parseStatement(source: SourceText, tokens: [Token], options: ParserOptions = .default) throws(SQLSyntaxError) -> Statement {
        try parseOne(source: source, tokens: tokens, options: options, recordingResultColumns: false).statement
    }

    /// Parses exactly one statement and reports where each of its result columns (of every SELECT
    /// and RETURNING clause, at any depth) stands in the source: what a rewrite needs to keep the
    /// names SQLite gives them.
    package static func parseStatementWithResultColumns(source: SourceText, tokens: [Token], options: ParserOptions = .default)
        throws(SQLSyntaxError) -> (statement: Statement, resultColumns: [ResultColumnSpan]) {
        let parsed = try parseOne(source: source, tokens: tokens, options: options, recordingResultColumns: true)
        return (parsed.statement, parsed.resultColumns)
    }

    /// ``parseStatementWithResultColumns(source:tokens:options:)`` that also reports every `*` and
    /// `table.*` result column with the FROM items it expands to.
    package static func parseStatementWithColumnSpans(source: SourceText, tokens: [Token], options: ParserOptions = .default)
        throws(SQLSyntaxError) -> (statement: Statement, resultColumns: [ResultColumnSpan], starColumns: [StarColumnSpan]) {
        try parseOne(source: source, tokens: tokens, options: options, recordingResultColumns: true)
    }

    private static func parseOne(source: SourceText, tokens: [Token], options: ParserOptions, recordingResultColumns: Bool)
        throws(SQLSyntaxError) -> (statement: Statement, resultColumns: [ResultColumnSpan], starColumns: [StarColumnSpan]) {
        var tokens = tokens
        if tokens.contains(where: { $0.range.upperBound > source.count || $0.range.lowerBound > $0.range.upperBound }) {
            throw SQLSyntaxError(kind: .unrecognizedToken, message: "token outside the source text", token: "", range: 0..<0, line: 1, column: 1, excerpt: "")
        }
        if tokens.last?.kind != .endOfInput {
            let end = tokens.last?.range.upperBound ?? 0
            tokens.append(Token(kind: .endOfInput, range: end..<end, line: tokens.last?.line ?? 1, column: tokens.last?.column ?? 1))
        }
        var state = ParserState(source: source, tokens: tokens, options: options)
        if recordingResultColumns {
            state.resultColumnSpans = []
            state.stars = StarBook()
        }
        let statement: Statement = try typed {
            let statement = try state.parseCommand()
            _ = state.accept(.semicolon)
            if state.current.kind != .endOfInput {
                throw state.syntaxError()
            }
            return statement
        }
        return (statement, state.resultColumnSpans ?? [], state.stars?.spans ?? [])
    }

    /// Parses every statement of a script (statements separated by `;`; empty statements skipped).
    package static func parseScript(_ sql: String, options: ParserOptions = .default) throws(SQLSyntaxError) -> [Statement] {
        let source = SourceText(sql)
        var state = ParserState(source: source, tokens: try Tokenizer.tokenize(source), options: options)
        return try typed {
            var result: [Statement] = []
            while true {
                while state.accept(.semicolon) {}
                if state.current.kind == .endOfInput { break }
                state.resetParameters()
                result.append(try state.parseCommand())
                if state.current.kind != .endOfInput {
                    try state.expect(.semicolon)
                }
            }
            return result
        }
    }

    /// Parses one expression (the whole input).
    package static func parseExpression(_ sql: String, options: ParserOptions = .default) throws(SQLSyntaxError) -> Expression {
        let source = SourceText(sql)
        var state = ParserState(source: source, tokens: try Tokenizer.tokenize(source), options: options)
        return try typed {
            let expression = try state.parseExpression()
            if state.current.kind != .endOfInput { throw state.syntaxError() }
            return expression
        }
    }

    /// Runs parser code that throws untyped errors (they keep stack frames small: an untyped error is one pointer)
    /// and rethrows its ``SQLSyntaxError``.
    @inline(__always)
    static func typed<T>(_ body: () throws -> T) throws(SQLSyntaxError) -> T {
        do {
            return try body()
        } catch let error as SQLSyntaxError {
            throw error
        } catch {
            preconditionFailure("the parser throws only SQLSyntaxError, got \(error)")
        }
    }
}

/// The star result columns of one parse, as they are found (a reference, so that the parser's
/// state, which every recursive call carries, stays small).
final class StarBook {
    /// Every star result column, in the order found.
    var spans: [StarColumnSpan] = []
    /// The indices in `spans` of the stars of the result columns parsed last.
    var own: [Int] = []
    /// Stars noted by result columns still being parsed (innermost last).
    var pending: [Int] = []
    /// The stars of each SELECT core whose FROM is being parsed (innermost last).
    var held: [[Int]] = []
}

/// The state of one parse: the tokens, the position, the nesting depth and the parameter numbering.
struct ParserState {
    let source: SourceText
    let tokens: [Token]
    var position = 0
    var depth = 0
    let maximumDepth: Int
    /// The largest parameter index assigned so far.
    var parameterCount = 0
    /// The index of each named parameter, by its text.
    var namedParameters: [String: Int] = [:]
    /// Where each expression result column was found, when the caller asked (nil: not recorded).
    var resultColumnSpans: [ResultColumnSpan]?
    /// Where each star result column was found, when the caller asked (nil: not recorded).
    var stars: StarBook?

    /// The stack address at which parsing started, and the lowest address the recursion may reach.
    let stackLimit: UInt

    init(source: SourceText, tokens: [Token], options: ParserOptions) {
        precondition(tokens.last?.kind == .endOfInput, "internal: token streams end with endOfInput")
        self.source = source
        self.tokens = tokens
        self.maximumDepth = options.maximumDepth
        let base = currentStackAddress()
        self.stackLimit = base > UInt(options.stackBudget) ? base - UInt(options.stackBudget) : 0
    }

    mutating func resetParameters() {
        parameterCount = 0
        namedParameters.removeAll(keepingCapacity: true)
    }

    // MARK: Token access

    @inline(__always) var current: Token { tokens[position] }

    @inline(__always) func peek(_ offset: Int = 1) -> Token {
        let i = position + offset
        return i < tokens.count ? tokens[i] : tokens[tokens.count - 1]
    }

    @inline(__always) mutating func advance() {
        if position < tokens.count - 1 { position += 1 }
    }

    /// Whether the current token is the keyword `k`.
    @inline(__always) func at(_ k: Keyword) -> Bool { tokens[position].keyword == k && tokens[position].kind == .identifier }

    /// Whether the current token is of kind `kind`.
    @inline(__always) func at(_ kind: TokenKind) -> Bool { tokens[position].kind == kind }

    @inline(__always) mutating func accept(_ k: Keyword) -> Bool {
        if at(k) { advance(); return true }
        return false
    }

    @inline(__always) mutating func accept(_ kind: TokenKind) -> Bool {
        if at(kind) { advance(); return true }
        return false
    }

    mutating func expect(_ k: Keyword) throws {
        if !accept(k) { throw syntaxError() }
    }

    mutating func expect(_ kind: TokenKind) throws {
        if !accept(kind) { throw syntaxError() }
    }

    // MARK: Errors

    /// A syntax error at the current token, in SQLite's words.
    func syntaxError() -> SQLSyntaxError {
        let token = current
        if token.kind == .endOfInput {
            return SQLSyntaxError.make(.incompleteInput, "incomplete input", range: token.range, line: token.line, column: token.column, in: source)
        }
        return SQLSyntaxError.make(.syntax, "near \"\(source.text(of: token))\": syntax error", range: token.range, line: token.line, column: token.column, in: source)
    }

    /// An error of `kind` at `token` with `message`.
    func error(_ kind: SQLSyntaxError.Kind, _ message: String, at token: Token? = nil) -> SQLSyntaxError {
        let token = token ?? current
        return SQLSyntaxError.make(kind, message, range: token.range, line: token.line, column: token.column, in: source)
    }

    // MARK: Depth

    /// Enters one level of nesting; throws past the limit.
    @inline(__always) mutating func enter() throws {
        depth += 1
        if depth > maximumDepth || currentStackAddress() < stackLimit { throw tooDeep() }
    }

    @inline(__always) mutating func leave() { depth -= 1 }

    func tooDeep() -> SQLSyntaxError {
        error(.tooDeeplyNested, depth > maximumDepth
              ? "too deeply nested: more than \(maximumDepth) levels of nesting"
              : "too deeply nested: the parser's stack budget is used up")
    }

    // MARK: Names

    /// The identifier spelled by a name-like token, dequoted.
    func identifier(_ token: Token) -> Identifier {
        let range = token.range
        switch token.kind {
        case .quotedIdentifier:
            let open = source[range.lowerBound]
            switch open {
            case 0x22: return Identifier(dequote(range, quote: 0x22), quoting: .doubleQuotes)
            case 0x60: return Identifier(dequote(range, quote: 0x60), quoting: .backticks)
            default: return Identifier(source.string(range.lowerBound + 1..<range.upperBound - 1), quoting: .brackets)
            }
        case .string:
            return Identifier(dequote(range, quote: 0x27), quoting: .singleQuotes)
        default:
            return Identifier(source.string(range), quoting: .none)
        }
    }

    /// The text between the quotes of a quoted token, with doubled quotes undone.
    func dequote(_ range: Range<Int>, quote: UInt8) -> String {
        let inner = range.lowerBound + 1..<range.upperBound - 1
        var hasDoubled = false
        var i = inner.lowerBound
        while i < inner.upperBound {
            if source.bytes[i] == quote { hasDoubled = true; break }
            i += 1
        }
        if !hasDoubled { return source.string(inner) }
        var out: [UInt8] = []
        out.reserveCapacity(inner.count)
        i = inner.lowerBound
        while i < inner.upperBound {
            let b = source.bytes[i]
            out.append(b)
            i += b == quote ? 2 : 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `nm`: an identifier, a join keyword, `INDEXED` or a string.
    mutating func parseName() throws -> Identifier {
        let token = current
        guard token.isName else { throw syntaxError() }
        advance()
        return identifier(token)
    }

    /// `ids`: an identifier or a string.
    mutating func parseIDOrString() throws -> Identifier {
        let token = current
        guard token.isIDOrString else { throw syntaxError() }
        advance()
        return identifier(token)
    }

    /// `nm [. nm]` as a qualified name, with the range it covers.
    mutating func parseQualifiedName() throws -> (QualifiedName, Range<Int>) {
        let start = current.range.lowerBound
        let first = try parseName()
        if accept(.dot) {
            let second = try parseName()
            return (QualifiedName(schema: first, second), start..<tokens[position - 1].range.upperBound)
        }
        return (QualifiedName(first), start..<tokens[position - 1].range.upperBound)
    }

    /// `( nm, ... )`
    mutating func parseParenthesizedNames() throws -> [Identifier] {
        try expect(.leftParen)
        var names = [try parseName()]
        while accept(.comma) { names.append(try parseName()) }
        try expect(.rightParen)
        return names
    }

    /// `eidlist`: names that SQLite lets carry `COLLATE`/`ASC`/`DESC` only in legacy schemas (an error otherwise).
    mutating func parseColumnNameList() throws -> [Identifier] {
        try expect(.leftParen)
        var names: [Identifier] = []
        repeat {
            let token = current
            names.append(try parseName())
            if at(.collate) || at(.asc) || at(.desc) {
                throw error(.invalidConstruct, "syntax error after column name \"\(identifier(token).name)\"", at: token)
            }
        } while accept(.comma)
        try expect(.rightParen)
        return names
    }

    /// The end offset of the previous token.
    var previousEnd: Int { position > 0 ? tokens[position - 1].range.upperBound : 0 }
}

/// An address in the caller's stack frame (the stack grows downwards on every platform Swift supports).
@inline(never)
func currentStackAddress() -> UInt {
    var marker: UInt8 = 0
    return withUnsafeMutablePointer(to: &marker) { UInt(bitPattern: $0) }
}
