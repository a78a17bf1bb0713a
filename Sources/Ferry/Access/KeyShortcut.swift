import FerrySQL
import FerrySQLite

/// A statement on a migrating table that pins its rowid, served as on the finished table once
/// those keys moved.
///
/// A statement whose `WHERE` pins the table's rowid (`PinnedKey`: `id = ?1`, `rowid IN (1, 2)`,
/// `id < ?1`, `id BETWEEN ?1 AND ?2`) can only meet rows with such rowids. A pending source row keeps
/// its rowid when it moves (or takes its INTEGER key, from a source without rowid), and every
/// pending row lies above the table's cursor (`ResolvedMapping.rowidFloor`). So when the largest
/// rowid the statement may meet is at or below that floor, no pending row can take part: a
/// SELECT reads the target alone (in one file, instead of the union's two), and an UPDATE or DELETE
/// skips the moves that would look for pending rows first. The answer is the union's, row for row.
///
/// The cursor is the connection's *floor* (`MigrationEngine.cursorFloors`): a value at or below the
/// cursor of every snapshot the connection can read in, taken before its transaction's snapshot
/// began. Cursors only grow, so a floor can be old, never wrong; a key above it (or a value that is
/// not an integer: SQLite would compare it by affinity) runs the statement in full.
struct KeyShortcut: Sendable {
    /// The registered name of the pinned table (lower-cased): the key of its floor.
    let table: String
    /// The keys the statement may meet.
    let key: PinnedKey
    /// What runs instead: the SELECT with the pinned table read from its target alone, or the write
    /// without its moves.
    let statement: HashedSQL

    /// True when every key the statement may meet, as `arguments` give the operands, is at or below
    /// the table's floor.
    func applies(_ arguments: StatementArguments, floors: [String: Int64]) -> Bool {
        guard let floor = floors[table], let largest = key.largestKey(valueOf: { Self.value(of: $0, arguments) }) else { return false }
        return largest <= floor
    }

    /// An operand's integer value with `arguments`; nil when it is not an integer (SQLite would
    /// compare it by affinity).
    static func value(of operand: PinnedKey.Operand, _ arguments: StatementArguments) -> Int64? {
        switch operand {
        case .integer(let value):
            return value
        case .parameter(let parameter):
            // Found as binding finds it; a `?` or `?NNN` is taken by position only.
            if case .integer(let integer)? = arguments.value(at: parameter.index, named: parameter.text.hasPrefix("?") ? nil : parameter.text) {
                return integer
            }
            return nil
        }
    }

    /// True when the table's rowids follow its source's order, so that no pending row can have a
    /// rowid at or below the floor (`ResolvedMapping.rowidFollowsSourceOrder`).
    static func applies(to table: MigratingTableSQL) -> Bool {
        table.mapping.rowidFollowsSourceOrder
    }

    /// The names (lower-cased) that read a migrating table's rowid, which a pending row takes from
    /// its source row: the rowid's spellings the table has no column of, and its INTEGER PRIMARY
    /// KEY when the source feeds it (its rowid, or the key of a source without rowid).
    static func keyColumns(of mapping: ResolvedMapping) -> Set<String> {
        let columns = Set(mapping.target.columns.map { $0.name.lowercased() })
        var names = Set(["rowid", "oid", "_rowid_"]).subtracting(columns)
        if let alias = mapping.target.rowidAliasColumn, mapping.feed(of: alias) != nil { names.insert(alias.lowercased()) }
        return names
    }
}
