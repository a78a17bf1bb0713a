extension Expression {
    /// Calls `body` with this expression and every expression nested in it, parents first.
    ///
    /// Subqueries (`EXISTS (...)`, `(SELECT ...)`, `IN (SELECT ...)`) are visited as nodes but not
    /// entered: their expressions belong to another statement. Window definitions are not entered
    /// either.
    package func forEachSubexpression(_ body: (Expression) -> Void) {
        body(self)
        switch self {
        case .literal, .parameter, .column, .exists, .subquery, .raise:
            break
        case .unary(_, let operand), .collate(let operand, _), .cast(let operand, _), .nullTest(let operand, _):
            operand.forEachSubexpression(body)
        case .binary(let first, let terms):
            first.forEachSubexpression(body)
            for term in terms { term.rhs.forEachSubexpression(body) }
        case .case(let expression):
            expression.base?.forEachSubexpression(body)
            for branch in expression.branches {
                branch.when.forEachSubexpression(body)
                branch.then.forEachSubexpression(body)
            }
            expression.otherwise?.forEachSubexpression(body)
        case .like(let like):
            like.lhs.forEachSubexpression(body)
            like.pattern.forEachSubexpression(body)
            like.escape?.forEachSubexpression(body)
        case .between(let between):
            between.value.forEachSubexpression(body)
            between.lower.forEachSubexpression(body)
            between.upper.forEachSubexpression(body)
        case .in(let expression):
            expression.value.forEachSubexpression(body)
            switch expression.target {
            case .list(let items): for item in items { item.forEachSubexpression(body) }
            case .tableFunction(_, let arguments): for argument in arguments { argument.forEachSubexpression(body) }
            case .select, .table: break
            }
        case .row(let items):
            for item in items { item.forEachSubexpression(body) }
        case .function(let call):
            if case .list(let arguments) = call.arguments {
                for argument in arguments { argument.forEachSubexpression(body) }
            }
            for term in call.orderBy { term.expression.forEachSubexpression(body) }
            call.filter?.forEachSubexpression(body)
        }
    }

    /// The functions the expression calls, in order of appearance, with their argument counts
    /// (`count(*)` counts 0). The operators `LIKE`, `GLOB`, `REGEXP` and `MATCH` call the functions
    /// `like`, `glob`, `regexp` and `match` (with 2 arguments, 3 with `ESCAPE`), as in SQLite.
    package var functionCalls: [(name: String, argumentCount: Int)] {
        var calls: [(name: String, argumentCount: Int)] = []
        forEachSubexpression { expression in
            switch expression {
            case .function(let call):
                if case .list(let arguments) = call.arguments {
                    calls.append((call.name.name, arguments.count))
                } else {
                    calls.append((call.name.name, 0))
                }
            case .like(let like):
                calls.append((like.op.text.lowercased(), like.escape == nil ? 2 : 3))
            default:
                break
            }
        }
        return calls
    }
}
