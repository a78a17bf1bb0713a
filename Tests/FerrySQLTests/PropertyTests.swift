import PropertyBased
import Testing
@testable import FerrySQL

private let choiceStream = Gen.int(in: 0...1_000).array(of: 0...400)

@Suite struct PropertyTests {
    @Test func randomExpressionsRoundTrip() async {
        await propertyCheck(count: 300, input: choiceStream) { choices in
            var random = RandomAST(choices, budget: 40)
            let expression = random.expression()
            let printed = Printer().print(expression)
            #expect((try? Parser.parseExpression(printed)) == expression, "\(printed)")
        }
    }

    @Test func randomStatementsRoundTrip() async {
        await propertyCheck(count: 400, input: choiceStream) { choices in
            var random = RandomAST(choices, budget: 60)
            let statement = random.statement()
            let printed = Printer().print(statement)
            do {
                let again = try Parser.parseStatement(printed)
                #expect(again == statement, "\(printed)")
            } catch {
                Issue.record("\(error) for \(printed)")
            }
            // Quoting every identifier must not change the statement either.
            let quoted = Printer(options: PrinterOptions(identifierQuoting: .always)).print(statement)
            #expect((try? Parser.parseStatement(quoted)).map { Printer(options: PrinterOptions(identifierQuoting: .always)).print($0) } == quoted)
            _ = StatementAnalysis(statement)
        }
    }

    static let vocabulary = ["SELECT", "FROM", "WHERE", "(", ")", ",", "a", "t", "1", "'s'", "?", ":p", "+", "-", "*", "=", "NOT", "IN",
                             "AND", "OR", "JOIN", "ON", "AS", "CASE", "WHEN", "THEN", "END", "INSERT", "INTO", "VALUES", "UPDATE", "SET",
                             "DELETE", "WITH", "UNION", "ORDER", "BY", "LIMIT", "CREATE", "TABLE", "TRIGGER", "BEGIN", ";", ".", "x'00'",
                             "COLLATE", "LIKE", "ESCAPE", "BETWEEN", "IS", "NULL", "OVER", "FILTER", "WINDOW", "->", "||", "/*", "--", "\"q\"",
                             "[b]", "`c`", "$x", "@y", "#z", "RETURNING", "ON CONFLICT", "DO", "NOTHING", "EXISTS", "CAST", "RAISE", "é"]

    @Test func tokenSoupNeverCrashes() async {
        await propertyCheck(count: 2_000, input: Gen.int(in: 0..<Self.vocabulary.count).array(of: 0...40)) { indices in
            let sql = indices.map { Self.vocabulary[$0] }.joined(separator: " ")
            _ = try? ScriptSplitter.split(sql)
            do {
                let statement = try Parser.parseStatement(sql)
                let printed = Printer().print(statement)
                #expect((try? Parser.parseStatement(printed)) == statement, "\(sql) printed as \(printed)")
            } catch let error as SQLSyntaxError {
                #expect(!error.message.isEmpty)
            } catch {
                Issue.record("untyped error \(error)")
            }
        }
    }

    @Test func randomBytesNeverCrash() async {
        await propertyCheck(count: 2_000, input: Gen.int(in: 0...255).array(of: 0...64)) { values in
            let bytes = values.map { UInt8($0) }
            _ = try? Tokenizer.tokenize(utf8: bytes)
            _ = try? ScriptSplitter.split(utf8: bytes)
        }
    }
}
