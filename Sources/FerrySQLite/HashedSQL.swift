/// SQL text with its hash computed once: the key of a connection's statement cache.
///
/// Ferry runs the same long statements again and again: a read of a migrating table is a union of
/// the target and its source (800 characters for a six-column table), and a write to a pending
/// row runs six statements that move it first. Hashing 800 characters for every cache lookup cost
/// as much as stepping a cached primary-key read. A `HashedSQL` kept with the
/// rewrite hashes once; comparing two copies of it compares one string buffer with itself.
public struct HashedSQL: Hashable, Sendable, CustomStringConvertible {
    /// The SQL text.
    package let sql: String
    private let hash: Int

    /// Hashes `sql` (once, here).
    public init(_ sql: String) {
        self.sql = sql
        hash = sql.hashValue
    }

    public static func == (lhs: HashedSQL, rhs: HashedSQL) -> Bool { lhs.hash == rhs.hash && lhs.sql == rhs.sql }

    public func hash(into hasher: inout Hasher) { hasher.combine(hash) }

    /// The SQL text.
    public var description: String { sql }
}
