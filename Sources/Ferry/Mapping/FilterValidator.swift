import FerrySQL
import FerrySQLite

/// Validates a migration filter: one SQL expression over the source row, nothing else.
///
/// The filter is embedded in Ferry's own statements, so it must not be able to end its expression
/// early (`1); DROP TABLE x; --`), reach other tables (subqueries), or depend on anything but the
/// row (parameters). SQLite then confirms that it compiles against the source table.
enum FilterValidator {
    /// Checks the filter's text without a database, with the SQL front end: it must lex as SQLite
    /// lexes, parse as exactly one expression, and contain no comment, parameter or subquery.
    /// - Parameter role: what the expression is, for messages ("a filter", "the feed of column x").
    static func validate(_ filter: String, role: String = "a filter") throws(FerryError) {
        func fail(_ reason: String) -> FerryError {
            .invalidFilter(filter: filter, reason: reason.replacingOccurrences(of: "a filter", with: role))
        }
        let tokens: [Token]
        do { tokens = try Tokenizer.tokenize(filter) } catch { throw fail(error.message) }
        // Comments are the only text the tokenizer skips besides white space; one could swallow
        // the rest of the statement Ferry embeds the filter in.
        var covered = 0
        let bytes = Array(filter.utf8)
        for token in tokens where token.kind != .endOfInput {
            if bytes[covered..<token.range.lowerBound].contains(where: { !(0x09...0x0D).contains($0) && $0 != 0x20 }) {
                throw fail("comments are not allowed in a filter")
            }
            covered = token.range.upperBound
        }
        if bytes[covered...].contains(where: { !(0x09...0x0D).contains($0) && $0 != 0x20 }) {
            throw fail("comments are not allowed in a filter")
        }
        for token in tokens {
            switch token.kind {
            case .semicolon: throw fail("a filter is one expression; `;` is not allowed")
            case .parameter: throw fail("parameters are not allowed in a filter")
            default: break
            }
            if token.keyword == .select || token.keyword == .values {
                throw fail("subqueries are not allowed in a filter: it must depend on the source row only")
            }
        }
        do { _ = try Parser.parseExpression(filter) } catch {
            throw fail(error.message)
        }
    }

    /// Checks that the filter compiles against the source table.
    /// Also checks that it is deterministic (`DeterminismCheck`).
    static func check(_ filter: String, against source: TableShape, on db: Connection, role: String? = nil) throws(FerryError) {
        let prefix = role.map { "\($0): " } ?? ""
        try DeterminismCheck.check(filter, role: role ?? "a filter", on: db)
        do {
            _ = try db.prepare("SELECT 1 FROM \(q(source.schema)).\(q(source.name)) WHERE (\(filter))")
        } catch let error {
            if case .sqlite(_, let message, _) = error {
                throw .invalidFilter(filter: filter, reason: prefix + message)
            }
            throw .invalidFilter(filter: filter, reason: prefix + "\(error)")
        }
    }

}
