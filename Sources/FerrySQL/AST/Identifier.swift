/// How an identifier was (or should be) quoted.
package enum IdentifierQuoting: UInt8, Sendable, Hashable {
    /// Bare: `name`.
    case none
    /// `"name"`.
    case doubleQuotes
    /// `[name]`.
    case brackets
    /// `` `name` ``.
    case backticks
    /// `'name'`: a string literal where SQLite accepts a name.
    case singleQuotes
}

/// A name (of a table, column, alias, ...), unquoted, with how it was quoted.
package struct Identifier: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The name with quotes removed and doubled quotes undone.
    package var name: String
    /// How the name was written.
    package var quoting: IdentifierQuoting

    /// Creates an identifier.
    package init(_ name: String, quoting: IdentifierQuoting = .none) {
        self.name = name
        self.quoting = quoting
    }

    /// Creates a bare identifier from a literal.
    package init(stringLiteral value: String) {
        self.init(value)
    }

    /// The name.
    package var description: String { name }

    /// Whether this names `other` the way SQLite compares names (ASCII case-insensitively).
    package func matches(_ other: Identifier) -> Bool { SQLName.equal(name, other.name) }

    /// Whether this names `other` the way SQLite compares names (ASCII case-insensitively).
    package func matches(_ other: String) -> Bool { SQLName.equal(name, other) }
}

/// Helpers to compare names as SQLite does.
package enum SQLName {
    /// A pragma's argument as the name it stands for: `'t'`, `"t"`, `` `t` `` and `[t]` name `t`
    /// (a doubled quote inside stands for one).
    package static func unquoted(_ value: String) -> String {
        guard let first = value.first, let last = value.last, value.count >= 2 else { return value }
        let closing: Character
        switch first {
        case "'", "\"", "`": closing = first
        case "[": closing = "]"
        default: return value
        }
        guard last == closing else { return value }
        let inner = value.dropFirst().dropLast()
        if first == "[" { return String(inner) }
        var result = ""
        var previousWasQuote = false
        for character in inner {
            if character == first && previousWasQuote {
                previousWasQuote = false  // the second of a doubled quote
                continue
            }
            previousWasQuote = character == first
            result.append(character)
        }
        return result
    }

    /// ASCII case-insensitive equality (SQLite folds only ASCII letters).
    package static func equal(_ a: String, _ b: String) -> Bool {
        var ia = a.utf8.makeIterator()
        var ib = b.utf8.makeIterator()
        while true {
            let ca = ia.next()
            let cb = ib.next()
            guard let x = ca, let y = cb else { return ca == nil && cb == nil }
            if x == y { continue }
            if fold(x) != fold(y) { return false }
        }
    }

    /// The name with ASCII letters lower-cased: a key for dictionaries and sets of names.
    package static func key(_ name: String) -> String {
        if !name.utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5A }) { return name }
        return String(decoding: name.utf8.map(fold), as: UTF8.self)
    }

    @inline(__always) static func fold(_ c: UInt8) -> UInt8 { c >= 0x41 && c <= 0x5A ? c | 0x20 : c }
}

/// A possibly schema-qualified name: `[schema.]name`.
package struct QualifiedName: Sendable, Hashable, CustomStringConvertible {
    /// The schema (`main`, `temp`, an attached database), if written.
    package var schema: Identifier?
    /// The object's name.
    package var name: Identifier

    /// Creates a qualified name.
    package init(schema: Identifier? = nil, _ name: Identifier) {
        self.schema = schema
        self.name = name
    }

    /// `schema.name` or `name`.
    package var description: String { schema.map { "\($0.name).\(name.name)" } ?? name.name }
}

/// Where a node was written in its source. Not part of a node's value: two nodes that differ only in where they were
/// written are equal and hash alike, so parse → print → parse compares equal.
package struct SourceLocation: Sendable, Hashable {
    /// The UTF-8 byte range, or `nil` for nodes built in code.
    package var range: Range<Int>?

    /// A location.
    package init(_ range: Range<Int>?) { self.range = range }

    /// No location (a node built in code).
    package static let none = SourceLocation(nil)

    /// Always true: locations do not take part in equality.
    package static func == (lhs: SourceLocation, rhs: SourceLocation) -> Bool { true }

    /// Adds nothing: locations do not take part in hashing.
    package func hash(into hasher: inout Hasher) {}
}
