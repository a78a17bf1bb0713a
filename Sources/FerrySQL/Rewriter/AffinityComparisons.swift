/// The affinity a comparison applies to the other operand of a column of the finished table.
package enum ComparisonAffinity: String, Sendable, Hashable {
    /// INTEGER, REAL or NUMERIC columns: the other operand is compared as a number when it reads as one.
    case numeric = "NUMERIC"
    /// TEXT columns: an operand without affinity (a literal, a parameter, an expression) is compared as text.
    case text = "TEXT"
}

/// What the caller says about the columns of a listed table whose replacement gives them no
/// affinity (a column the target reshaped: its pending rows are computed, so SQLite's union
/// column has none), and the function that applies an affinity to a value.
package struct ReshapedColumns: Sendable {
    /// The SQL function `f(value, 'NUMERIC' | 'TEXT')` that returns `value` under that affinity.
    package var function: String
    /// The reshaped columns of a listed table (lower-cased column name → affinity), given its
    /// lower-cased name; nil or empty when it has none.
    package var columns: @Sendable (String) -> [String: ComparisonAffinity]?

    /// Creates the description.
    package init(function: String, columns: @escaping @Sendable (String) -> [String: ComparisonAffinity]?) {
        self.function = function
        self.columns = columns
    }
}

/// Comparisons with a reshaped column of a listed table, made to convert their other operand as
/// the finished table's column would.
///
/// SQLite applies a column's affinity to the other operand of `=`, `<`, `IN (...)`, `BETWEEN`, ...
/// (`'30'` becomes `30` against an INTEGER column). A listed table read through its replacement
/// loses that affinity where a column is computed for the pending rows: the union's column then
/// has none, and `a = '30'` would miss every row. So the other operand is given the column's
/// affinity explicitly, `a = f('30', 'NUMERIC')`, which compares the same way against the rows
/// of both arms (and leaves the target's index usable: the call is a constant).
///
/// Rules (SQLite's, for an operand `x` compared with a column of affinity A): A numeric: `x` is
/// always converted (a value of numeric affinity is unchanged by it). A TEXT: `x` is converted
/// when it has no affinity (a literal, a parameter, an expression); a column or a `CAST` keeps
/// its own, as SQLite's rule does. Only a comparison whose operand is the column itself (`a`,
/// `t.a`, `a COLLATE x`) is changed, and only when the column binds to the listed table for
/// certain (qualified, or the only table of its SELECT).
///
/// Text in, text out: insertions only, around the other operands.
enum AffinityComparisons {
    /// The insertions for every such comparison of the statement.
    static func insertions(tokens: [Token], source: SourceText, analysis: StatementAnalysis, tables: TableSet,
                           reshaped: ReshapedColumns) -> [(Range<Int>, String)] {
        var result: [(Range<Int>, String)] = []
        let tokens = tokens.filter { $0.kind != .endOfInput }
        for use in analysis.columns {
            guard case .item(let item) = use.binding, let tableIndex = analysis.fromItems[item].table,
                  analysis.tables[tableIndex].kind == .read, analysis.tables[tableIndex].resolution == .table,
                  let key = tables.match(analysis.tables[tableIndex].name),
                  let affinity = reshaped.columns(key)?[use.reference.column.name.lowercased()],
                  let range = use.reference.location.range,
                  let first = tokens.firstIndex(where: { $0.range.lowerBound == range.lowerBound }),
                  let last = tokens.lastIndex(where: { $0.range.upperBound == range.upperBound })
            else { continue }
            for operand in operands(of: first...last, in: tokens) {
                guard affinity == .numeric || !hasAffinity(operand, in: tokens),
                      !isWrapped(operand, in: tokens, source: source, function: reshaped.function)
                else { continue }
                result.append((tokens[operand.lowerBound].range.lowerBound..<tokens[operand.lowerBound].range.lowerBound, reshaped.function + "("))
                result.append((tokens[operand.upperBound].range.upperBound..<tokens[operand.upperBound].range.upperBound,
                               ", '\(affinity.rawValue)')"))
            }
        }
        return result
    }

    // MARK: Operands

    /// The token ranges of the operands compared with the column at `column` (its tokens): the
    /// right operand of `column op x`, the items of `column IN (x, y)`, the bounds of
    /// `column BETWEEN x AND y`, the left operand of `x op column`. Empty when the column is not
    /// itself an operand of a comparison.
    private static func operands(of column: ClosedRange<Int>, in tokens: [Token]) -> [ClosedRange<Int>] {
        var after = column.upperBound + 1
        // `a COLLATE x` keeps the column's affinity.
        while after + 1 < tokens.count, tokens[after].is(.collate) { after += 2 }
        let startsOperand = column.lowerBound == 0 || isLeftBoundary(tokens[column.lowerBound - 1])
        if startsOperand, after < tokens.count {
            var operatorEnd = after
            if tokens[operatorEnd].is(.not), operatorEnd + 1 < tokens.count { operatorEnd += 1 }  // NOT IN, NOT BETWEEN
            let op = tokens[operatorEnd]
            if let level = comparisonLevel(op) {
                var start = operatorEnd + 1
                if op.is(.is), start < tokens.count, tokens[start].is(.not) { start += 1 }
                if op.is(.is), start < tokens.count, tokens[start].is(.distinct) { return [] }  // IS [NOT] DISTINCT FROM: not handled
                guard let end = operandEnd(from: start, in: tokens, level: level) else { return [] }
                return [start...end]
            }
            if op.is(.between) {
                guard let lowerEnd = operandEnd(from: operatorEnd + 1, in: tokens, level: .between), lowerEnd + 2 < tokens.count,
                      tokens[lowerEnd + 1].is(.and), let upperEnd = operandEnd(from: lowerEnd + 2, in: tokens, level: .equality)
                else { return [] }
                return [(operatorEnd + 1)...lowerEnd, (lowerEnd + 2)...upperEnd]
            }
            if op.is(.in), operatorEnd + 1 < tokens.count, tokens[operatorEnd + 1].kind == .leftParen {
                return listItems(openingAt: operatorEnd + 1, in: tokens)
            }
        }
        // `x op column`: the column ends its operand, the operator stands right before it.
        guard column.lowerBound >= 2, after >= tokens.count || isRightBoundary(tokens[after], level: .equality) else { return [] }
        let op = tokens[column.lowerBound - 1]
        guard let level = comparisonLevel(op), !op.is(.is) else { return [] }
        if level == .ordering, after < tokens.count, !isRightBoundary(tokens[after], level: .ordering) { return [] }
        guard let start = operandStart(endingAt: column.lowerBound - 2, in: tokens, level: level) else { return [] }
        return [start...(column.lowerBound - 2)]
    }

    /// How tightly a comparison binds (SQLite: `<` `<=` `>` `>=` bind tighter than `=` `==` `!=` `<>` `IS`).
    private enum Level { case ordering, equality, between }

    private static func comparisonLevel(_ token: Token) -> Level? {
        switch token.kind {
        case .less, .lessEqual, .greater, .greaterEqual: return .ordering
        case .equal, .doubleEqual, .notEqual, .lessGreater: return .equality
        case .identifier where token.is(.is): return .equality
        default: return nil
        }
    }

    /// The last token of the operand that starts at `start`: it runs until a token that ends it at
    /// its nesting level (a comma, a closing parenthesis, a keyword that ends an expression, an
    /// operator that binds as loosely as the comparison or looser). Nil when it is empty.
    private static func operandEnd(from start: Int, in tokens: [Token], level: Level) -> Int? {
        var depth = 0
        var cases = 0
        var index = start
        while index < tokens.count {
            let token = tokens[index]
            if token.kind == .leftParen { depth += 1 } else if token.kind == .rightParen {
                if depth == 0 { break }
                depth -= 1
            } else if depth == 0 {
                if token.is(.case) { cases += 1 } else if token.is(.end), cases > 0 { cases -= 1 } else if cases == 0 {
                    if level == .between && token.is(.and) { break }
                    if isRightBoundary(token, level: level) { break }
                }
            }
            index += 1
        }
        return index > start ? index - 1 : nil
    }

    /// The first token of the operand that ends at `end` (the mirror of `operandEnd`).
    private static func operandStart(endingAt end: Int, in tokens: [Token], level: Level) -> Int? {
        var depth = 0
        var index = end
        while index >= 0 {
            let token = tokens[index]
            if token.kind == .rightParen { depth += 1 } else if token.kind == .leftParen {
                if depth == 0 { break }
                depth -= 1
            } else if depth == 0 {
                if token.is(.end) || token.is(.case) { return nil }  // a CASE operand: left as it is
                if isLeftBoundary(token) || isRightBoundary(token, level: level) { break }
            }
            index -= 1
        }
        return index < end ? index + 1 : nil
    }

    /// The items of the list whose `(` is `tokens[open]`; empty for a subquery.
    private static func listItems(openingAt open: Int, in tokens: [Token]) -> [ClosedRange<Int>] {
        guard open + 1 < tokens.count, !tokens[open + 1].is(.select), !tokens[open + 1].is(.with), !tokens[open + 1].is(.values),
              tokens[open + 1].kind != .rightParen
        else { return [] }
        var items: [ClosedRange<Int>] = []
        var depth = 0
        var start = open + 1
        var index = open + 1
        while index < tokens.count {
            let token = tokens[index]
            if token.kind == .leftParen { depth += 1 } else if token.kind == .rightParen {
                if depth == 0 {
                    items.append(start...(index - 1))
                    return items
                }
                depth -= 1
            } else if token.kind == .comma, depth == 0 {
                guard index > start else { return [] }
                items.append(start...(index - 1))
                start = index + 1
            }
            index += 1
        }
        return []
    }

    /// A token before which an operand may start (what comes before a whole comparison).
    private static func isLeftBoundary(_ token: Token) -> Bool {
        switch token.kind {
        case .leftParen, .comma: return true
        case .identifier:
            guard let keyword = token.keyword else { return false }
            return [.and, .or, .not, .where, .on, .when, .then, .else, .having, .select, .distinct, .all, .returning].contains(keyword)
        default: return false
        }
    }

    /// A token that ends an operand of a comparison at `level`.
    private static func isRightBoundary(_ token: Token, level: Level) -> Bool {
        switch token.kind {
        case .comma, .rightParen, .semicolon, .endOfInput: return true
        case .equal, .doubleEqual, .notEqual, .lessGreater: return true
        case .less, .lessEqual, .greater, .greaterEqual: return level == .ordering
        case .identifier:
            guard let keyword = token.keyword else { return false }
            return [.and, .or, .not, .then, .when, .else, .end, .from, .where, .group, .order, .limit, .having, .window,
                    .on, .using, .as, .asc, .desc, .join, .inner, .left, .right, .full, .cross, .natural, .union, .except,
                    .intersect, .returning, .set, .do, .is, .in, .like, .glob, .match, .regexp, .between, .isnull, .notnull,
                    .escape, .offset].contains(keyword)
        default: return false
        }
    }

    // MARK: The operand's own affinity

    /// True when the operand has an affinity of its own: a column (`b`, `u.b`), a `CAST`, a
    /// subquery (its column's), each possibly with `COLLATE`.
    private static func hasAffinity(_ operand: ClosedRange<Int>, in tokens: [Token]) -> Bool {
        var end = operand.upperBound
        while end - 1 > operand.lowerBound, tokens[end - 1].is(.collate) { end -= 2 }
        let first = tokens[operand.lowerBound]
        let names = tokens[operand.lowerBound...end]
        if names.count % 2 == 1, names.enumerated().allSatisfy({ offset, token in
            offset % 2 == 1 ? token.kind == .dot : token.kind == .identifier || token.kind == .quotedIdentifier
        }) {
            return names.count > 1 || first.keyword.map { $0.fallsBackToIdentifier } ?? true
        }
        if first.is(.cast) || (first.kind == .leftParen && operand.lowerBound + 1 <= end && tokens[operand.lowerBound + 1].is(.select)) {
            return matchingParen(from: first.is(.cast) ? operand.lowerBound + 1 : operand.lowerBound, in: tokens) == end
        }
        return false
    }

    /// True when the operand is a call of `function` already (a statement rewritten once).
    private static func isWrapped(_ operand: ClosedRange<Int>, in tokens: [Token], source: SourceText, function: String) -> Bool {
        guard operand.count >= 3, tokens[operand.lowerBound].kind == .identifier,
              source.text(of: tokens[operand.lowerBound]).lowercased() == function,
              tokens[operand.lowerBound + 1].kind == .leftParen
        else { return false }
        return matchingParen(from: operand.lowerBound + 1, in: tokens) == operand.upperBound
    }

    private static func matchingParen(from open: Int, in tokens: [Token]) -> Int? {
        guard open < tokens.count, tokens[open].kind == .leftParen else { return nil }
        var depth = 0
        for index in open..<tokens.count {
            if tokens[index].kind == .leftParen { depth += 1 }
            if tokens[index].kind == .rightParen {
                depth -= 1
                if depth == 0 { return index }
            }
        }
        return nil
    }
}
