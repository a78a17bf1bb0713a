extension SQLWriter {
    /// Writes `e`, in parentheses unless it binds at least as tightly as `minimum`.
    @inline(never)
    mutating func operand(_ e: Expression, atLeast minimum: Precedence) {
        if e.precedence >= minimum {
            expression(e)
        } else {
            output += "("
            expression(e)
            output += ")"
        }
    }

    /// Writes `e`, in parentheses unless it binds strictly tighter than `level`.
    @inline(__always) mutating func operand(_ e: Expression, above level: Precedence) {
        operand(e, atLeast: Precedence(rawValue: level.rawValue + 1)!)
    }

    /// Writes an expression. Each kind is written by its own small function, which keeps recursion cheap in stack.
    mutating func expression(_ e: Expression) {
        switch e {
        case .literal(let literal): self.literal(literal)
        case .unary(let op, let operand): unary(op, operand)
        case .binary(let first, let terms): binary(first, terms)
        case .function(let call): function(call)
        default: expressionDetail(e)
        }
    }

    @inline(never)
    mutating func binary(_ first: Expression, _ terms: [BinaryTerm]) {
        guard let level = terms.first?.op.precedence else { expression(first); return }
        operand(first, above: level)
        for term in terms {
            word(term.op.text)
            output += " "
            operand(term.rhs, above: level)
        }
    }

    @inline(never)
    mutating func expressionDetail(_ e: Expression) {
        switch e {
        case .literal(let literal):
            self.literal(literal)
        case .parameter(let parameter):
            if options.numberAnonymousParameters && parameter.isAnonymous {
                output += "?\(parameter.index)"
            } else {
                output += parameter.text
            }
        case .column(let column):
            if let schema = column.schema {
                identifier(schema)
                output += "."
            }
            if let table = column.table {
                identifier(table)
                output += "."
                identifier(column.column)
            } else {
                identifier(column.column, isColumn: true)
            }
        case .unary(let op, let operand):
            unary(op, operand)
        case .binary(let first, let terms):
            guard let level = terms.first?.op.precedence else { expression(first); return }
            operand(first, above: level)
            for term in terms {
                word(term.op.text)
                output += " "
                operand(term.rhs, above: level)
            }
        case .collate(let operand, let name):
            self.operand(operand, atLeast: .collate)
            word("COLLATE ")
            identifier(name)
        case .cast(let operand, let type):
            output += "CAST("
            expression(operand)
            output += " AS"
            if !type.name.isEmpty {
                output += " "
                typeName(type)
            }
            output += ")"
        case .case(let c):
            output += "CASE"
            if let base = c.base {
                output += " "
                expression(base)
            }
            for branch in c.branches {
                word("WHEN ")
                expression(branch.when)
                word("THEN ")
                expression(branch.then)
            }
            if let otherwise = c.otherwise {
                word("ELSE ")
                expression(otherwise)
            }
            word("END")
        case .like(let like):
            operand(like.lhs, above: .equality)
            if like.negated { word("NOT") }
            word(like.op.text)
            output += " "
            operand(like.pattern, above: .equality)
            if let escape = like.escape {
                word("ESCAPE ")
                operand(escape, above: .equality)
            }
        case .nullTest(let operand, let isNull):
            self.operand(operand, above: .equality)
            word(isNull ? "ISNULL" : "NOTNULL")
        case .between(let between):
            operand(between.value, above: .equality)
            if between.negated { word("NOT") }
            word("BETWEEN ")
            operand(between.lower, above: .equality)
            word("AND ")
            operand(between.upper, above: .equality)
        case .in(let inExpression):
            operand(inExpression.value, above: .equality)
            if inExpression.negated { word("NOT") }
            word("IN ")
            switch inExpression.target {
            case .list(let items):
                output += "("
                list(items) { $0.expression($1) }
                output += ")"
            case .select(let select):
                output += "("
                self.select(select)
                output += ")"
            case .table(let name, _):
                qualifiedName(name)
            case .tableFunction(let name, let arguments):
                qualifiedName(name)
                output += "("
                list(arguments) { $0.expression($1) }
                output += ")"
            }
        case .exists(let select):
            output += "EXISTS ("
            self.select(select)
            output += ")"
        case .subquery(let select):
            output += "("
            self.select(select)
            output += ")"
        case .row(let items):
            output += "("
            list(items) { $0.expression($1) }
            output += ")"
        case .function(let call):
            function(call)
        case .raise(let raise):
            switch raise {
            case .ignore: output += "RAISE(IGNORE)"
            case .rollback(let m): output += "RAISE(ROLLBACK, "; expression(m); output += ")"
            case .abort(let m): output += "RAISE(ABORT, "; expression(m); output += ")"
            case .fail(let m): output += "RAISE(FAIL, "; expression(m); output += ")"
            }
        }
    }

    @inline(never)
    mutating func unary(_ op: UnaryOperator, _ operand: Expression) {
        switch op {
        case .not:
            output += "NOT "
            if case .unary(.not, _) = operand { expression(operand) } else { self.operand(operand, atLeast: .equality) }
            return
        case .negate: output += "-"
        case .plus: output += "+"
        case .bitwiseNot: output += "~"
        }
        // A space keeps `- -x` from reading as a comment and `- +x`, `+ -x` apart.
        if case .unary(let inner, _) = operand, inner != .not { output += " " }
        self.operand(operand, atLeast: .unary)
    }

    mutating func literal(_ literal: Literal) {
        switch literal {
        case .integer(let text), .real(let text): output += text
        case .string(let value): output += Self.quotedString(value)
        case .blob(let hex): output += "X'" + hex + "'"
        case .null: output += "NULL"
        case .true: output += "TRUE"
        case .false: output += "FALSE"
        case .currentTime: output += "CURRENT_TIME"
        case .currentDate: output += "CURRENT_DATE"
        case .currentTimestamp: output += "CURRENT_TIMESTAMP"
        }
    }

    mutating func typeName(_ type: TypeName) {
        output += type.name
        if !type.arguments.isEmpty {
            output += "("
            output += type.arguments.joined(separator: ", ")
            output += ")"
        }
    }

    @inline(never)
    mutating func function(_ call: FunctionCall) {
        // A function named like a keyword that would read differently is quoted by `identifier`.
        identifier(call.name, isColumn: true, isFunction: true)
        output += "("
        switch call.arguments {
        case .star:
            output += "*"
        case .list(let arguments):
            if let quantifier = call.quantifier {
                output += quantifier == .distinct ? "DISTINCT" : "ALL"
                if !arguments.isEmpty { output += " " }
            }
            list(arguments) { $0.expression($1) }
            if !call.orderBy.isEmpty {
                word("ORDER BY ")
                orderingTerms(call.orderBy)
            }
        }
        output += ")"
        if let filter = call.filter {
            output += " FILTER (WHERE "
            expression(filter)
            output += ")"
        }
        if let over = call.over {
            output += " OVER "
            switch over {
            case .named(let name): identifier(name)
            case .definition(let definition):
                output += "("
                windowDefinition(definition)
                output += ")"
            }
        }
    }

    mutating func orderingTerms(_ terms: [OrderingTerm]) {
        list(terms) { writer, term in
            writer.expression(term.expression)
            if let order = term.order { writer.word(order == .ascending ? "ASC" : "DESC") }
            if let nulls = term.nulls { writer.word(nulls == .first ? "NULLS FIRST" : "NULLS LAST") }
        }
    }

    mutating func windowDefinition(_ definition: WindowDefinition) {
        var needsSpace = false
        if let base = definition.base {
            identifier(base)
            needsSpace = true
        }
        if !definition.partitionBy.isEmpty {
            if needsSpace { output += " " }
            output += "PARTITION BY "
            list(definition.partitionBy) { $0.expression($1) }
            needsSpace = true
        }
        if !definition.orderBy.isEmpty {
            if needsSpace { output += " " }
            output += "ORDER BY "
            orderingTerms(definition.orderBy)
            needsSpace = true
        }
        if let frame = definition.frame {
            if needsSpace { output += " " }
            switch frame.unit {
            case .rows: output += "ROWS "
            case .range: output += "RANGE "
            case .groups: output += "GROUPS "
            }
            if let end = frame.end {
                output += "BETWEEN "
                frameBound(frame.start)
                output += " AND "
                frameBound(end)
            } else {
                frameBound(frame.start)
            }
            if let exclusion = frame.exclusion {
                switch exclusion {
                case .noOthers: output += " EXCLUDE NO OTHERS"
                case .currentRow: output += " EXCLUDE CURRENT ROW"
                case .group: output += " EXCLUDE GROUP"
                case .ties: output += " EXCLUDE TIES"
                }
            }
        }
    }

    mutating func frameBound(_ bound: FrameBound) {
        switch bound {
        case .unboundedPreceding: output += "UNBOUNDED PRECEDING"
        case .preceding(let e): expression(e); output += " PRECEDING"
        case .currentRow: output += "CURRENT ROW"
        case .following(let e): expression(e); output += " FOLLOWING"
        case .unboundedFollowing: output += "UNBOUNDED FOLLOWING"
        }
    }
}
