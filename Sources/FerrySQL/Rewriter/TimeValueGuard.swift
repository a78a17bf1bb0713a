/// Wraps every computed argument of SQLite's date and time functions in an expression (a filter, a
/// column feed) in a guard function, so that a value that reads the clock or the time zone
/// (`'now'`, `'localtime'`, `'utc'`) is refused when it is evaluated, whichever way it got there: a
/// literal, a computed text (`+'now'`, `'no' || 'w'`, `char(110, 111, 119)`) or a column holding it.
///
/// SQLite refuses those values itself at run time, but only in index expressions, CHECK
/// constraints and generated columns; a filter is evaluated in plain queries. The guard (defined by
/// the connection layer: `ferry_time_value(v)` fails on such a value and returns any other
/// unchanged) applies the same rule there. Literal arguments are left as they are: the
/// registration's checks read them, and a literal never changes.
///
/// Text in, text out: the expression is not re-printed, so everything but the inserted calls stays
/// byte for byte as written. `strftime`'s first argument (its format) is not a time value.
package enum TimeValueGuard {
    /// SQLite's date and time functions, whose arguments may read the clock or the time zone.
    package static let dateFunctions: Set<String> = ["date", "time", "datetime", "julianday", "unixepoch", "strftime", "timediff"]

    /// `expression` with each computed argument `a` of a date or time function written
    /// `function(a)`. An expression without such a call comes back unchanged.
    /// - Throws: `SQLSyntaxError` when `expression` does not tokenize.
    package static func guarding(_ expression: String, with function: String) throws(SQLSyntaxError) -> String {
        let lowered = expression.lowercased()
        guard lowered.contains("date") || lowered.contains("time") || lowered.contains("julianday") || lowered.contains("epoch") else {
            return expression
        }
        var bytes = Array(expression.utf8)
        let tokens = try Tokenizer.tokenize(utf8: bytes).filter { $0.kind != .endOfInput }
        // Insertions as (byte offset, text); applied from the last, so offsets stay valid.
        var insertions: [(offset: Int, text: String)] = []
        for (index, token) in tokens.enumerated() where index + 1 < tokens.count && tokens[index + 1].kind == .leftParen {
            guard let name = functionName(token, in: bytes), dateFunctions.contains(name) else { continue }
            for (position, argument) in arguments(after: index + 1, in: tokens).enumerated() {
                if name == "strftime" && position == 0 { continue }
                guard !isLiteral(argument) else { continue }
                insertions.append((argument.first!.range.lowerBound, function + "("))
                insertions.append((argument.last!.range.upperBound, ")"))
            }
        }
        for insertion in insertions.sorted(by: { $0.offset > $1.offset }) {
            bytes.insert(contentsOf: Array(insertion.text.utf8), at: insertion.offset)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The lower-cased name a token spells when it names a function: a bare word, or a quoted one.
    private static func functionName(_ token: Token, in bytes: [UInt8]) -> String? {
        let text = String(decoding: bytes[token.range], as: UTF8.self)
        switch token.kind {
        case .identifier: return text.lowercased()
        case .quotedIdentifier where text.count >= 2: return String(text.dropFirst().dropLast()).lowercased()
        default: return nil
        }
    }

    /// The arguments of the call whose `(` is `tokens[open]`, each as its tokens (none for `f()`).
    private static func arguments(after open: Int, in tokens: [Token]) -> [ArraySlice<Token>] {
        var arguments: [ArraySlice<Token>] = []
        var depth = 0
        var start = open + 1
        var index = open + 1
        while index < tokens.count {
            switch tokens[index].kind {
            case .leftParen:
                depth += 1
            case .rightParen where depth > 0:
                depth -= 1
            case .rightParen:
                if index > start { arguments.append(tokens[start..<index]) }
                return arguments
            case .comma where depth == 0:
                arguments.append(tokens[start..<index])
                start = index + 1
            default:
                break
            }
            index += 1
        }
        return []  // unbalanced: nothing to guard, SQLite refuses the expression when it compiles
    }

    /// True for an argument that is one literal (a string or a number, signed or not).
    private static func isLiteral(_ argument: ArraySlice<Token>) -> Bool {
        guard let last = argument.last, [.string, .integer, .float].contains(last.kind) else { return false }
        if argument.count == 1 { return true }
        return argument.count == 2 && (argument.first!.kind == .minus || argument.first!.kind == .plus) && last.kind != .string
    }
}
