import FerrySQLite
// Hooks for Ferry's micro-benchmarks (`Benchmarks/Benchmarks/FerryMicro`), which time the rewrite in
// isolation (and a step of a fixed size, with `FerryDatabase.Options.fixedBatchRows`). They are SPI, not API:
// import with `@_spi(Benchmarks) import Ferry`; they may change or go away without notice.

extension FerryConnection {
    /// The statement this handle would run for `sql` (reads of migrating tables replaced by their union),
    /// without running it or any move a write needs.
    ///
    /// - Parameter cached: true to go through the rewrite cache that the database's connections share (a
    ///   repeated statement is then a lookup by SQL text); false to rewrite from scratch (tokenize, parse,
    ///   rewrite) without reading or filling the cache.
    /// - Throws: what running the statement would throw for a statement Ferry refuses during migration.
    @_spi(Benchmarks) public func rewrittenSQL(_ sql: String, cached: Bool = true) throws(FerryError) -> String {
        if cached || redirector.isEmpty { return try redirector.plan(sql).statement.sql }
        return try redirector.planUncached(sql).statement.sql
    }

    /// The statements this handle would run for `sql`, in order: the moves a write needs ahead of
    /// it (each skipped at run time when the first lists no pending row), then the statement itself.
    @_spi(Benchmarks) public func redirectedStatements(_ sql: String) throws(FerryError) -> (moves: [String], statement: String) {
        let (preparation, statement) = try redirector.plan(sql).allSQL
        return (preparation, statement)
    }
}
