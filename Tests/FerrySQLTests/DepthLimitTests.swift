import Foundation
import Testing
@testable import FerrySQL

/// Runs `body` on a thread with a 512 KiB stack (8 MiB under a sanitizer) and waits for it.
func onSmallStack(_ body: @escaping @Sendable () -> Void) {
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        body()
        done.signal()
    }
    // Sanitizers make every frame several times larger: give the same depth room to run.
    thread.stackSize = runningUnderSanitizer ? 8 * 1024 * 1024 : 512 * 1024
    thread.start()
    done.wait()
}

/// True in a `swift test --sanitize=thread|address` build (its runtime is linked in).
let runningUnderSanitizer: Bool = {
    let process = dlopen(nil, RTLD_NOW)
    return dlsym(process, "__tsan_init") != nil || dlsym(process, "__asan_init") != nil
}()

private func isTooDeep(_ sql: String) -> Bool {
    do {
        _ = try Parser.parseStatement(sql)
        return false
    } catch {
        return error.kind == .tooDeeplyNested
    }
}

@Suite struct DepthLimitTests {
    static let depth = 100_000

    @Test func deepParenthesesFailWithTypedError() {
        let sql = "SELECT " + String(repeating: "(", count: Self.depth) + "1" + String(repeating: ")", count: Self.depth)
        onSmallStack { #expect(isTooDeep(sql)) }
    }

    @Test func deepPrefixOperatorsFailWithTypedError() {
        let nots = "SELECT " + String(repeating: "NOT ", count: Self.depth) + "1"
        let minus = "SELECT " + String(repeating: "- ", count: Self.depth) + "1"
        onSmallStack {
            #expect(isTooDeep(nots))
            #expect(isTooDeep(minus))
        }
    }

    @Test func deepSubqueriesAndPostfixChainsFailWithTypedError() {
        let subqueries = String(repeating: "SELECT (", count: 20_000) + "1" + String(repeating: ")", count: 20_000)
        let from = "SELECT * FROM " + String(repeating: "(SELECT * FROM ", count: 20_000) + "t" + String(repeating: ")", count: 20_000)
        let collate = "SELECT a" + String(repeating: " COLLATE x", count: Self.depth)
        let likes = "SELECT a" + String(repeating: " LIKE b", count: Self.depth)
        let nestedLikes = "SELECT " + String(repeating: "(a LIKE b LIKE c LIKE d ", count: 5_000) + String(repeating: ")", count: 5_000)
        let cases = "SELECT " + String(repeating: "CASE WHEN ", count: 20_000) + "1" + String(repeating: " THEN 1 END", count: 20_000)
        let functions = "SELECT " + String(repeating: "f(", count: 20_000) + "1" + String(repeating: ")", count: 20_000)
        onSmallStack {
            #expect(isTooDeep(subqueries))
            #expect(isTooDeep(from))
            #expect(isTooDeep(collate))
            #expect(isTooDeep(likes))
            #expect(isTooDeep(nestedLikes))
            #expect(isTooDeep(cases))
            #expect(isTooDeep(functions))
        }
    }

    @Test func nestingJustUnderTheLimitParsesPrintsAndHashesOnSmallStack() {
        let n = ParserOptions.default.maximumDepth - 5
        let shapes = [
            "SELECT " + String(repeating: "(", count: n) + "1" + String(repeating: ")", count: n),
            "SELECT " + String(repeating: "NOT ", count: n) + "1",
            "SELECT -" + String(repeating: " ~", count: n) + " 1",
            // Subqueries are limited by the stack budget in debug builds (about 10 KiB each: 22 levels fit in
            // the default 256 KiB; release builds take about 1 KiB a level).
            String(repeating: "SELECT (", count: 22) + "1" + String(repeating: ")", count: 22),
            "SELECT * FROM " + String(repeating: "(SELECT * FROM ", count: 25) + "t" + String(repeating: ")", count: 25),
            // Function calls and operators inside parentheses cost more stack per level than bare parentheses; in
            // debug builds the stack budget stops them earlier than `maximumDepth`.
            "SELECT " + String(repeating: "f(", count: 40) + "1" + String(repeating: ")", count: 40),
            "SELECT " + String(repeating: "(a + ", count: 60) + "1" + String(repeating: ")", count: 60),
            "SELECT a" + String(repeating: " COLLATE x", count: n),
        ]
        onSmallStack {
            for sql in shapes {
                do {
                    let statement = try Parser.parseStatement(sql)
                    let printed = Printer().print(statement)
                    let again = try Parser.parseStatement(printed)
                    #expect(again == statement)
                    _ = again.hashValue
                    _ = StatementAnalysis(statement)
                } catch let error as SQLSyntaxError where runningUnderSanitizer && error.kind == .tooDeeplyNested {
                    // Larger frames use the stack budget up earlier: a typed error, not a crash.
                } catch {
                    Issue.record("\(error) for \(sql.prefix(60))")
                }
            }
        }
    }

    @Test func longFlatInputsAreLinear() throws {
        let terms = 100_000
        let chain = "SELECT * FROM t WHERE " + Array(repeating: "a", count: terms).joined(separator: " OR ")
        let rows = "INSERT INTO t VALUES " + Array(repeating: "(1, 'x', ?)", count: 10_000).joined(separator: ", ")
        let unions = Array(repeating: "SELECT 1", count: 10_000).joined(separator: " UNION ALL ")
        let clock = ContinuousClock()
        let elapsed = try clock.measure {
            let statement = try Parser.parseStatement(chain)
            guard case .select(let select) = statement, case .select(let core) = select.first,
                  case .binary(_, let orTerms)? = core.where else {
                Issue.record("unexpected shape")
                return
            }
            #expect(orTerms.count == terms - 1)
            _ = Printer().print(statement)
            _ = try Parser.parseStatement(rows)
            _ = try Parser.parseStatement(unions)
        }
        #expect(elapsed < .seconds(10))
    }
}
