/// Validates a migration filter: one SQL expression over the source row, nothing else.
///
/// The filter is embedded in Ferry's own statements, so it must not be able to end its expression
/// early (`1); DROP TABLE x; --`), reach other tables (subqueries), or depend on anything but the
/// row (parameters). SQLite then confirms that it compiles against the source table.
enum FilterValidator {
    /// Checks the filter's text without a database.
    static func validate(_ filter: String) throws(FerryError) {
        let bytes = Array(filter.utf8)
        var depth = 0
        var i = 0
        func fail(_ reason: String) -> FerryError { .invalidFilter(filter: filter, reason: reason) }
        while i < bytes.count {
            let c = bytes[i]
            switch c {
            case 0x27, 0x22, 0x60:  // ' " `: skip quoted text, doubled quotes escape
                i += 1
                while i < bytes.count {
                    if bytes[i] == c {
                        if i + 1 < bytes.count && bytes[i + 1] == c { i += 2; continue }
                        break
                    }
                    i += 1
                }
                guard i < bytes.count else { throw fail("unterminated quoted text") }
            case 0x5B:  // [identifier]
                while i < bytes.count && bytes[i] != 0x5D { i += 1 }
                guard i < bytes.count else { throw fail("unterminated [identifier]") }
            case 0x28: depth += 1
            case 0x29:
                depth -= 1
                guard depth >= 0 else { throw fail("a closing parenthesis ends the filter's expression early") }
            case 0x3B: throw fail("a filter is one expression; `;` is not allowed")
            case 0x2D where i + 1 < bytes.count && bytes[i + 1] == 0x2D: throw fail("comments are not allowed in a filter")
            case 0x2F where i + 1 < bytes.count && bytes[i + 1] == 0x2A: throw fail("comments are not allowed in a filter")
            case 0x3F, 0x3A, 0x40, 0x24: throw fail("parameters are not allowed in a filter")
            default: break
            }
            i += 1
        }
        guard depth == 0 else { throw fail("unbalanced parentheses") }
        let upper = filter.uppercased()
        for word in ["SELECT", "VALUES"] where containsWord(word, in: upper) {
            throw fail("subqueries are not allowed in a filter: it must depend on the source row only")
        }
    }

    /// Checks that the filter compiles against the source table.
    static func check(_ filter: String, against source: TableShape, on db: Connection) throws(FerryError) {
        do {
            _ = try db.prepare("SELECT 1 FROM \(q(source.schema)).\(q(source.name)) WHERE (\(filter))")
        } catch let error {
            if case .sqlite(_, let message, _) = error {
                throw .invalidFilter(filter: filter, reason: message)
            }
            throw .invalidFilter(filter: filter, reason: "\(error)")
        }
    }

    private static func containsWord(_ word: String, in text: String) -> Bool {
        var searchRange = text.startIndex..<text.endIndex
        while let range = text.range(of: word, range: searchRange) {
            let before = range.lowerBound == text.startIndex ? nil : text[text.index(before: range.lowerBound)]
            let after = range.upperBound == text.endIndex ? nil : text[range.upperBound]
            let isBoundary: (Character?) -> Bool = { c in c.map { !($0.isLetter || $0.isNumber || $0 == "_") } ?? true }
            if isBoundary(before) && isBoundary(after) { return true }
            searchRange = range.upperBound..<text.endIndex
        }
        return false
    }
}
