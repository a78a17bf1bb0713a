extension ParserState {
    /// `expr`, one nesting level deeper.
    mutating func parseExpression() throws -> Expression {
        try enter()
        defer { leave() }
        return try parseBinary(.or)
    }

    /// `expr, expr, ...` (at least one).
    mutating func parseExpressionList() throws -> [Expression] {
        var list = [try parseExpression()]
        while accept(.comma) { list.append(try parseExpression()) }
        return list
    }

    /// The binary operator at the current position and how many tokens it spans (`IS NOT DISTINCT FROM` spans 4).
    func currentBinaryOperator() -> (BinaryOperator, Int)? {
        let token = current
        switch token.kind {
        case .equal: return (.equal, 1)
        case .doubleEqual: return (.doubleEqual, 1)
        case .notEqual: return (.notEqual, 1)
        case .lessGreater: return (.lessGreater, 1)
        case .less: return (.less, 1)
        case .lessEqual: return (.lessEqual, 1)
        case .greater: return (.greater, 1)
        case .greaterEqual: return (.greaterEqual, 1)
        case .ampersand: return (.bitAnd, 1)
        case .pipe: return (.bitOr, 1)
        case .shiftLeft: return (.shiftLeft, 1)
        case .shiftRight: return (.shiftRight, 1)
        case .plus: return (.plus, 1)
        case .minus: return (.minus, 1)
        case .star: return (.multiply, 1)
        case .slash: return (.divide, 1)
        case .percent: return (.modulo, 1)
        case .concat: return (.concat, 1)
        case .arrow: return (.extract, 1)
        case .doubleArrow: return (.extractText, 1)
        case .identifier:
            switch token.keyword {
            case .or: return (.or, 1)
            case .and: return (.and, 1)
            case .is:
                let next = peek()
                if next.is(.not) {
                    if peek(2).is(.distinct) && peek(3).is(.from) { return (.isNotDistinctFrom, 4) }
                    return (.isNot, 2)
                }
                if next.is(.distinct) && peek(2).is(.from) { return (.isDistinctFrom, 3) }
                return (.is, 1)
            default: return nil
            }
        default: return nil
        }
    }

    /// Whether an equality-level postfix form starts here: `[NOT] LIKE|GLOB|REGEXP|MATCH|BETWEEN|IN`, `ISNULL`,
    /// `NOTNULL`, `NOT NULL`.
    func startsPostfixForm() -> Bool {
        let token = current
        guard token.kind == .identifier, let keyword = token.keyword else { return false }
        if keyword == .not {
            let next = peek()
            guard next.kind == .identifier, let k = next.keyword else { return false }
            switch k {
            case .like, .glob, .regexp, .match, .between, .in, .null: return true
            default: return false
            }
        }
        switch keyword {
        case .like, .glob, .regexp, .match, .between, .in, .isnull, .notnull: return true
        default: return false
        }
    }

    /// Precedence climbing over the binary operators of level `minimum` and tighter. Runs of one level are kept flat
    /// (left-associative); the postfix forms of the equality level wrap what precedes them.
    mutating func parseBinary(_ minimum: Precedence) throws -> Expression {
        let lhs = try parseCollateLevel()
        if !continuesExpression { return lhs }
        return try parseBinaryRest(lhs, minimum)
    }

    /// Whether an operator or postfix form follows (cheap test that keeps the common path's frames small).
    var continuesExpression: Bool {
        switch tokens[position].kind {
        case .identifier: return tokens[position].keyword != nil
        case .equal, .doubleEqual, .notEqual, .lessGreater, .less, .lessEqual, .greater, .greaterEqual, .ampersand, .pipe,
             .shiftLeft, .shiftRight, .plus, .minus, .star, .slash, .percent, .concat, .arrow, .doubleArrow:
            return true
        default: return false
        }
    }

    /// The operators after the first operand of `parseBinary`.
    @inline(never)
    mutating func parseBinaryRest(_ first: Expression, _ minimum: Precedence) throws -> Expression {
        var lhs = first
        var wraps = 0
        var headDepth = -1
        while true {
            if let (op, width) = currentBinaryOperator() {
                let level = op.precedence
                guard level >= minimum else { break }
                lhs = try parseChain(lhs, op, width, level)
                continue
            }
            guard minimum <= .equality, startsPostfixForm() else { break }
            wraps += 1
            if headDepth < 0 { headDepth = lhs.nestingDepth(limit: maximumDepth) }
            if depth + headDepth + wraps > maximumDepth || currentStackAddress() < stackLimit { throw tooDeep() }
            lhs = try parsePostfixForm(lhs)
        }
        return lhs
    }

    /// A flat run of operators of one level after `head`.
    @inline(never)
    mutating func parseChain(_ head: Expression, _ op: BinaryOperator, _ width: Int, _ level: Precedence) throws -> Expression {
        let tighter = Precedence(rawValue: level.rawValue + 1)!
        var terms: [BinaryTerm] = []
        var nextOp = op
        var nextWidth = width
        while true {
            position += nextWidth
            terms.append(BinaryTerm(nextOp, try parseBinary(tighter)))
            guard let (op, width) = currentBinaryOperator(), op.precedence == level else { break }
            nextOp = op
            nextWidth = width
        }
        return .binary(head, terms)
    }

    /// One equality-level postfix form applied to `lhs`.
    mutating func parsePostfixForm(_ lhs: Expression) throws -> Expression {
        let negated = accept(.not)
        let keyword = current.keyword!
        advance()
        switch keyword {
        case .like, .glob, .regexp, .match:
            let op: LikeOperator = keyword == .like ? .like : keyword == .glob ? .glob : keyword == .regexp ? .regexp : .match
            let pattern = try parseBinary(.comparison)
            var escape: Expression?
            if accept(.escape) { escape = try parseBinary(.comparison) }
            return .like(LikeExpression(lhs, negated: negated, op, pattern, escape: escape))
        case .between:
            try enter()
            let lower = try parseBinary(.equality)
            leave()
            try expect(.and)
            let upper = try parseBinary(.comparison)
            return .between(BetweenExpression(lhs, negated: negated, lower: lower, upper: upper))
        case .in:
            return .in(InExpression(lhs, negated: negated, try parseInTarget()))
        case .isnull:
            return .nullTest(lhs, isNull: true)
        default: // NOTNULL, or NULL after NOT
            return .nullTest(lhs, isNull: false)
        }
    }

    /// The right side of `IN`: `(list)`, `(select)`, `[schema.]table` or `[schema.]function(args)`.
    mutating func parseInTarget() throws -> InTarget {
        if at(.leftParen) {
            if startsSelect(peek()) {
                advance()
                try enter()
                let select = try parseSelect()
                leave()
                try expect(.rightParen)
                return .select(select)
            }
            advance()
            if accept(.rightParen) { return .list([]) }
            let list = try parseExpressionList()
            try expect(.rightParen)
            return .list(list)
        }
        let (name, range) = try parseQualifiedName()
        if accept(.leftParen) {
            var arguments: [Expression] = []
            if !at(.rightParen) { arguments = try parseExpressionList() }
            try expect(.rightParen)
            return .tableFunction(name, arguments: arguments)
        }
        return .table(name, location: SourceLocation(range))
    }

    /// `expr COLLATE name ...`
    mutating func parseCollateLevel() throws -> Expression {
        let expression = try parseUnary()
        if tokens[position].keyword != .collate { return expression }
        return try parseCollateSuffixes(expression)
    }

    @inline(never)
    mutating func parseCollateSuffixes(_ operand: Expression) throws -> Expression {
        var expression = operand
        var wraps = 0
        while at(.collate) {
            advance()
            let name = try parseIDOrString()
            if wraps == 0 {
                wraps = expression.nestingDepth(limit: maximumDepth)
            }
            wraps += 1
            if depth + wraps > maximumDepth { throw tooDeep() }
            expression = .collate(expression, name)
        }
        return expression
    }

    /// Prefix operators `- + ~` (binding tightest) and `NOT` (whose operand extends over the equality level).
    mutating func parseUnary() throws -> Expression {
        switch tokens[position].kind {
        case .minus, .plus, .tilde: return try parsePrefixed()
        case .identifier where tokens[position].keyword == .not: return try parsePrefixed()
        default: return try parsePrimary()
        }
    }

    @inline(never)
    mutating func parsePrefixed() throws -> Expression {
        let op: UnaryOperator
        switch tokens[position].kind {
        case .minus: op = .negate
        case .plus: op = .plus
        case .tilde: op = .bitwiseNot
        default: op = .not
        }
        advance()
        try enter()
        defer { leave() }
        if op == .not {
            return .unary(.not, try parseBinary(.equality))
        }
        return .unary(op, try parseUnary())
    }

    /// Whether `token` starts a `select` (`SELECT`, `VALUES` or `WITH`).
    func startsSelect(_ token: Token) -> Bool {
        guard token.kind == .identifier, let k = token.keyword else { return false }
        return k == .select || k == .values || k == .with
    }

    /// Literals, parameters, column references, function calls, parenthesized expressions, CAST, CASE, EXISTS, RAISE.
    mutating func parsePrimary() throws -> Expression {
        switch tokens[position].kind {
        case .leftParen: return try parseParenthesized()
        case .identifier, .quotedIdentifier, .string:
            if tokens[position + 1].kind == .leftParen { return try parseWordBeforeParenthesis() }
            return try parseSimplePrimary()
        default: return try parseSimplePrimary()
        }
    }

    /// A word followed by `(`: a function call, CAST, EXISTS, RAISE, or a table-valued IN target's name.
    @inline(never)
    mutating func parseWordBeforeParenthesis() throws -> Expression {
        let token = tokens[position]
        if token.kind == .identifier, let keyword = token.keyword {
            switch keyword {
            case .cast: return try parseCast()
            case .exists: return try parseExists()
            case .raise: return try parseRaise()
            case .case, .null, .currentTime, .currentDate, .currentTimestamp: return try parseSimplePrimary()
            default: guard token.isIDJ else { throw syntaxError() }
            }
        } else if token.kind == .string {
            throw syntaxError()
        }
        return try parseFunctionCall()
    }

    /// Literals, parameters, column references, CASE and the keyword forms not followed by `(`.
    @inline(never)
    mutating func parseSimplePrimary() throws -> Expression {
        let token = current
        switch token.kind {
        case .integer:
            advance()
            return .literal(.integer(source.string(token.range)))
        case .float:
            advance()
            return .literal(.real(source.string(token.range)))
        case .blob:
            advance()
            return .literal(.blob(source.string(token.range.lowerBound + 2..<token.range.upperBound - 1)))
        case .string:
            if peek().kind == .dot { return try parseColumnReference() }
            advance()
            return .literal(.string(dequote(token.range, quote: 0x27)))
        case .parameter:
            advance()
            return .parameter(try makeParameter(token))
        case .quotedIdentifier:
            return peek().kind == .leftParen ? try parseFunctionCall() : try parseColumnReference()
        case .identifier:
            break
        default:
            throw syntaxError()
        }
        // A word.
        if let keyword = token.keyword {
            switch keyword {
            case .null: advance(); return .literal(.null)
            case .currentTime: advance(); return .literal(.currentTime)
            case .currentDate: advance(); return .literal(.currentDate)
            case .currentTimestamp: advance(); return .literal(.currentTimestamp)
            case .cast:
                return try parseCast()
            case .case:
                return try parseCase()
            case .exists:
                return try parseExists()
            case .raise:
                return try parseRaise()
            default:
                guard token.isIDJ else { throw syntaxError() }
            }
        } else {
            // TRUE and FALSE are words that SQLite reads as 1 and 0 when no column has that name.
            let length = token.range.count
            if length == 4 || length == 5, peek().kind != .leftParen, peek().kind != .dot {
                let text = source.string(token.range)
                if SQLName.equal(text, "true") { advance(); return .literal(.true) }
                if SQLName.equal(text, "false") { advance(); return .literal(.false) }
            }
        }
        return peek().kind == .leftParen ? try parseFunctionCall() : try parseColumnReference()
    }

    /// `(expr)`, `(select)` or a row value `(a, b, ...)`.
    mutating func parseParenthesized() throws -> Expression {
        advance()
        if startsSelect(current) {
            try enter()
            defer { leave() }
            let select = try parseSelect()
            try expect(.rightParen)
            return .subquery(select)
        }
        let first = try parseExpression()
        if accept(.rightParen) { return first }
        try expect(.comma)
        var elements = [first]
        repeat { elements.append(try parseExpression()) } while accept(.comma)
        try expect(.rightParen)
        return .row(elements)
    }

    /// `CAST(expr AS type)`
    mutating func parseCast() throws -> Expression {
        advance()
        try expect(.leftParen)
        let value = try parseExpression()
        try expect(.as)
        let type = try parseTypeName() ?? TypeName("")
        try expect(.rightParen)
        return .cast(value, type)
    }

    /// `EXISTS (select)`
    mutating func parseExists() throws -> Expression {
        advance()
        try expect(.leftParen)
        try enter()
        defer { leave() }
        let select = try parseSelect()
        try expect(.rightParen)
        return .exists(select)
    }

    /// `nm`, `nm.nm` or `nm.nm.nm` (a bare column must be an `idj`).
    mutating func parseColumnReference() throws -> Expression {
        let start = current.range.lowerBound
        let first = current
        if peek().kind != .dot {
            guard first.isIDJ else { throw syntaxError() }
            advance()
            return .column(ColumnReference(column: identifier(first), location: SourceLocation(first.range)))
        }
        let a = try parseName()
        try expect(.dot)
        let b = try parseName()
        if accept(.dot) {
            let c = try parseName()
            return .column(ColumnReference(schema: a, table: b, column: c, location: SourceLocation(start..<previousEnd)))
        }
        return .column(ColumnReference(table: a, column: b, location: SourceLocation(start..<previousEnd)))
    }

    /// `name(args) [FILTER (WHERE ...)] [OVER ...]`
    mutating func parseFunctionCall() throws -> Expression {
        let name = identifier(current)
        advance()
        try expect(.leftParen)
        var call = FunctionCall(name: name, arguments: .list([]))
        if at(.star) && peek().kind == .rightParen {
            advance()
            call.arguments = .star
        } else {
            if accept(.distinct) { call.quantifier = .distinct } else if accept(.all) { call.quantifier = .all }
            if !at(.rightParen) && !(at(.order) && peek().is(.by)) {
                call.arguments = .list(try parseExpressionList())
                if at(.order) {
                    advance()
                    try expect(.by)
                    call.orderBy = try parseOrderingTerms()
                }
            }
        }
        try expect(.rightParen)
        if at(.filter) {
            advance()
            try expect(.leftParen)
            try expect(.where)
            call.filter = try parseExpression()
            try expect(.rightParen)
        }
        if at(.over) {
            advance()
            if accept(.leftParen) {
                call.over = .definition(try parseWindowDefinition())
                try expect(.rightParen)
            } else {
                call.over = .named(try parseName())
            }
        }
        return .function(call)
    }

    /// `CASE [base] WHEN ... THEN ... [ELSE ...] END`
    mutating func parseCase() throws -> Expression {
        advance()
        var base: Expression?
        if !at(.when) { base = try parseExpression() }
        var branches: [WhenThen] = []
        while accept(.when) {
            let condition = try parseExpression()
            try expect(.then)
            branches.append(WhenThen(when: condition, then: try parseExpression()))
        }
        if branches.isEmpty { throw syntaxError() }
        var otherwise: Expression?
        if accept(.else) { otherwise = try parseExpression() }
        try expect(.end)
        return .case(CaseExpression(base: base, branches: branches, otherwise: otherwise))
    }

    /// `RAISE(IGNORE)` or `RAISE(ROLLBACK|ABORT|FAIL, message)`
    mutating func parseRaise() throws -> Expression {
        advance()
        try expect(.leftParen)
        if accept(.ignore) {
            try expect(.rightParen)
            return .raise(.ignore)
        }
        let kind = current.keyword
        guard current.kind == .identifier, kind == .rollback || kind == .abort || kind == .fail else { throw syntaxError() }
        advance()
        try expect(.comma)
        try enter()
        defer { leave() }
        let message = try parseExpression()
        try expect(.rightParen)
        switch kind {
        case .rollback: return .raise(.rollback(message))
        case .abort: return .raise(.abort(message))
        default: return .raise(.fail(message))
        }
    }

    /// Assigns a parameter its binding index as SQLite does (`sqlite3ExprAssignVarNumber`).
    mutating func makeParameter(_ token: Token) throws -> Parameter {
        let text = source.string(token.range)
        let first = source[token.range.lowerBound]
        if first == 0x3F { // ?
            if token.range.count == 1 {
                parameterCount += 1
                return Parameter(text, index: parameterCount)
            }
            var value = 0
            for i in token.range.dropFirst() {
                value = value * 10 + Int(source[i] - 0x30)
                if value > 32766 { break }
            }
            guard value >= 1 && value <= 32766 else {
                throw error(.invalidParameter, "variable number must be between ?1 and ?32766", at: token)
            }
            parameterCount = max(parameterCount, value)
            if namedParameters[text] == nil { namedParameters[text] = value }
            return Parameter(text, index: value)
        }
        if first == 0x23 && CharClass.isDigit(source[token.range.lowerBound + 1]) {
            throw syntaxErrorAt(token)
        }
        if let index = namedParameters[text] { return Parameter(text, index: index) }
        parameterCount += 1
        guard parameterCount <= 32766 else { throw error(.invalidParameter, "too many SQL variables", at: token) }
        namedParameters[text] = parameterCount
        return Parameter(text, index: parameterCount)
    }

    func syntaxErrorAt(_ token: Token) -> SQLSyntaxError {
        error(.syntax, "near \"\(source.text(of: token))\": syntax error", at: token)
    }

    /// A type name: `ids...` then optionally `(signed [, signed])`. Returns nil when there is none.
    mutating func parseTypeName() throws -> TypeName? {
        var words: [String] = []
        while current.isIDOrString && !at(.generated) {
            words.append(source.string(current.range))
            advance()
        }
        if words.isEmpty { return nil }
        var arguments: [String] = []
        if accept(.leftParen) {
            arguments.append(try parseSignedNumber())
            if accept(.comma) { arguments.append(try parseSignedNumber()) }
            try expect(.rightParen)
        }
        return TypeName(words.joined(separator: " "), arguments: arguments)
    }

    /// `[+|-] number` as written.
    mutating func parseSignedNumber() throws -> String {
        var sign = ""
        if accept(.plus) { sign = "+" } else if accept(.minus) { sign = "-" }
        guard at(.integer) || at(.float) else { throw syntaxError() }
        let text = source.string(current.range)
        advance()
        return sign + text
    }

    /// `expr [ASC|DESC] [NULLS FIRST|LAST], ...`
    mutating func parseOrderingTerms() throws -> [OrderingTerm] {
        var terms: [OrderingTerm] = []
        repeat {
            var term = OrderingTerm(try parseExpression())
            if accept(.asc) { term.order = .ascending } else if accept(.desc) { term.order = .descending }
            if at(.nulls) && (peek().is(.first) || peek().is(.last)) {
                advance()
                term.nulls = current.is(.first) ? .first : .last
                advance()
            }
            terms.append(term)
        } while accept(.comma)
        return terms
    }
}

extension Expression {
    /// The nesting depth of the expression tree (not descending into subqueries), or `limit + 1` if deeper.
    func nestingDepth(limit: Int) -> Int {
        if limit <= 0 { return 1 }
        var deepest = 0
        forEachChild { child in
            if deepest <= limit { deepest = max(deepest, child.nestingDepth(limit: limit - 1)) }
        }
        return deepest + 1
    }

    /// Calls `body` with each direct sub-expression (not those inside subqueries or window definitions).
    func forEachChild(_ body: (Expression) -> Void) {
        switch self {
        case .literal, .parameter, .column, .exists, .subquery, .raise(.ignore): break
        case .unary(_, let e), .collate(let e, _), .cast(let e, _), .nullTest(let e, _): body(e)
        case .binary(let first, let terms):
            body(first)
            for t in terms { body(t.rhs) }
        case .case(let c):
            if let b = c.base { body(b) }
            for w in c.branches { body(w.when); body(w.then) }
            if let o = c.otherwise { body(o) }
        case .like(let l):
            body(l.lhs); body(l.pattern)
            if let e = l.escape { body(e) }
        case .between(let b): body(b.value); body(b.lower); body(b.upper)
        case .in(let i):
            body(i.value)
            switch i.target {
            case .list(let l): l.forEach(body)
            case .tableFunction(_, let a): a.forEach(body)
            default: break
            }
        case .row(let l): l.forEach(body)
        case .function(let f):
            if case .list(let l) = f.arguments { l.forEach(body) }
            for o in f.orderBy { body(o.expression) }
            if let f = f.filter { body(f) }
        case .raise(.rollback(let e)), .raise(.abort(let e)), .raise(.fail(let e)): body(e)
        }
    }
}
