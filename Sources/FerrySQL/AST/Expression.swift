/// An SQL expression.
///
/// Runs of left-associative binary operators of one precedence level are kept flat (``binary(_:_:)``) so that long
/// chains such as `a OR b OR c ...` nest only one level deep. Parentheses are not kept: the printer adds them where
/// needed.
package indirect enum Expression: Sendable, Hashable {
    /// A literal.
    case literal(Literal)
    /// A bound parameter.
    case parameter(Parameter)
    /// `[schema.][table.]column`
    case column(ColumnReference)
    /// A prefix operator applied to an operand.
    case unary(UnaryOperator, Expression)
    /// `first op1 rhs1 op2 rhs2 ...`, evaluated left to right; every operator has the same precedence and there is
    /// at least one term.
    case binary(Expression, [BinaryTerm])
    /// `expr COLLATE name`
    case collate(Expression, Identifier)
    /// `CAST(expr AS type)`
    case cast(Expression, TypeName)
    /// `CASE [base] WHEN ... THEN ... [ELSE ...] END`
    case `case`(CaseExpression)
    /// `lhs [NOT] LIKE|GLOB|REGEXP|MATCH pattern [ESCAPE escape]`
    case like(LikeExpression)
    /// `expr ISNULL` (`isNull` true) or `expr NOTNULL` / `expr NOT NULL` (`isNull` false).
    case nullTest(Expression, isNull: Bool)
    /// `value [NOT] BETWEEN lower AND upper`
    case between(BetweenExpression)
    /// `value [NOT] IN (...)`
    case `in`(InExpression)
    /// `EXISTS (select)`
    case exists(SelectStatement)
    /// A scalar subquery `(select)`.
    case subquery(SelectStatement)
    /// A row value `(a, b, ...)` with at least two elements.
    case row([Expression])
    /// A function call, possibly an aggregate or window function.
    case function(FunctionCall)
    /// `RAISE(...)` inside a trigger.
    case raise(RaiseFunction)
}

/// `[schema.][table.]column`
package struct ColumnReference: Sendable, Hashable {
    /// The schema, only with a table.
    package var schema: Identifier?
    /// The table or alias qualifying the column.
    package var table: Identifier?
    /// The column.
    package var column: Identifier
    /// Where the whole reference was written.
    package var location: SourceLocation

    /// Creates a column reference.
    package init(schema: Identifier? = nil, table: Identifier? = nil, column: Identifier, location: SourceLocation = .none) {
        self.schema = schema
        self.table = table
        self.column = column
        self.location = location
    }
}

/// Prefix operators.
package enum UnaryOperator: UInt8, Sendable, Hashable {
    /// `-`
    case negate
    /// `+`
    case plus
    /// `~`
    case bitwiseNot
    /// `NOT`
    case not
}

/// The binary operators, with their SQL spelling.
package enum BinaryOperator: UInt8, Sendable, Hashable, CaseIterable {
    /// `OR`, `AND`.
    case or, and
    /// `=`, `==`, `!=`, `<>` kept as written.
    case equal, doubleEqual, notEqual, lessGreater
    /// `IS`, `IS NOT`, `IS DISTINCT FROM`, `IS NOT DISTINCT FROM`.
    case `is`, isNot, isDistinctFrom, isNotDistinctFrom
    /// `<`, `<=`, `>`, `>=`.
    case less, lessEqual, greater, greaterEqual
    /// `&`, `|`, `<<`, `>>`.
    case bitAnd, bitOr, shiftLeft, shiftRight
    /// `+`, `-`.
    case plus, minus
    /// `*`, `/`, `%`.
    case multiply, divide, modulo
    /// `||`, `->`, `->>`
    case concat, extract, extractText

    /// The operator as SQL text.
    package var text: String {
        switch self {
        case .or: return "OR"
        case .and: return "AND"
        case .equal: return "="
        case .doubleEqual: return "=="
        case .notEqual: return "!="
        case .lessGreater: return "<>"
        case .is: return "IS"
        case .isNot: return "IS NOT"
        case .isDistinctFrom: return "IS DISTINCT FROM"
        case .isNotDistinctFrom: return "IS NOT DISTINCT FROM"
        case .less: return "<"
        case .lessEqual: return "<="
        case .greater: return ">"
        case .greaterEqual: return ">="
        case .bitAnd: return "&"
        case .bitOr: return "|"
        case .shiftLeft: return "<<"
        case .shiftRight: return ">>"
        case .plus: return "+"
        case .minus: return "-"
        case .multiply: return "*"
        case .divide: return "/"
        case .modulo: return "%"
        case .concat: return "||"
        case .extract: return "->"
        case .extractText: return "->>"
        }
    }

    /// The precedence level of the operator (see `parse.y`).
    package var precedence: Precedence {
        switch self {
        case .or: return .or
        case .and: return .and
        case .equal, .doubleEqual, .notEqual, .lessGreater, .is, .isNot, .isDistinctFrom, .isNotDistinctFrom: return .equality
        case .less, .lessEqual, .greater, .greaterEqual: return .comparison
        case .bitAnd, .bitOr, .shiftLeft, .shiftRight: return .bitwise
        case .plus, .minus: return .additive
        case .multiply, .divide, .modulo: return .multiplicative
        case .concat, .extract, .extractText: return .concatenation
        }
    }
}

/// SQLite's operator precedence levels, loosest first (from `parse.y`).
package enum Precedence: Int, Sendable, Comparable {
    /// The levels, loosest first.
    case or = 1, and, not, equality, comparison, bitwise, additive, multiplicative, concatenation, collate, unary, primary

    /// Orders levels from loosest to tightest.
    package static func < (a: Precedence, b: Precedence) -> Bool { a.rawValue < b.rawValue }
}

/// One `op rhs` step of a binary chain.
package struct BinaryTerm: Sendable, Hashable {
    /// The operator.
    package var op: BinaryOperator
    /// Its right operand.
    package var rhs: Expression

    /// Creates a term.
    package init(_ op: BinaryOperator, _ rhs: Expression) {
        self.op = op
        self.rhs = rhs
    }
}

/// `CASE [base] WHEN ... THEN ... [ELSE ...] END`
package struct CaseExpression: Sendable, Hashable {
    /// The operand compared with each `WHEN`, if any.
    package var base: Expression?
    /// The `WHEN ... THEN ...` pairs (at least one).
    package var branches: [WhenThen]
    /// The `ELSE` result.
    package var otherwise: Expression?

    /// Creates a CASE expression.
    package init(base: Expression? = nil, branches: [WhenThen], otherwise: Expression? = nil) {
        self.base = base
        self.branches = branches
        self.otherwise = otherwise
    }
}

/// One `WHEN condition THEN result` of a CASE.
package struct WhenThen: Sendable, Hashable {
    /// The condition (or the value compared with the base).
    package var when: Expression
    /// The result.
    package var then: Expression

    /// Creates a branch.
    package init(when: Expression, then: Expression) {
        self.when = when
        self.then = then
    }
}

/// The pattern-matching operators.
package enum LikeOperator: UInt8, Sendable, Hashable {
    /// `LIKE`, `GLOB`, `REGEXP`, `MATCH`.
    case like, glob, regexp, match

    /// The operator as SQL text.
    package var text: String {
        switch self {
        case .like: return "LIKE"
        case .glob: return "GLOB"
        case .regexp: return "REGEXP"
        case .match: return "MATCH"
        }
    }
}

/// `lhs [NOT] LIKE pattern [ESCAPE escape]` and friends.
package struct LikeExpression: Sendable, Hashable {
    /// The left operand.
    package var lhs: Expression
    /// Whether `NOT` was written.
    package var negated: Bool
    /// The operator.
    package var op: LikeOperator
    /// The pattern.
    package var pattern: Expression
    /// The `ESCAPE` expression, if any.
    package var escape: Expression?

    /// Creates a pattern match.
    package init(_ lhs: Expression, negated: Bool = false, _ op: LikeOperator, _ pattern: Expression, escape: Expression? = nil) {
        self.lhs = lhs
        self.negated = negated
        self.op = op
        self.pattern = pattern
        self.escape = escape
    }
}

/// `value [NOT] BETWEEN lower AND upper`
package struct BetweenExpression: Sendable, Hashable {
    /// The value.
    package var value: Expression
    /// Whether `NOT` was written.
    package var negated: Bool
    /// The lower bound.
    package var lower: Expression
    /// The upper bound.
    package var upper: Expression

    /// Creates a range test.
    package init(_ value: Expression, negated: Bool = false, lower: Expression, upper: Expression) {
        self.value = value
        self.negated = negated
        self.lower = lower
        self.upper = upper
    }
}

/// `value [NOT] IN target`
package struct InExpression: Sendable, Hashable {
    /// The value.
    package var value: Expression
    /// Whether `NOT` was written.
    package var negated: Bool
    /// The right side.
    package var target: InTarget

    /// Creates a membership test.
    package init(_ value: Expression, negated: Bool = false, _ target: InTarget) {
        self.value = value
        self.negated = negated
        self.target = target
    }
}

/// What the right side of `IN` is.
package enum InTarget: Sendable, Hashable {
    /// `(a, b, ...)`, possibly empty.
    case list([Expression])
    /// `(SELECT ...)`
    case select(SelectStatement)
    /// `[schema.]table`: reads the table's single column.
    case table(QualifiedName, location: SourceLocation)
    /// `[schema.]function(args)`: a table-valued function.
    case tableFunction(QualifiedName, arguments: [Expression])
}

/// `DISTINCT` or `ALL`.
package enum DistinctMode: UInt8, Sendable, Hashable {
    /// `DISTINCT`, `ALL`.
    case distinct, all
}

/// A function call: `name([DISTINCT] args [ORDER BY ...]) [FILTER (WHERE ...)] [OVER ...]`.
package struct FunctionCall: Sendable, Hashable {
    /// The function's name.
    package var name: Identifier
    /// `DISTINCT` or `ALL` before the arguments.
    package var quantifier: DistinctMode?
    /// The arguments.
    package var arguments: FunctionArguments
    /// `ORDER BY` inside the parentheses (aggregates, SQLite 3.44+).
    package var orderBy: [OrderingTerm]
    /// `FILTER (WHERE ...)`
    package var filter: Expression?
    /// `OVER ...`
    package var over: WindowSpecification?

    /// Creates a function call.
    package init(name: Identifier, quantifier: DistinctMode? = nil, arguments: FunctionArguments, orderBy: [OrderingTerm] = [],
                filter: Expression? = nil, over: WindowSpecification? = nil) {
        self.name = name
        self.quantifier = quantifier
        self.arguments = arguments
        self.orderBy = orderBy
        self.filter = filter
        self.over = over
    }
}

/// A function's arguments.
package enum FunctionArguments: Sendable, Hashable {
    /// `(*)`
    case star
    /// `(a, b, ...)`, possibly empty.
    case list([Expression])
}

/// What follows `OVER`.
package enum WindowSpecification: Sendable, Hashable {
    /// `OVER name`
    case named(Identifier)
    /// `OVER (...)`
    case definition(WindowDefinition)
}

/// The kinds of `RAISE`.
package enum RaiseFunction: Sendable, Hashable {
    /// `RAISE(IGNORE)`
    case ignore
    /// `RAISE(ROLLBACK, message)`
    case rollback(Expression)
    /// `RAISE(ABORT, message)`
    case abort(Expression)
    /// `RAISE(FAIL, message)`
    case fail(Expression)
}

/// A column type as written: `VARCHAR(10)`, `UNSIGNED BIG INT`, `DECIMAL(10, -2)`.
package struct TypeName: Sendable, Hashable {
    /// The words of the name as written, joined by single spaces.
    package var name: String
    /// The signed numbers in parentheses as written (`+10`, `-2`), zero to two of them.
    package var arguments: [String]

    /// Creates a type name.
    package init(_ name: String, arguments: [String] = []) {
        self.name = name
        self.arguments = arguments
    }
}

/// `ASC` or `DESC`.
package enum SortOrder: UInt8, Sendable, Hashable {
    /// `ASC`, `DESC`.
    case ascending, descending
}

/// `NULLS FIRST` or `NULLS LAST`.
package enum NullsOrder: UInt8, Sendable, Hashable {
    /// `NULLS FIRST`, `NULLS LAST`.
    case first, last
}

/// One term of an `ORDER BY` (also index columns and conflict targets): `expr [ASC|DESC] [NULLS FIRST|LAST]`.
package struct OrderingTerm: Sendable, Hashable {
    /// The expression (a `COLLATE` is part of it).
    package var expression: Expression
    /// `ASC` or `DESC`, if written.
    package var order: SortOrder?
    /// `NULLS FIRST|LAST`, if written.
    package var nulls: NullsOrder?

    /// Creates an ordering term.
    package init(_ expression: Expression, order: SortOrder? = nil, nulls: NullsOrder? = nil) {
        self.expression = expression
        self.order = order
        self.nulls = nulls
    }
}
