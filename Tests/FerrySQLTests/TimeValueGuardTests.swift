import Testing
@testable import FerrySQL

/// `TimeValueGuard` wraps the computed arguments of date and time functions, and nothing else.
@Suite struct TimeValueGuardTests {
    private func guarded(_ sql: String) throws -> String { try TimeValueGuard.guarding(sql, with: "g") }

    @Test func computedArgumentsAreWrapped() throws {
        #expect(try guarded("strftime('%s', a) % 2 = 0") == "strftime('%s', g(a)) % 2 = 0")
        #expect(try guarded("date(+'now') > x") == "date(g(+'now')) > x")
        #expect(try guarded("date('no' || 'w')") == "date(g('no' || 'w'))")
        #expect(try guarded("julianday(char(110, 111, 119))") == "julianday(g(char(110, 111, 119)))")
        #expect(try guarded("datetime(a, b, '+1 day')") == "datetime(g(a), g(b), '+1 day')")
        #expect(try guarded("timediff(a, b)") == "timediff(g(a), g(b))")
        #expect(try guarded("\"DATE\"(a)") == "\"DATE\"(g(a))")
        #expect(try guarded("UnixEpoch(t.a)") == "UnixEpoch(g(t.a))")
    }

    @Test func nestedCallsAreWrappedAtEveryLevel() throws {
        #expect(try guarded("date(date(a), b)") == "date(g(date(g(a))), g(b))")
        #expect(try guarded("time(coalesce(a, (SELECT max(b) FROM t)))") == "time(g(coalesce(a, (SELECT max(b) FROM t))))")
    }

    @Test func literalsFormatsAndOtherFunctionsAreLeftAlone() throws {
        for sql in ["date('2024-01-01')", "unixepoch(1700000000)", "date(-5)", "a < 10", "abs(a) = 1",
                    "strftime(a, '2024-01-01')", "datetime()", "'date(a)' = b", "updated_time > 5", "timestamp(a)"] {
            #expect(try guarded(sql) == sql, "\(sql)")
        }
    }

    @Test func textStaysByteForByteOutsideTheInsertedCalls() throws {
        #expect(try guarded("é = 'ü' AND date( a /* c */ ) = 'x'") == "é = 'ü' AND date( g(a) /* c */ ) = 'x'")
    }

    @Test func unbalancedInputDoesNotCrash() throws {
        #expect(try guarded("date(a, (b") == "date(a, (b")
        #expect(throws: SQLSyntaxError.self) { try guarded("date('unterminated)") }
    }
}
