/// One statement of a script: its exact place in the source and its tokens.
package struct StatementSlice: Sendable, Hashable {
    /// The UTF-8 byte range from the statement's first token to its last token (the `;` excluded).
    package var range: Range<Int>
    /// The byte range of the terminating `;`, if there is one.
    package var terminator: Range<Int>?
    /// The 1-based line of the first token.
    package var line: Int
    /// The 1-based column of the first token.
    package var column: Int
    /// The statement's tokens (no `;`), followed by an ``TokenKind/endOfInput`` token at the end of its range.
    package var tokens: [Token]
}

/// Splits a script into statements the way `sqlite3_complete()` does: at `;` outside strings, comments and
/// `CREATE [TEMP] TRIGGER ... BEGIN ... END` bodies. Empty statements (`;;`) are dropped.
package enum ScriptSplitter {
    /// Splits `script` into statements.
    package static func split(_ script: String) throws(SQLSyntaxError) -> [StatementSlice] {
        try split(tokens: Tokenizer.tokenize(script))
    }

    /// Splits UTF-8 bytes (validated first) into statements.
    package static func split(utf8 bytes: [UInt8]) throws(SQLSyntaxError) -> [StatementSlice] {
        try split(tokens: Tokenizer.tokenize(utf8: bytes))
    }

    /// The states of `sqlite3_complete()`'s automaton that matter for splitting.
    private enum State { case start, normal, explain, create, trigger, semicolonInTrigger, endInTrigger }

    /// Splits an already tokenized script.
    package static func split(tokens: [Token]) -> [StatementSlice] {
        var result: [StatementSlice] = []
        var state = State.start
        var current: [Token] = []
        for token in tokens {
            if token.kind == .endOfInput {
                if !current.isEmpty { result.append(slice(current, terminator: nil, end: token)) }
                break
            }
            if token.kind == .semicolon {
                switch state {
                case .trigger, .semicolonInTrigger:
                    state = .semicolonInTrigger
                    current.append(token)
                    continue
                case .endInTrigger:
                    // `; END ;` closes the trigger: the statement is everything up to END.
                    break
                default:
                    break
                }
                if !current.isEmpty { result.append(slice(current, terminator: token.range, end: token)) }
                current.removeAll(keepingCapacity: true)
                state = .start
                continue
            }
            current.append(token)
            let word = token.kind == .identifier ? token.keyword : nil
            switch state {
            case .start:
                if word == .explain { state = .explain } else if word == .create { state = .create } else { state = .normal }
            case .normal:
                break
            case .explain:
                if word == .create { state = .create } else if word == .explain || word == .temp || word == .temporary || word == .trigger || word == .end { state = .normal }
            case .create:
                if word == .trigger { state = .trigger } else if word == .temp || word == .temporary { state = .create } else { state = .normal }
            case .trigger:
                break
            case .semicolonInTrigger:
                state = word == .end ? .endInTrigger : .trigger
            case .endInTrigger:
                state = .trigger
            }
        }
        return result
    }

    private static func slice(_ tokens: [Token], terminator: Range<Int>?, end: Token) -> StatementSlice {
        let first = tokens[0]
        let last = tokens[tokens.count - 1]
        var own = tokens
        own.append(Token(kind: .endOfInput, range: last.range.upperBound..<last.range.upperBound, line: end.line, column: end.column))
        return StatementSlice(range: first.range.lowerBound..<last.range.upperBound, terminator: terminator, line: first.line, column: first.column, tokens: own)
    }
}
