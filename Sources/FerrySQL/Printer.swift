/// How the printer quotes identifiers.
package enum IdentifierQuotingStyle: Sendable, Hashable {
    /// Keep each identifier's own quoting; quote bare names only where they would not read back as the same name.
    case asWritten
    /// Quote only where needed (keywords, special characters). Double-quoted column references keep their quotes,
    /// since SQLite may read an unknown double-quoted name as a string.
    case minimal
    /// Double-quote every identifier.
    case always
}

/// Options for ``Printer``.
package struct PrinterOptions: Sendable, Hashable {
    /// How identifiers are quoted.
    package var identifierQuoting: IdentifierQuotingStyle
    /// Print anonymous `?` parameters as `?N` with their binding index, so that statements whose expressions were
    /// reordered or duplicated still bind the same values.
    package var numberAnonymousParameters: Bool

    /// Creates options.
    package init(identifierQuoting: IdentifierQuotingStyle = .asWritten, numberAnonymousParameters: Bool = false) {
        self.identifierQuoting = identifierQuoting
        self.numberAnonymousParameters = numberAnonymousParameters
    }
}

/// Prints ASTs back to SQL text that SQLite reads as the same statement.
///
/// Literals and parameters are printed exactly as written; parentheses are added wherever an operand binds looser
/// than (or as loose as) its operator, so the printed text parses back to an equal AST.
package struct Printer: Sendable {
    /// The options.
    package var options: PrinterOptions

    /// Creates a printer.
    package init(options: PrinterOptions = PrinterOptions()) {
        self.options = options
    }

    /// Prints a statement (without a final `;`).
    package func print(_ statement: Statement) -> String {
        var writer = SQLWriter(options: options, capacity: 128)
        writer.statement(statement)
        return writer.output
    }

    /// Prints a query.
    package func print(_ select: SelectStatement) -> String {
        var writer = SQLWriter(options: options, capacity: 128)
        writer.select(select)
        return writer.output
    }

    /// Prints an expression.
    package func print(_ expression: Expression) -> String {
        var writer = SQLWriter(options: options, capacity: 128)
        writer.expression(expression)
        return writer.output
    }

    /// Prints statements separated by `;\n`.
    package func print(script statements: [Statement]) -> String {
        statements.map { print($0) }.joined(separator: ";\n")
    }
}

extension Expression {
    /// How tightly the expression binds, for deciding on parentheses.
    package var precedence: Precedence {
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
