import FerrySQLite

/// Which target rowids no pending source row can have (`KeyShortcut`).
///
/// A pending row's rowid in the finished table follows the source's order when the target keeps
/// it: the source's rowid itself, or, from a source without rowid, the value of its single
/// INTEGER primary key column that feeds the target's INTEGER PRIMARY KEY. Then every pending row
/// lies at or after the cursor, and the rowids below it are settled.
extension ResolvedMapping {
    /// True when a pending row's rowid in the finished table follows the source's order (see above).
    var rowidFollowsSourceOrder: Bool {
        guard target.hasRowid else { return false }
        if sourceHasRowid { return true }
        return integerKeyFeedingTargetRowid != nil
    }

    /// The source's single primary key column of INTEGER affinity that feeds the target's INTEGER
    /// PRIMARY KEY, for a source without rowid. With INTEGER affinity a key that could be read as
    /// an integer is stored as one, so a text or blob key can never take an integer rowid.
    var integerKeyFeedingTargetRowid: String? {
        guard !sourceHasRowid, sourceShape.primaryKey.count == 1, let alias = target.rowidAliasColumn,
              let fed = feed(of: alias)?.sourceColumn, fed.lowercased() == sourceShape.primaryKey[0].column.lowercased(),
              let column = sourceShape.columns.first(where: { $0.name.lowercased() == fed.lowercased() }),
              column.declaredType.uppercased().contains("INT")
        else { return nil }
        return fed
    }

    /// The largest target rowid no pending row can have with `record`'s cursor (every smaller one
    /// is settled too); nil when there is none, or when rowids do not follow the source's order.
    /// - A source with rowid: the cursor.
    /// - A source without rowid: below the key cursor, the first source key not passed yet (every
    ///   rowid once every row passed); any integer when it is text or a blob, which sort after
    ///   every number.
    func rowidFloor(_ record: TableRecord) -> Int64? {
        guard rowidFollowsSourceOrder else { return nil }
        if sourceHasRowid { return record.cursor }
        guard let key = record.keyCursor else { return .max }
        return Self.rowidFloor(belowKey: Connection.rowKeyValues(key)?.first)
    }

    /// The largest integer below an INTEGER key cursor's value: every integer for text and blobs,
    /// which sort after every number; nil when there is none (or no value).
    static func rowidFloor(belowKey key: Value?) -> Int64? {
        switch key {
        case .integer(let value)?:  // the keys below it passed
            return value > .min ? value - 1 : nil
        case .real(let value)?:  // the integers below it passed
            guard let ceiling = Int64(exactly: value.rounded(.up)), ceiling > .min else { return nil }
            return ceiling - 1
        case .text?, .blob?:
            return .max
        case .null?, nil:
            return nil
        }
    }
}
