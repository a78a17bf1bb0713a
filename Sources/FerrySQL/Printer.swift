/// How the printer quotes identifiers.
public enum IdentifierQuotingStyle: Sendable, Hashable {
    /// Keep each identifier's own quoting; quote bare names only where they would not read back as the same name.
    case asWritten
    /// Quote only where needed (keywords, special characters). Double-quoted column references keep their quotes,
    /// since SQLite may read an unknown double-quoted name as a string.
    case minimal
    /// Double-quote every identifier.
    case always
}

/// Options for ``Printer``.
public struct PrinterOptions: Sendable, Hashable {
    /// How identifiers are quoted.
    public var identifierQuoting: IdentifierQuotingStyle
    /// Print anonymous `?` parameters as `?N` with their binding index, so that statements whose expressions were
    /// reordered or duplicated still bind the same values.
    public var numberAnonymousParameters: Bool

    /// Creates options.
    public init(identifierQuoting: IdentifierQuotingStyle = .asWritten, numberAnonymousParameters: Bool = false) {
        self.identifierQuoting = identifierQuoting
        self.numberAnonymousParameters = numberAnonymousParameters
    }
}

/// Prints ASTs back to SQL text that SQLite reads as the same statement.
///
/// Literals and parameters are printed exactly as written; parentheses are added wherever an operand binds looser
/// than (or as loose as) its operator, so the printed text parses back to an equal AST.
public struct Printer: Sendable {
    /// The options.
    public var options: PrinterOptions

    /// Creates a printer.
    public init(options: PrinterOptions = PrinterOptions()) {
        self.options = options
    }

    /// Prints a statement (without a final `;`).
    public func print(_ statement: Statement) -> String {
        var writer = SQLWriter(options: options, capacity: 128)
        writer.statement(statement)
        return writer.output
    }

    /// Prints a query.
    public func print(_ select: SelectStatement) -> String {
        var writer = SQLWriter(options: options, capacity: 128)
        writer.select(select)
        return writer.output
    }

    /// Prints an expression.
    public func print(_ expression: Expression) -> String {
        var writer = SQLWriter(options: options, capacity: 128)
        writer.expression(expression)
        return writer.output
    }

    /// Prints statements separated by `;\n`.
    public func print(script statements: [Statement]) -> String {
        statements.map { print($0) }.joined(separator: ";\n")
    }
}

extension Expression {
    /// How tightly the expression binds, for deciding on parentheses.
    public var precedence: Precedence {
        switch self {
        case .unary(.not, _): return .not
        case .unary: return .unary
        case .binary(_, let terms): return terms.first?.op.precedence ?? .primary
        case .collate: return .collate
        case .like, .between, .in, .nullTest: return .equality
        default: return .primary
        }
    }
}
