@testable import FerrySQL

/// Builds random but valid ASTs from a stream of choices (so that PropertyBased can shrink a failing case by
/// shrinking the stream). When the stream runs out every choice is 0, which picks the smallest alternative.
struct RandomAST {
    var choices: [Int]
    var position = 0
    var budget: Int

    init(_ choices: [Int], budget: Int = 60) {
        self.choices = choices
        self.budget = budget
    }

    mutating func pick(_ n: Int) -> Int {
        guard n > 1 else { return 0 }
        defer { position += 1 }
        return position < choices.count ? choices[position] % n : 0
    }

    mutating func flag() -> Bool { pick(2) == 1 }

    mutating func element<T>(_ items: [T]) -> T { items[pick(items.count)] }

    /// Spends budget; false once the tree is big enough.
    mutating func grow() -> Bool {
        budget -= 1
        return budget > 0
    }

    static let names: [Identifier] = ["a", "b", "c", "t1", "t2", "x_y", Identifier("a b", quoting: .doubleQuotes),
                                      Identifier("select", quoting: .doubleQuotes), Identifier("br", quoting: .brackets),
                                      Identifier("bq", quoting: .backticks), Identifier("q\"x", quoting: .doubleQuotes), "résumé", "key"]
    static let functions: [Identifier] = ["f", "max", "coalesce", "replace", "group_concat", "json_extract"]

    mutating func name() -> Identifier { element(Self.names) }

    mutating func literal() -> Literal {
        switch pick(10) {
        case 0: return .integer(element(["0", "1", "42", "0x1F", "9223372036854775807"]))
        case 1: return .real(element(["1.5", ".5", "1.", "1e10", "2.5E-3"]))
        case 2: return .string(element(["", "x", "it's", "a''b", "é", "line\nbreak"]))
        case 3: return .blob(element(["", "00", "aBcD"]))
        case 4: return .null
        case 5: return flag() ? .true : .false
        case 6: return element([.currentTime, .currentDate, .currentTimestamp])
        default: return .integer(String(pick(1000)))
        }
    }

    mutating func leaf() -> Expression {
        switch pick(4) {
        case 0: return .literal(literal())
        case 1:
            let n = 1 + pick(30)
            return .parameter(Parameter("?\(n)", index: n))
        case 2:
            if flag() { return .column(ColumnReference(table: name(), column: name())) }
            return .column(ColumnReference(schema: flag() ? "main" : nil, table: name(), column: name()))
        default: return .column(ColumnReference(column: name()))
        }
    }

    static let levels: [[BinaryOperator]] = [[.or], [.and], [.equal, .doubleEqual, .notEqual, .lessGreater, .is, .isNot, .isDistinctFrom, .isNotDistinctFrom],
                                             [.less, .lessEqual, .greater, .greaterEqual], [.bitAnd, .bitOr, .shiftLeft, .shiftRight],
                                             [.plus, .minus], [.multiply, .divide, .modulo], [.concat, .extract, .extractText]]

    mutating func expression() -> Expression {
        guard grow() else { return leaf() }
        switch pick(22) {
        case 0, 1, 2: return leaf()
        case 3: return .unary(element([.negate, .plus, .bitwiseNot, .not]), expression())
        case 4, 5, 6:
            let level = element(Self.levels)
            var terms: [BinaryTerm] = []
            for _ in 0...pick(3) { terms.append(BinaryTerm(element(level), expression())) }
            return .binary(expression(), terms)
        case 7: return .collate(expression(), element(["nocase", "binary", Identifier("rtrim", quoting: .doubleQuotes)]))
        case 8: return .cast(expression(), element([TypeName("INTEGER"), TypeName("VARCHAR", arguments: ["10"]), TypeName("UNSIGNED BIG INT"), TypeName("DECIMAL", arguments: ["10", "-2"])]))
        case 9:
            var branches: [WhenThen] = []
            for _ in 0...pick(2) { branches.append(WhenThen(when: expression(), then: expression())) }
            return .case(CaseExpression(base: flag() ? expression() : nil, branches: branches, otherwise: flag() ? expression() : nil))
        case 10:
            return .like(LikeExpression(expression(), negated: flag(), element([.like, .glob, .regexp, .match]), expression(), escape: flag() ? expression() : nil))
        case 11: return .nullTest(expression(), isNull: flag())
        case 12: return .between(BetweenExpression(expression(), negated: flag(), lower: expression(), upper: expression()))
        case 13:
            let target: InTarget
            switch pick(4) {
            case 0: target = .list((0..<pick(3)).map { _ in expression() })
            case 1: target = .select(select())
            case 2: target = .table(QualifiedName(schema: flag() ? "main" : nil, name()), location: .none)
            default: target = .tableFunction(QualifiedName("json_each"), arguments: [expression()])
            }
            return .in(InExpression(expression(), negated: flag(), target))
        case 14: return .exists(select())
        case 15: return .subquery(select())
        case 16: return .row((0...(1 + pick(2))).map { _ in expression() })
        case 17, 18: return .function(function())
        case 19: return .raise(element([.ignore, .abort(.literal(.string("no"))), .fail(.literal(.string("x"))), .rollback(.literal(.string("r")))]))
        default: return leaf()
        }
    }

    mutating func function() -> FunctionCall {
        var call = FunctionCall(name: element(Self.functions), arguments: .list([]))
        switch pick(3) {
        case 0: call.arguments = .star
        default:
            call.arguments = .list((0..<pick(4)).map { _ in expression() })
            if flag() { call.quantifier = element([.distinct, .all]) }
            if case .list(let a) = call.arguments, !a.isEmpty, pick(4) == 0 { call.orderBy = orderingTerms() }
        }
        if pick(4) == 0 { call.filter = expression() }
        if pick(4) == 0 { call.over = flag() ? .named(name()) : .definition(window()) }
        return call
    }

    mutating func window() -> WindowDefinition {
        var definition = WindowDefinition()
        if pick(3) == 0 { definition.base = name() }
        if flag() { definition.partitionBy = [expression()] }
        if flag() { definition.orderBy = orderingTerms() }
        if flag() {
            let bounds: [FrameBound] = [.unboundedPreceding, .preceding(.literal(.integer("1"))), .currentRow, .following(.literal(.integer("2")))]
            let start = element(bounds)
            definition.frame = FrameSpecification(unit: element([.rows, .range, .groups]), start: start,
                                                  end: flag() ? element([.currentRow, .following(.literal(.integer("1"))), .unboundedFollowing]) : nil,
                                                  exclusion: flag() ? element([.noOthers, .currentRow, .group, .ties]) : nil)
        }
        return definition
    }

    mutating func orderingTerms() -> [OrderingTerm] {
        (0...pick(2)).map { _ in
            OrderingTerm(expression(), order: flag() ? element([.ascending, .descending]) : nil, nulls: pick(3) == 0 ? element([.first, .last]) : nil)
        }
    }

    mutating func resultColumns() -> [ResultColumn] {
        (0...pick(3)).map { _ in
            switch pick(5) {
            case 0: return .all
            case 1: return .allColumns(of: name())
            default: return .expression(expression(), alias: flag() ? name() : nil)
            }
        }
    }

    mutating func tableOrSubquery() -> TableOrSubquery {
        guard grow() else { return .table(TableReference(QualifiedName(name()))) }
        switch pick(8) {
        case 0: return .subquery(select(), alias: flag() ? name() : nil)
        case 1: return .tableFunction(TableFunctionReference(QualifiedName("json_each"), arguments: [expression()], alias: flag() ? name() : nil))
        case 2: return .join(joinClause(), alias: flag() ? name() : nil)
        default:
            return .table(TableReference(QualifiedName(schema: flag() ? "main" : nil, name()), alias: flag() ? name() : nil,
                                         indexHint: pick(5) == 0 ? element([.notIndexed, .indexedBy("i1")]) : nil))
        }
    }

    mutating func joinClause() -> JoinClause {
        var clause = JoinClause(tableOrSubquery())
        for _ in 0..<pick(3) {
            var op = JoinOperator(element([.comma, .plain, .inner, .cross, .left, .leftOuter, .right, .rightOuter, .full, .fullOuter]))
            if op.kind != .comma && op.kind != .cross && flag() { op.natural = true }
            var constraint: JoinConstraint?
            if !op.natural {
                switch pick(3) {
                case 0: constraint = .on(expression())
                case 1: constraint = .using([name()])
                default: break
                }
            }
            clause.joins.append(Join(op, tableOrSubquery(), constraint: constraint))
        }
        return clause
    }

    mutating func selectCore(width: Int?) -> SelectCore {
        if let width {
            return .values((0...pick(2)).map { _ in (0..<width).map { _ in expression() } })
        }
        var clause = SelectClause(columns: resultColumns())
        if flag() { clause.quantifier = element([.distinct, .all]) }
        if flag() { clause.from = joinClause() }
        if flag() { clause.where = expression() }
        if pick(3) == 0 { clause.groupBy = [expression()] }
        if pick(4) == 0 { clause.having = expression() }
        if pick(5) == 0 { clause.windows = [NamedWindow(name: name(), definition: window())] }
        return .select(clause)
    }

    mutating func select() -> SelectStatement {
        guard grow() else { return SelectStatement(first: .select(SelectClause(columns: [.expression(leaf(), alias: nil)]))) }
        var statement = SelectStatement(first: selectCore(width: nil))
        if pick(4) == 0 {
            let width = 1 + pick(3)
            statement.first = selectCore(width: width)
        }
        if pick(4) == 0 {
            statement.with = WithClause(recursive: flag(), tables: (0...pick(1)).map { _ in
                CommonTableExpression(name: name(), columns: flag() ? [name()] : nil,
                                      materialization: pick(3) == 0 ? element([.materialized, .notMaterialized]) : nil, select: select())
            })
        }
        for _ in 0..<pick(3) {
            statement.compounds.append(CompoundTerm(element([.union, .unionAll, .intersect, .except]), selectCore(width: pick(3) == 0 ? 1 : nil)))
        }
        let lastIsValues: Bool
        if case .values = statement.compounds.last?.core ?? statement.first { lastIsValues = true } else { lastIsValues = false }
        if !lastIsValues {
            if pick(3) == 0 { statement.orderBy = orderingTerms() }
            if pick(3) == 0 { statement.limit = LimitClause(limit: expression(), offset: flag() ? expression() : nil, commaForm: flag()) }
        }
        return statement
    }

    mutating func assignments() -> [Assignment] {
        (0...pick(2)).map { _ in
            flag() ? Assignment(columns: [name()], value: expression()) : Assignment(columns: [name(), name()], value: expression())
        }
    }

    mutating func returning() -> [ResultColumn]? { pick(3) == 0 ? resultColumns() : nil }

    mutating func statement() -> Statement {
        switch pick(5) {
        case 0, 1: return .select(select())
        case 2:
            var insert = InsertStatement(verb: element([.insert(nil), .insert(.replace), .insert(.ignore), .replace]), table: QualifiedName(schema: flag() ? "main" : nil, name()),
                                         alias: pick(3) == 0 ? name() : nil, columns: flag() ? [name(), name()] : nil, source: .defaultValues)
            if pick(4) != 0 {
                var source = select()
                source.with = nil
                insert.source = .select(source)
                for index in 0..<pick(3) {
                    let last = index == 2
                    let target: [OrderingTerm]? = last || pick(3) == 0 ? nil : [OrderingTerm(.column(ColumnReference(column: name())))]
                    insert.upserts.append(UpsertClause(target: target, targetWhere: target != nil && flag() ? expression() : nil,
                                                       action: flag() ? .nothing : .update(assignments(), where: flag() ? expression() : nil)))
                    if target == nil { break }
                }
                if !insert.upserts.isEmpty, case .select(var core) = source.compounds.last?.core ?? source.first, core.from != nil, core.where == nil,
                   core.groupBy.isEmpty, core.windows.isEmpty, source.orderBy.isEmpty, source.limit == nil {
                    // `... FROM t ON CONFLICT` would read ON as a join constraint (as SQLite does): add a WHERE.
                    core.where = .literal(.true)
                    if source.compounds.isEmpty { source.first = .select(core) } else { source.compounds[source.compounds.count - 1].core = .select(core) }
                    insert.source = .select(source)
                }
            }
            insert.returning = returning()
            return .insert(insert)
        case 3:
            var update = UpdateStatement(orConflict: flag() ? element([.abort, .fail, .ignore, .replace, .rollback]) : nil,
                                         table: TableReference(QualifiedName(name()), alias: flag() ? name() : nil), assignments: assignments())
            if flag() { update.from = joinClause() }
            if flag() { update.where = expression() }
            update.returning = returning()
            if pick(3) == 0 { update.orderBy = orderingTerms(); update.limit = LimitClause(limit: expression()) }
            return .update(update)
        default:
            var delete = DeleteStatement(table: TableReference(QualifiedName(name()), alias: flag() ? name() : nil, indexHint: pick(4) == 0 ? .notIndexed : nil))
            if flag() { delete.where = expression() }
            delete.returning = returning()
            return .delete(delete)
        }
    }
}
