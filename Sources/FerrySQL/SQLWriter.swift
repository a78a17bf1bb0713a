/// Builds SQL text for ``Printer``.
struct SQLWriter {
    let options: PrinterOptions
    var output = ""

    init(options: PrinterOptions, capacity: Int = 0) {
        self.options = options
        if capacity > 0 { output.reserveCapacity(capacity) }
    }

    @inline(__always) mutating func write(_ text: String) { output += text }

    /// Writes a keyword or operator preceded by a space.
    @inline(__always) mutating func word(_ text: String) {
        output += " "
        output += text
    }

    mutating func list<T>(_ items: [T], _ body: (inout SQLWriter, T) -> Void) {
        for (i, item) in items.enumerated() {
            if i > 0 { output += ", " }
            body(&self, item)
        }
    }

    // MARK: Names

    /// Whether `name` reads back as the same name when written bare (`allowFallbackKeywords` lets words such as
    /// `KEY` stay bare where SQLite reads them as names).
    static func isSafeBare(_ name: String, allowFallbackKeywords: Bool, inExpression: Bool = false) -> Bool {
        let bytes = Array(name.utf8)
        guard let first = bytes.first else { return false }
        guard (first >= 0x61 && first <= 0x7A) || (first >= 0x41 && first <= 0x5A) || first == 0x5F || first >= 0x80 else { return false }
        for b in bytes.dropFirst() where !CharClass.isIdChar(b) { return false }
        let keyword = bytes.withUnsafeBufferPointer { Keyword.lookup($0, start: 0, count: $0.count) }
        guard let keyword else { return true }
        guard allowFallbackKeywords && (keyword.fallsBackToIdentifier || keyword.isJoinKeyword || keyword == .indexed || keyword == .window || keyword == .over || keyword == .filter) else { return false }
        // In an expression these words start CAST(...), RAISE(...) or a time literal instead of naming a column.
        switch keyword {
        case .cast, .raise, .currentTime, .currentDate, .currentTimestamp: return !inExpression
        default: return true
        }
    }

    static func doubleQuoted(_ name: String) -> String {
        "\"" + (name.contains("\"") ? name.replacingAll("\"", with: "\"\"") : name) + "\""
    }

    /// Writes an identifier following the quoting style. `isColumn` marks an unqualified column reference.
    mutating func identifier(_ id: Identifier, isColumn: Bool = false, isFunction: Bool = false) {
        // A bare TRUE or FALSE column would read as a literal; followed by `(` it is a function name.
        let readsAsBoolean = isColumn && !isFunction && Self.isTrueOrFalse(id.name)
        switch options.identifierQuoting {
        case .always:
            output += Self.doubleQuoted(id.name)
            return
        case .minimal:
            if id.quoting == .doubleQuotes && isColumn {
                output += Self.doubleQuoted(id.name)
            } else if Self.isSafeBare(id.name, allowFallbackKeywords: false) && !readsAsBoolean {
                output += id.name
            } else {
                output += Self.doubleQuoted(id.name)
            }
            return
        case .asWritten:
            break
        }
        switch id.quoting {
        case .none:
            if Self.isSafeBare(id.name, allowFallbackKeywords: true, inExpression: isColumn) && !readsAsBoolean {
                output += id.name
            } else {
                output += Self.doubleQuoted(id.name)
            }
        case .doubleQuotes:
            output += Self.doubleQuoted(id.name)
        case .brackets:
            if id.name.utf8.contains(0x5D) { output += Self.doubleQuoted(id.name) } else { output += "[" + id.name + "]" }
        case .backticks:
            output += "`" + (id.name.contains("`") ? id.name.replacingAll("`", with: "``") : id.name) + "`"
        case .singleQuotes:
            if isColumn { output += Self.doubleQuoted(id.name) } else { output += Self.quotedString(id.name) }
        }
    }

    static func isTrueOrFalse(_ name: String) -> Bool { SQLName.equal(name, "true") || SQLName.equal(name, "false") }

    static func quotedString(_ value: String) -> String {
        "'" + (value.contains("'") ? value.replacingAll("'", with: "''") : value) + "'"
    }

    mutating func qualifiedName(_ name: QualifiedName) {
        if let schema = name.schema {
            identifier(schema)
            output += "."
        }
        identifier(name.name)
    }

    mutating func nameList(_ names: [Identifier]) {
        output += "("
        list(names) { $0.identifier($1) }
        output += ")"
    }
}

extension String {
    /// The string with every occurrence of `target` replaced (no Foundation needed).
    func replacingAll(_ target: Character, with replacement: String) -> String {
        var result = ""
        result.reserveCapacity(utf8.count + 4)
        for character in self {
            if character == target { result += replacement } else { result.append(character) }
        }
        return result
    }
}
