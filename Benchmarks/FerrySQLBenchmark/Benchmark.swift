// Times the SQL front end on a typical statement: `swift run -c release FerrySQLBenchmark`.
import FerrySQL

let sql = """
SELECT o.id, o.created_at, c.name, c.email, o.total FROM orders AS o JOIN customers c ON c.id = o.customer_id \
WHERE o.status = ? AND o.created_at >= ? ORDER BY o.created_at DESC LIMIT 50
"""

let rewriter = Rewriter(policy: RewritePolicy(tables: TableSet(["orders"]), replacementForRead: { name in
    .subquery("SELECT * FROM main.\(name) UNION ALL SELECT * FROM src.\(name)")
}))
let untouched = Rewriter(policy: RewritePolicy(tables: TableSet(["invoices"]), replacementForRead: { _ in .subquery("SELECT 1") }))

@inline(never) func blackHole<T>(_ value: T) { withExtendedLifetime(value) {} }

func median(_ label: String, iterations: Int = 20_000, _ body: () throws -> Void) rethrows {
    let clock = ContinuousClock()
    var samples: [Duration] = []
    samples.reserveCapacity(iterations)
    for _ in 0..<1_000 { try body() }
    for _ in 0..<iterations {
        let start = clock.now
        try body()
        samples.append(clock.now - start)
    }
    samples.sort()
    let microseconds = { (d: Duration) -> Double in Double(d.components.attoseconds) / 1e12 + Double(d.components.seconds) * 1e6 }
    let p50 = microseconds(samples[samples.count / 2])
    let p90 = microseconds(samples[samples.count * 9 / 10])
    print("\(label): median \(Double(Int(p50 * 100)) / 100) µs, p90 \(Double(Int(p90 * 100)) / 100) µs")
}

@main
struct Benchmark {
    static func main() throws {
        if CommandLine.arguments.dropFirst().first == "profile-rewrite" {
            // A tight loop for profilers.
            for _ in 0..<300_000 { blackHole(try rewriter.rewrite(sql)) }
            return
        }
        if CommandLine.arguments.dropFirst().first == "depth" {
            // The deepest nesting each shape reaches with the default options (depth limit or stack budget).
            let shapes: [(String, (Int) -> String)] = [
                ("parentheses", { "SELECT " + String(repeating: "(", count: $0) + "1" + String(repeating: ")", count: $0) }),
                ("NOT", { "SELECT " + String(repeating: "NOT ", count: $0) + "1" }),
                ("function calls", { "SELECT " + String(repeating: "f(", count: $0) + "1" + String(repeating: ")", count: $0) }),
                ("scalar subqueries", { String(repeating: "SELECT (", count: $0) + "1" + String(repeating: ")", count: $0) }),
                ("FROM subqueries", { "SELECT * FROM " + String(repeating: "(SELECT * FROM ", count: $0) + "t" + String(repeating: ")", count: $0) }),
            ]
            for (label, make) in shapes {
                var deepest = 0
                for n in 1...2_000 {
                    guard (try? Parser.parseStatement(make(n))) != nil else { break }
                    deepest = n
                }
                print("\(label): \(deepest) levels")
            }
            return
        }
        print("statement: \(sql.utf8.count) bytes")
        try median("tokenize") { blackHole(try Tokenizer.tokenize(sql)) }
        try median("parse") { blackHole(try Parser.parseStatement(sql)) }
        let statement = try Parser.parseStatement(sql)
        median("print") { blackHole(Printer().print(statement)) }
        median("analyse") { blackHole(StatementAnalysis(statement)) }
        try median("parse + rewrite one table reference") { blackHole(try rewriter.rewrite(sql)) }
        try median("untouched statement (token check only)") { blackHole(try untouched.rewrite(sql)) }
        print(try rewriter.rewrite(sql).statements[0])
    }
}
