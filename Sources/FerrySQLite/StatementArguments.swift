/// The values bound to a statement's parameters: by position (`?`, `?NNN`) or by name (`:a`, `@a`, `$a`).
///
/// Write them as array or dictionary literals of Swift values, constants or variables, and
/// `Value`s: `[id, name, nil]`, `["id": id, "name": name]`, `[.integer(1), .text("x")]`. Any
/// `SQLValueConvertible` goes (an optional binds NULL when nil).
public enum StatementArguments: Sendable, Hashable, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral {
    /// Values for parameter indexes 1, 2, 3...; `?NNN` binds the NNN-th value.
    case positional([Value])
    /// Values by parameter name, with or without its prefix character (`"a"` matches `:a`, `@a`, `$a`).
    case named([String: Value])

    /// No arguments.
    public static let none = StatementArguments.positional([])

    /// Positional arguments from a literal: `[id, name, nil]`.
    public init(arrayLiteral elements: (any SQLValueConvertible)?...) {
        self = .positional(elements.map { $0?.sqlValue ?? .null })
    }

    /// Named arguments from a literal: `["id": id, "name": name]`.
    public init(dictionaryLiteral elements: (String, (any SQLValueConvertible)?)...) {
        var dict: [String: FerrySQLite.Value] = [:]
        for (k, v) in elements { dict[k] = v?.sqlValue ?? .null }
        self = .named(dict)
    }

    /// Positional arguments from Swift values.
    public init(_ values: [any SQLValueConvertible]) { self = .positional(values.map(\.sqlValue)) }

    /// Named arguments from Swift values.
    public init(_ values: [String: any SQLValueConvertible]) { self = .named(values.mapValues(\.sqlValue)) }

    /// The value for the parameter numbered `index` whose name is `name`, as SQLite names it
    /// (`:a`, `@a`, `$a`, `?3`; nil for an anonymous `?`): by position, or by name with or without
    /// its prefix character. Nil when there is none.
    public func value(at index: Int, named name: String?) -> Value? {
        switch self {
        case .positional(let values): return index >= 1 && index <= values.count ? values[index - 1] : nil
        case .named(let values): return name.flatMap { values[$0] ?? values[String($0.dropFirst())] }
        }
    }

    /// True when there is nothing to bind.
    public var isEmpty: Bool {
        switch self {
        case .positional(let values): return values.isEmpty
        case .named(let values): return values.isEmpty
        }
    }
}
