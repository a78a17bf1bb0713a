import Testing
@testable import FerrySQL

private func kinds(_ sql: String) throws -> [TokenKind] {
    try Tokenizer.tokenize(sql).dropLast().map(\.kind)
}

private func texts(_ sql: String) throws -> [String] {
    let source = SourceText(sql)
    return try Tokenizer.tokenize(source).dropLast().map { source.text(of: $0) }
}

@Suite struct TokenizerTests {
    @Test func operatorsAreLongestMatch() throws {
        #expect(try texts("a||b->c->>d<>e==f!=g<<h>>i<=j>=k~l&m|n%o") == [
            "a", "||", "b", "->", "c", "->>", "d", "<>", "e", "==", "f", "!=", "g", "<<", "h", ">>", "i", "<=", "j",
            ">=", "k", "~", "l", "&", "m", "|", "n", "%", "o",
        ])
        #expect(try kinds("- -> ->> = == < > |") == [.minus, .arrow, .doubleArrow, .equal, .doubleEqual, .less, .greater, .pipe])
    }

    @Test func numbers() throws {
        #expect(try kinds("1 1. .5 1e10 1.5E-3 0x1F 0XaB 12") == [.integer, .float, .float, .float, .float, .integer, .integer, .integer])
        #expect(throws: SQLSyntaxError.self) { try Tokenizer.tokenize("1e+ 3") }
        #expect(throws: SQLSyntaxError.self) { try Tokenizer.tokenize("0x") }
        #expect(throws: SQLSyntaxError.self) { try Tokenizer.tokenize("123abc") }
        #expect(try texts("0x1G") == ["0x1", "G"])
    }

    /// Found by CorpusExecutionTests: `SELECT 0xFF_FF` printed as `SELECT 0xFF AS _FF`, which SQLite 3.46 (where `_`
    /// is a digit separator and the original is 65535) reads differently. The run stays one token, printed as written.
    @Test func hexLiteralRunningIntoUnderscoreStaysAsWritten() throws {
        #expect(try texts("0xFF_FF 0xFF__EF 0XFFEF_ 0xF_Fg") == ["0xFF_FF", "0xFF__EF", "0XFFEF_", "0xF_Fg"])
        #expect(try kinds("0xFF_FF") == [.integer])
        for sql in ["SELECT 0xFF_FF", "SELECT 0xFF__EF", "SELECT 0XFFEF_"] {
            #expect(Printer().print(try Parser.parseStatement(sql)) == sql)
        }
    }

    @Test func stringsBlobsAndQuotedIdentifiers() throws {
        #expect(try texts("'it''s' x'0aFF' X'' \"a\"\"b\" [x y] `c``d`") == ["'it''s'", "x'0aFF'", "X''", "\"a\"\"b\"", "[x y]", "`c``d`"])
        #expect(try kinds("'a' x'00' \"q\" [b] `c`") == [.string, .blob, .quotedIdentifier, .quotedIdentifier, .quotedIdentifier])
        #expect(throws: SQLSyntaxError.self) { try Tokenizer.tokenize("'open") }
        #expect(throws: SQLSyntaxError.self) { try Tokenizer.tokenize("x'0'") }
        #expect(throws: SQLSyntaxError.self) { try Tokenizer.tokenize("x'zz'") }
        #expect(throws: SQLSyntaxError.self) { try Tokenizer.tokenize("[open") }
    }

    @Test func parameters() throws {
        #expect(try texts("? ?12 :a @b $c $a::b::c $x(y) #d") == ["?", "?12", ":a", "@b", "$c", "$a::b::c", "$x(y)", "#d"])
        #expect(try kinds("? :a") == [.parameter, .parameter])
        #expect(throws: SQLSyntaxError.self) { try Tokenizer.tokenize("$x(y z)") }
        #expect(throws: SQLSyntaxError.self) { try Tokenizer.tokenize(": a") }
    }

    @Test func commentsAreSkipped() throws {
        #expect(try texts("a -- c\n b /* x\n y */ c /* open") == ["a", "b", "c"])
        #expect(try texts("a /") == ["a", "/"])
        #expect(try texts("a /*") == ["a", "/", "*"])
    }

    @Test func keywordsAndIdentifiers() throws {
        let tokens = try Tokenizer.tokenize("select SeLeCt \"select\" résumé _x $y")
        #expect(tokens[0].keyword == .select)
        #expect(tokens[1].keyword == .select)
        #expect(tokens[2].keyword == nil && tokens[2].kind == .quotedIdentifier)
        #expect(tokens[3].kind == .identifier && tokens[3].keyword == nil)
        #expect(tokens[4].kind == .identifier)
        #expect(tokens[5].kind == .parameter)
        #expect(Keyword.allCases.count == 147)
        for keyword in Keyword.allCases where keyword != .window && keyword != .over && keyword != .filter {
            #expect(try Tokenizer.tokenize(keyword.text.lowercased())[0].keyword == keyword)
        }
        #expect(try Tokenizer.tokenize("selectx")[0].keyword == nil)
    }

    @Test func windowKeywordsDependOnContext() throws {
        let over = try Tokenizer.tokenize("count(*) over (x) , over")
        #expect(over[4].keyword == .over)
        #expect(over[9].keyword == nil)
        let window = try Tokenizer.tokenize("window w as window")
        #expect(window[0].keyword == .window)
        #expect(window[3].keyword == nil)
        let filter = try Tokenizer.tokenize("f(x) filter (where 1) filter")
        #expect(filter[4].keyword == .filter)
        #expect(filter[10].keyword == nil)
    }

    @Test func positionsAreExact() throws {
        let tokens = try Tokenizer.tokenize("SELECT\n  é, 'a\nb' ,\n x")
        #expect(tokens[1].range == 9..<11)
        #expect(tokens[1].line == 2 && tokens[1].column == 3)
        #expect(tokens[2].line == 2 && tokens[2].column == 4)
        #expect(tokens[3].line == 2 && tokens[3].column == 6)
        #expect(tokens[4].line == 3 && tokens[4].column == 4)
        #expect(tokens[5].line == 4 && tokens[5].column == 2)
        #expect(tokens.last?.kind == .endOfInput)
    }

    @Test func invalidUTF8IsATypedError() {
        #expect(throws: SQLSyntaxError.self) { try Tokenizer.tokenize(utf8: [0x53, 0xFF, 0x20]) }
        #expect(throws: SQLSyntaxError.self) { try Tokenizer.tokenize(utf8: [0x61, 0xE2, 0x82]) }
        #expect(throws: SQLSyntaxError.self) { try Tokenizer.tokenize(utf8: [0xED, 0xA0, 0x80]) }
        #expect(throws: SQLSyntaxError.self) { try Tokenizer.tokenize(utf8: [0xC0, 0xAF]) }
        do {
            _ = try Tokenizer.tokenize(utf8: [0x61, 0x0A, 0x62, 0xFF])
            Issue.record("expected an error")
        } catch {
            #expect(error.kind == .invalidUTF8)
            #expect(error.line == 2 && error.column == 2)
        }
        #expect((try? Tokenizer.tokenize(utf8: Array("été 𝄞".utf8)))?.count == 3)
    }

    @Test func unrecognizedTokensReportPosition() {
        do {
            _ = try Tokenizer.tokenize("SELECT 1\n  FROM t WHERE a ! b")
            Issue.record("expected an error")
        } catch {
            #expect(error.kind == .unrecognizedToken)
            #expect(error.token == "!")
            #expect(error.line == 2 && error.column == 18)
            #expect(error.excerpt.contains("WHERE a ! b"))
        }
        #expect(throws: SQLSyntaxError.self) { try Tokenizer.tokenize("a\u{0}b") }
    }
}
