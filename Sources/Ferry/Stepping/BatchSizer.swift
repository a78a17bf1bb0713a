/// Rows per batch for each table and phase of its migration, adapted after every batch so that a
/// batch takes about 70% of the step's budget (or fixed, in tests).
struct BatchSizer: Sendable {
    /// What a batch does.
    enum Phase: Hashable, Sendable {
        /// Moves source rows into the target.
        case move
        /// Deletes moved rows from the source (cleanup).
        case clean
        /// Counts the source rows cleanup checks before it deletes any (reads the rowid b-tree alone:
        /// its chunks are large).
        case count
    }

    private struct Key: Hashable {
        let table: String
        let phase: Phase
    }

    private var rows: [Key: Int] = [:]

    /// The adapted rows per batch of `table` (any case) in `phase`; nil before its first batch.
    subscript(_ phase: Phase, table table: String) -> Int? {
        get { rows[Key(table: table.lowercased(), phase: phase)] }
        set { rows[Key(table: table.lowercased(), phase: phase)] = newValue }
    }

    /// Adapts the rows per batch of `table` in `phase` after a batch of `limit` rows asked, `done`
    /// done, in `elapsed`: about 70% of `budget` a batch, at most twice the last size (and half of
    /// it after a batch over budget), between 16 and 100,000 rows.
    mutating func adapt(_ phase: Phase, table: String, limit: Int, done: Int, elapsed: Duration, budget: Duration) {
        guard done > 0, elapsed > .zero else { return }
        let ideal = Int(min(1e9, 0.7 * Double(done) * (budget / elapsed)))
        let next = min(max(ideal, 16), limit * 2, 100_000)
        self[phase, table: table] = elapsed > budget ? max(16, min(next, limit / 2)) : next
    }
}
