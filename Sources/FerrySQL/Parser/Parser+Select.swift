extension ParserState {
    /// `select`: `[WITH ...] core [op core]... [ORDER BY ...] [LIMIT ...]`
    mutating func parseSelect() throws -> SelectStatement {
        var with: WithClause?
        if at(.with) { with = try parseWith() }
        return try parseSelect(with: with)
    }

    /// The rest of a `select` after its WITH clause.
    mutating func parseSelect(with: WithClause?) throws -> SelectStatement {
        var statement = SelectStatement(with: with, first: try parseSelectCore())
        while true {
            let op: CompoundOperator
            if at(.union) {
                advance()
                op = accept(.all) ? .unionAll : .union
            } else if accept(.intersect) {
                op = .intersect
            } else if accept(.except) {
                op = .except
            } else {
                break
            }
            statement.compounds.append(CompoundTerm(op, try parseSelectCore()))
        }
        // In SQLite's grammar ORDER BY and LIMIT belong to the last SELECT core; a VALUES core has neither.
        let lastIsValues: Bool
        if case .values = statement.compounds.last?.core ?? statement.first { lastIsValues = true } else { lastIsValues = false }
        if at(.order) && !lastIsValues {
            advance()
            try expect(.by)
            statement.orderBy = try parseOrderingTerms()
        }
        if at(.limit) && !lastIsValues { statement.limit = try parseLimit() }
        if at(.union) || at(.intersect) || at(.except) {
            let clause = statement.limit != nil && statement.orderBy.isEmpty ? "LIMIT" : "ORDER BY"
            throw error(.invalidConstruct, "\(clause) clause should come after \(current.keyword!.text) not before")
        }
        return statement
    }

    /// `LIMIT expr [OFFSET expr | , expr]`
    mutating func parseLimit() throws -> LimitClause {
        try expect(.limit)
        let first = try parseExpression()
        if accept(.offset) { return LimitClause(limit: first, offset: try parseExpression()) }
        if accept(.comma) { return LimitClause(limit: try parseExpression(), offset: first, commaForm: true) }
        return LimitClause(limit: first)
    }

    /// `WITH [RECURSIVE] name [(cols)] AS [[NOT] MATERIALIZED] (select), ...`
    mutating func parseWith() throws -> WithClause {
        try expect(.with)
        let recursive = accept(.recursive)
        var tables: [CommonTableExpression] = []
        repeat {
            let nameToken = current
            let name = try parseName()
            var columns: [Identifier]?
            if at(.leftParen) { columns = try parseColumnNameList() }
            try expect(.as)
            var materialization: Materialization?
            if accept(.materialized) {
                materialization = .materialized
            } else if at(.not) && peek().is(.materialized) {
                advance(); advance()
                materialization = .notMaterialized
            }
            try expect(.leftParen)
            try enter()
            let select = try parseSelect()
            leave()
            try expect(.rightParen)
            tables.append(CommonTableExpression(name: name, columns: columns, materialization: materialization, select: select,
                                                location: SourceLocation(nameToken.range)))
        } while accept(.comma)
        return WithClause(recursive: recursive, tables: tables)
    }

    /// `SELECT ...` or `VALUES (...), ...`
    mutating func parseSelectCore() throws -> SelectCore {
        if at(.values) { return try parseValues() }
        try expect(.select)
        var clause = SelectClause(columns: [])
        if accept(.distinct) { clause.quantifier = .distinct } else if accept(.all) { clause.quantifier = .all }
        clause.columns = try parseResultColumns()
        if stars != nil { holdStars() }  // before FROM: its subqueries have stars of their own
        if accept(.from) { clause.from = try parseJoinClause() }
        if stars != nil { recordStarSources(clause.from) }
        if accept(.where) { clause.where = try parseExpression() }
        if at(.group) {
            advance()
            try expect(.by)
            clause.groupBy = try parseExpressionList()
        }
        if accept(.having) { clause.having = try parseExpression() }
        if at(.window) { clause.windows = try parseWindowClause() }
        return .select(clause)
    }

    // VALUES and WINDOW are parsed out of line: a nested subquery passes through parseSelectCore,
    // and its frame (large in debug builds) is paid once per level.

    /// `VALUES (...), ...`
    @inline(never)
    mutating func parseValues() throws -> SelectCore {
        try expect(.values)
        var rows: [[Expression]] = []
        repeat {
            try expect(.leftParen)
            let row = try parseExpressionList()
            try expect(.rightParen)
            rows.append(row)
        } while accept(.comma)
        return .values(rows)
    }

    /// `WINDOW name AS (definition), ...`
    @inline(never)
    mutating func parseWindowClause() throws -> [NamedWindow] {
        try expect(.window)
        var windows: [NamedWindow] = []
        repeat {
            let name = try parseName()
            try expect(.as)
            try expect(.leftParen)
            let definition = try parseWindowDefinition()
            try expect(.rightParen)
            windows.append(NamedWindow(name: name, definition: definition))
        } while accept(.comma)
        return windows
    }

    /// Result columns (also RETURNING): `*`, `table.*`, `expr [[AS] alias]`.
    mutating func parseResultColumns() throws -> [ResultColumn] {
        var columns: [ResultColumn] = []
        let mark = stars == nil ? 0 : starMark()
        repeat {
            if at(.star) {
                if stars != nil { noteStar(qualified: false) }
                advance()
                columns.append(.all)
            } else if current.isName && peek().kind == .dot && peek(2).kind == .star {
                let table = identifier(current)
                if stars != nil { noteStar(qualified: true) }
                position += 3
                columns.append(.allColumns(of: table))
            } else {
                let start = current.range.lowerBound
                let expression = try parseExpression()
                let end = tokens[position - 1].range.upperBound
                let alias = try parseAlias()
                if resultColumnSpans != nil { recordResultColumn(expression, range: start..<end, hasAlias: alias != nil) }
                columns.append(.expression(expression, alias: alias))
            }
        } while accept(.comma)
        if stars != nil { finishStars(since: mark) }
        return columns
    }

    // The star bookkeeping runs out of line, and only when asked for: the recursion's frames
    // (a nested subquery passes through parseSelectCore and parseResultColumns) stay small.

    /// Where the stars of the result columns about to be parsed will start.
    @inline(never)
    func starMark() -> Int { stars!.pending.count }

    /// The stars noted since `mark` are the columns' just parsed (those of subqueries inside them
    /// were taken by their own SELECT).
    @inline(never)
    func finishStars(since mark: Int) {
        let book = stars!
        book.own = Array(book.pending[mark...])
        book.pending.removeSubrange(mark...)
    }

    /// Keeps the stars of the SELECT core being parsed until its FROM is known.
    @inline(never)
    func holdStars() {
        let book = stars!
        book.held.append(book.own)
    }

    /// Records the star result column at the current token (`*`, or `table.*` when `qualified`),
    /// as one of the result columns being parsed.
    @inline(never)
    func noteStar(qualified: Bool) {
        let book = stars!
        let span = qualified
            ? StarColumnSpan(range: current.range.lowerBound..<peek(2).range.upperBound, table: identifier(current))
            : StarColumnSpan(range: current.range, table: nil)
        book.pending.append(book.spans.count)
        book.spans.append(span)
    }

    /// Gives the held stars of the SELECT core just parsed the FROM items they expand to.
    @inline(never)
    func recordStarSources(_ from: JoinClause?) {
        let book = stars!
        guard let stars = book.held.popLast(), let from, !stars.isEmpty else { return }
        var items: [StarFromItem] = []
        var byName = false
        func add(_ clause: JoinClause) {
            for (index, item) in ([clause.first] + clause.joins.map(\.item)).enumerated() {
                if index > 0 {
                    let join = clause.joins[index - 1]
                    if join.op.natural { byName = true }
                    if case .using = join.constraint { byName = true }
                }
                switch item {
                case .table(let reference):
                    items.append(StarFromItem(exposedName: reference.alias ?? reference.name.name, tableLocation: reference.location))
                case .tableFunction(let function):
                    items.append(StarFromItem(exposedName: function.alias))
                case .subquery(_, let alias):
                    items.append(StarFromItem(exposedName: alias))
                case .join(let inner, nil):
                    add(inner)
                case .join(let inner, let alias?):
                    items.append(StarFromItem(exposedName: alias, nestedTableLocations: Self.tableLocations(in: inner)))
                }
            }
        }
        add(from)
        for index in stars {
            book.spans[index].fromItems = items
            book.spans[index].joinsByName = byName
        }
    }

    /// Where the named tables of a join clause were written (not inside its subqueries).
    static func tableLocations(in clause: JoinClause) -> [SourceLocation] {
        ([clause.first] + clause.joins.map(\.item)).flatMap { item -> [SourceLocation] in
            switch item {
            case .table(let reference): return [reference.location]
            case .join(let inner, _): return tableLocations(in: inner)
            case .tableFunction, .subquery: return []
            }
        }
    }

    /// Records where a result column stands (out of line: the recursion's frames stay small).
    @inline(never)
    mutating func recordResultColumn(_ expression: Expression, range: Range<Int>, hasAlias: Bool) {
        var column: ColumnReference?
        if case .column(let reference) = expression { column = reference }
        resultColumnSpans?.append(ResultColumnSpan(range: range, hasAlias: hasAlias, columnReference: column))
    }

    /// `AS nm` or a bare `ids`, or nothing.
    mutating func parseAlias() throws -> Identifier? {
        if accept(.as) { return try parseName() }
        if current.isIDOrString {
            let token = current
            advance()
            return identifier(token)
        }
        return nil
    }

    /// A FROM clause: items joined by `,` or JOIN operators.
    mutating func parseJoinClause() throws -> JoinClause {
        let first = try parseTableOrSubquery()
        if at(.on) || at(.using) {
            throw error(.invalidConstruct, "a JOIN clause is required before \(current.keyword!.text)")
        }
        var clause = JoinClause(first)
        while let op = try parseJoinOperator() {
            let item = try parseTableOrSubquery()
            var constraint: JoinConstraint?
            if accept(.on) {
                constraint = .on(try parseExpression())
            } else if accept(.using) {
                constraint = .using(try parseParenthesizedNames())
            }
            clause.joins.append(Join(op, item, constraint: constraint))
        }
        return clause
    }

    /// `,`, `JOIN` or `join-keywords JOIN`; nil when the FROM clause ends here.
    mutating func parseJoinOperator() throws -> JoinOperator? {
        if accept(.comma) { return .comma }
        if accept(.join) { return JoinOperator(.plain) }
        guard current.kind == .identifier, let k = current.keyword, k.isJoinKeyword else { return nil }
        let startToken = current
        var natural = false, left = false, right = false, outer = false, inner = false, cross = false
        var count = 0
        while !at(.join) {
            let token = current
            guard token.kind == .identifier, let word = token.keyword, word.isJoinKeyword, count < 3 else {
                if count < 3 && token.isName {
                    throw error(.invalidConstruct, "unknown join type: \(source.string(startToken.range.lowerBound..<token.range.upperBound))", at: token)
                }
                throw syntaxError()
            }
            switch word {
            case .natural: natural = true
            case .left: left = true; outer = outer || false
            case .right: right = true
            case .full: left = true; right = true
            case .outer: outer = true
            case .inner: inner = true
            default: cross = true
            }
            count += 1
            advance()
        }
        advance() // JOIN
        let isOuter = outer || left || right
        if (inner || cross) && isOuter || (outer && !left && !right) {
            throw error(.invalidConstruct, "unknown join type: \(source.string(startToken.range.lowerBound..<previousEnd))", at: startToken)
        }
        let kind: JoinOperator.Kind
        if cross { kind = .cross }
        else if inner { kind = .inner }
        else if left && right { kind = outer ? .fullOuter : .full }
        else if left { kind = outer ? .leftOuter : .left }
        else if right { kind = outer ? .rightOuter : .right }
        else { kind = .plain }
        return JoinOperator(natural: natural, kind)
    }

    /// One FROM item: a table, a table-valued function, a subquery or a parenthesized join.
    mutating func parseTableOrSubquery() throws -> TableOrSubquery {
        if at(.leftParen) {
            advance()
            try enter()
            defer { leave() }
            if startsSelect(current) {
                let select = try parseSelect()
                try expect(.rightParen)
                return .subquery(select, alias: try parseAlias())
            }
            let clause = try parseJoinClause()
            try expect(.rightParen)
            return .join(clause, alias: try parseAlias())
        }
        let (name, range) = try parseQualifiedName()
        if accept(.leftParen) {
            try enter()
            defer { leave() }
            var arguments: [Expression] = []
            if !at(.rightParen) { arguments = try parseExpressionList() }
            try expect(.rightParen)
            return .tableFunction(TableFunctionReference(name, arguments: arguments, alias: try parseAlias()))
        }
        let alias = try parseAlias()
        let (hint, hintLocation) = try parseIndexHint()
        return .table(TableReference(name, alias: alias, indexHint: hint, location: SourceLocation(range), indexHintLocation: hintLocation))
    }

    /// `INDEXED BY name` or `NOT INDEXED`, if present, and where it was written.
    mutating func parseIndexHint() throws -> (IndexHint?, SourceLocation) {
        let start = current.range.lowerBound
        if at(.indexed) {
            advance()
            try expect(.by)
            let name = try parseName()
            return (.indexedBy(name), SourceLocation(start..<previousEnd))
        }
        if at(.not) && peek().is(.indexed) {
            advance(); advance()
            return (.notIndexed, SourceLocation(start..<previousEnd))
        }
        return (nil, .none)
    }

    /// The inside of `OVER (...)` or `name AS (...)`.
    mutating func parseWindowDefinition() throws -> WindowDefinition {
        try enter()
        defer { leave() }
        var definition = WindowDefinition()
        let token = current
        let startsClause = (at(.partition) && peek().is(.by)) || (at(.order) && peek().is(.by)) || startsFrame
        if !startsClause && !at(.rightParen) {
            guard token.isName else { throw syntaxError() }
            definition.base = try parseName()
        }
        if at(.partition) && peek().is(.by) {
            advance(); advance()
            definition.partitionBy = try parseExpressionList()
        }
        if at(.order) {
            advance()
            try expect(.by)
            definition.orderBy = try parseOrderingTerms()
        }
        if startsFrame { definition.frame = try parseFrame() }
        return definition
    }

    /// Whether a frame specification starts here (`RANGE|ROWS|GROUPS` followed by a bound or BETWEEN).
    var startsFrame: Bool {
        guard at(.range) || at(.rows) || at(.groups) else { return false }
        let next = peek()
        return next.kind != .rightParen && next.kind != .comma && next.kind != .endOfInput
    }

    /// `unit bound` or `unit BETWEEN bound AND bound`, then `[EXCLUDE ...]`.
    mutating func parseFrame() throws -> FrameSpecification {
        let unit: FrameUnit = at(.range) ? .range : at(.rows) ? .rows : .groups
        advance()
        var frame: FrameSpecification
        if accept(.between) {
            let start = try parseFrameBound(isStart: true)
            try expect(.and)
            frame = FrameSpecification(unit: unit, start: start, end: try parseFrameBound(isStart: false))
        } else {
            frame = FrameSpecification(unit: unit, start: try parseFrameBound(isStart: true))
        }
        if accept(.exclude) {
            if accept(.no) { try expect(.others); frame.exclusion = .noOthers }
            else if accept(.current) { try expect(.row); frame.exclusion = .currentRow }
            else if accept(.group) { frame.exclusion = .group }
            else if accept(.ties) { frame.exclusion = .ties }
            else { throw syntaxError() }
        }
        return frame
    }

    mutating func parseFrameBound(isStart: Bool) throws -> FrameBound {
        if accept(.unbounded) {
            if isStart { try expect(.preceding); return .unboundedPreceding }
            try expect(.following)
            return .unboundedFollowing
        }
        if accept(.current) {
            try expect(.row)
            return .currentRow
        }
        let value = try parseExpression()
        if accept(.preceding) { return .preceding(value) }
        try expect(.following)
        return .following(value)
    }
}
