/// The values bound to a statement's parameters: by position (`?`, `?NNN`) or by name (`:a`, `@a`, `$a`).
///
/// Write them as literals: `[1, "two", nil]` or `["id": 1, "name": "x"]`.
public enum StatementArguments: Sendable, Hashable, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral {
    /// Values for parameter indexes 1, 2, 3...; `?NNN` binds the NNN-th value.
    case positional([Value])
    /// Values by parameter name, with or without its prefix character (`"a"` matches `:a`, `@a`, `$a`).
    case named([String: Value])

    /// No arguments.
    public static let none = StatementArguments.positional([])

    public init(arrayLiteral elements: Value...) { self = .positional(elements) }

    public init(dictionaryLiteral elements: (String, Value)...) {
        var dict: [String: Value] = [:]
        for (k, v) in elements { dict[k] = v }
        self = .named(dict)
    }

    /// Positional arguments from Swift values.
    public init(_ values: [any SQLValueConvertible]) { self = .positional(values.map(\.sqlValue)) }

    /// Named arguments from Swift values.
    public init(_ values: [String: any SQLValueConvertible]) { self = .named(values.mapValues(\.sqlValue)) }

    /// True when there is nothing to bind.
    public var isEmpty: Bool {
        switch self {
        case .positional(let values): return values.isEmpty
        case .named(let values): return values.isEmpty
        }
    }
}
