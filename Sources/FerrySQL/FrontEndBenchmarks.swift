/// The SQL front end's entry points for the micro-benchmarks (`Benchmarks/`, a package of its own):
/// an unstable SPI, not an API. The rest of FerrySQL is `package`: only Ferry's own targets use it.
@_spi(Benchmarks)
public enum FrontEndBenchmarks {
    /// Tokenizes `sql`; returns how many tokens it holds.
    public static func tokenize(_ sql: String) throws -> Int { try Tokenizer.tokenize(sql).count }

    /// Parses `sql`, one statement; returns its syntax tree (opaque).
    public static func parse(_ sql: String) throws -> Any { try Parser.parseStatement(sql) }

    /// A rewriter that reads each of `tables` as the union of its `main` and `src` copies, as a
    /// migrating table reads; it returns the statements a statement becomes (opaque).
    public static func unionRewriter(tables: [String]) -> @Sendable (String) throws -> Any {
        let rewriter = Rewriter(policy: RewritePolicy(tables: TableSet(tables), replacementForRead: { name in
            .subquery("SELECT * FROM main.\(name) UNION ALL SELECT * FROM src.\(name)")
        }))
        return { sql in try rewriter.rewrite(sql) }
    }
}
