/// A set of table names, compared as SQLite compares names (ASCII case-insensitively). A name may be qualified with
/// a schema (`main.t`); an unqualified entry matches the table in any schema.
package struct TableSet: Sendable, Hashable {
    /// The names as given, keyed by lower-cased table name; the value is the schema key ("" for any schema).
    private var entries: [String: [String]] = [:]
    /// The byte lengths of the table names, to skip most tokens without comparing them.
    private var lengths: Set<Int> = []

    /// Creates a set from names such as `"t"` or `"main.t"` (split at the first dot).
    package init(_ names: [String]) {
        for name in names { insert(Self.qualifiedName(name)) }
    }

    /// Creates a set of qualified names.
    package init(_ names: [QualifiedName]) {
        for name in names { insert(name) }
    }

    /// `"t"` or `"main.t"` (split at the first dot) as a qualified name.
    private static func qualifiedName(_ name: String) -> QualifiedName {
        let parts = name.split(separator: ".", maxSplits: 1).map(String.init)
        return parts.count == 2 ? QualifiedName(schema: Identifier(parts[0]), Identifier(parts[1])) : QualifiedName(Identifier(name))
    }

    private mutating func insert(_ name: QualifiedName) {
        let key = SQLName.key(name.name.name)
        entries[key, default: []].append(name.schema.map { SQLName.key($0.name) } ?? "")
        lengths.insert(name.name.name.utf8.count)
    }

    /// The set with `name` (as in `init(_:)`) listed too.
    package func adding(_ name: String) -> TableSet {
        var set = self
        set.insert(Self.qualifiedName(name))
        return set
    }

    /// Whether no names are listed.
    package var isEmpty: Bool { entries.isEmpty }

    /// The listed name (lower-cased table name) a reference matches, if any. An unqualified reference matches any
    /// listed schema; a qualified one matches entries without a schema or with the same schema.
    package func match(_ name: QualifiedName) -> String? {
        let key = SQLName.key(name.name.name)
        guard let schemas = entries[key] else { return nil }
        guard let schema = name.schema else { return key }
        let schemaKey = SQLName.key(schema.name)
        return schemas.contains { $0.isEmpty || $0 == schemaKey } ? key : nil
    }

    /// Whether any name-like token of `tokens` could name a listed table (a fast pre-check that builds no AST).
    func mayBeMentioned(in tokens: [Token], source: SourceText) -> Bool {
        for token in tokens {
            switch token.kind {
            case .identifier:
                guard lengths.contains(token.range.count) else { continue }
                if entries[SQLName.key(source.string(token.range))] != nil { return true }
            case .quotedIdentifier, .string:
                let inner = source.string(token.range.lowerBound + 1..<token.range.upperBound - 1)
                if entries[SQLName.key(inner)] != nil { return true }
                // A name with doubled quotes inside: be conservative and parse.
                if inner.utf8.contains(where: { $0 == 0x22 || $0 == 0x27 || $0 == 0x60 }) { return true }
            default:
                continue
            }
        }
        return false
    }
}
