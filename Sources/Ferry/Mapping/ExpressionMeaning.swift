import FerrySQLite
import FerrySQL
import Foundation

/// Compares filters and column feeds by what they mean, not how they are spelled: a plan
/// re-applied with `conversation_id<1000` is the plan registered with `conversation_id < 1000`.
enum ExpressionMeaning {
    /// A key equal for two expressions that differ only in white space, redundant parentheses,
    /// identifier quoting, and the case of keywords, identifiers and function names (literals are
    /// compared exactly). Nil for a text that does not parse (compared as written then).
    static func key(_ text: String) -> String? {
        guard let expression = try? Parser.parseExpression(text) else { return nil }
        let printed = Printer(options: PrinterOptions(identifierQuoting: .always)).print(expression)
        guard let tokens = try? Tokenizer.tokenize(printed) else { return printed }
        let source = SourceText(printed)
        return tokens.filter { $0.kind != .endOfInput }.map { token -> String in
            let text = source.string(token.range)
            switch token.kind {
            case .identifier, .quotedIdentifier: return text.lowercased()
            default: return text
            }
        }.joined(separator: " ")
    }

    /// True when two optional filters mean the same (nil, empty and white space mean "no filter").
    static func sameFilter(_ a: String?, _ b: String?) -> Bool {
        let (a, b) = (a.flatMap(nonBlank), b.flatMap(nonBlank))
        guard let a, let b else { return a == nil && b == nil }
        return a == b || (key(a) != nil && key(a) == key(b))
    }

    /// True when two lists of column feeds feed the same columns (names compared as SQLite
    /// does, order aside) with expressions of the same meaning.
    static func sameFeeds(_ a: [ColumnFeed], _ b: [ColumnFeed]) -> Bool {
        guard a.count == b.count else { return false }
        let sortedA = a.sorted { $0.column.lowercased() < $1.column.lowercased() }
        let sortedB = b.sorted { $0.column.lowercased() < $1.column.lowercased() }
        return zip(sortedA, sortedB).allSatisfy { x, y in
            x.column.lowercased() == y.column.lowercased() && sameFilter(x.expression, y.expression)
        }
    }

    private static func nonBlank(_ text: String) -> String? {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmed.isEmpty ? nil : trimmed
    }
}
