import FerrySQLite

/// The rowids the source's rows would have in the finished table, read when the redirect
/// triggers are installed (`MigratingTableSQL.triggerSQL`).
///
/// A migrating source only loses rows (Ferry moves and deletes them; the app may not write it), so
/// every row still pending later has a rowid within the range read now. The triggers test an app
/// row's rowid against these constants before they look anything up in the source: most app
/// inserts take an automatic rowid (-1 in a BEFORE trigger) or one above every source row, and then
/// read the target alone.
enum PendingRowidRange: Sendable, Equatable {
    /// Not known (a rowid fed by an expression, or the source could not be read): every look-up runs.
    case unknown
    /// The source had no row: no row can be pending.
    case empty
    /// Every source row's rowid lies in the range.
    case within(ClosedRange<Int64>)

    /// `lookUp` guarded by the range: as is when the range is unknown, nil when no row can be
    /// pending, else `(condition(range) AND lookUp)`, which SQLite evaluates left to right.
    func guarding(_ lookUp: String, when condition: (ClosedRange<Int64>) -> String) -> String? {
        switch self {
        case .unknown: return lookUp
        case .empty: return nil
        case .within(let range): return "(\(condition(range)) AND \(lookUp))"
        }
    }

    /// `condition(range)` alone, the test of constants a look-up is guarded by; nil when the range
    /// is not known or empty.
    func condition(_ condition: (ClosedRange<Int64>) -> String) -> String? {
        guard case .within(let range) = self else { return nil }
        return condition(range)
    }
}

extension MigratingTableSQL {
    /// Reads the range of rowids the source's rows would have in the finished table (two b-tree
    /// look-ups): the source's rowids, or, from a source without rowid, its single INTEGER primary
    /// key feeding the target's INTEGER PRIMARY KEY (`ResolvedMapping.integerKeyFeedingTargetRowid`).
    /// `.unknown` for any other rowid, for a key holding other than integers at either end, and
    /// when the source cannot be read on `db` (not attached).
    func pendingRowidRange(on db: Connection) -> PendingRowidRange {
        guard pendingRowidValue != nil else { return .unknown }
        let column: String
        if mapping.sourceHasRowid {
            column = mapping.sourceShape.rowidName
        } else if let key = mapping.integerKeyFeedingTargetRowid {
            column = q(key)
        } else {
            return .unknown
        }
        // Two subqueries: SQLite answers min() and max() from the b-tree's ends only when each
        // is alone in its query.
        let source = mapping.qualifiedSource
        guard let row = try? db.fetchOne("SELECT (SELECT min(\(column)) FROM \(source)), (SELECT max(\(column)) FROM \(source))") else {
            return .unknown
        }
        switch (row[0], row[1]) {
        case (.null, .null): return .empty
        case (.integer(let lowest), .integer(let highest)): return .within(lowest...highest)
        default: return .unknown
        }
    }
}
