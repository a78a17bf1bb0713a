import FerrySQL
import FerrySQLite
/// One table mapping with the shapes of both tables: everything SQL generation needs.
struct ResolvedMapping: Sendable {
    var record: TableRecord
    let source: SourceRecord
    let target: TableShape
    let sourceShape: TableShape
    /// How each fed target column gets its value, in the target's order (columns without a feed
    /// take their default).
    let feeds: [ResolvedFeed]
    /// The filters of mappings registered earlier on the same source table: a source row belongs to
    /// the first mapping whose filter it matches, so split targets never share a row.
    let earlierFilters: [String]
    /// The target's name as the plan registered it, lower-cased (the app may have renamed the
    /// table since: `MigrationState.tableRenames`).
    var registeredName: String

    var targetName: String { record.target }
    var isFinished: Bool { record.state == .finished }

    /// The mapping with the target's shape and feeds as `db` sees them now (the app may have
    /// added or renamed a column in this snapshot, see `ColumnChanges`).
    /// The mapping unchanged when the target is gone (a `DROP TABLE` ended its migration).
    /// A target the app renamed in this snapshot (`ALTER TABLE T RENAME TO U`) is read under its new name.
    func reshaped(on db: Connection) throws(FerryError) -> ResolvedMapping {
        let currentName = try MigrationState.tableRenames(on: db)[registeredName] ?? registeredName
        let shape: TableShape
        do {
            shape = try TableShape.read(currentName, schema: "main", on: db)
        } catch .noSuchTable {
            return self
        }
        if shape == target { return self }
        var record = self.record
        record.target = shape.name
        let changes = try MigrationState.columnChanges(on: db)[shape.name.lowercased()] ?? ColumnChanges()
        return ResolvedMapping(record: record, source: source, target: shape, sourceShape: sourceShape,
                               feeds: MigrationEngine.feeds(target: shape, source: sourceShape, declared: record.columnFeeds, changes: changes),
                               earlierFilters: earlierFilters, registeredName: registeredName)
    }

    /// `ferry_src_N."S"` (or `main."S"`).
    var qualifiedSource: String { "\(q(source.schema)).\(q(sourceShape.name))" }
    /// The source table for keyset-range statements: `NOT INDEXED` keeps SQLite on the rowid
    /// b-tree, where a range costs only the rows in it. Without it the planner may pick an index on
    /// a filter column and scan half the table per batch.
    /// A source without rowid is read through its primary key, which is the table itself.
    var sourceRangeScan: String { sourceHasRowid ? "\(qualifiedSource) NOT INDEXED" : qualifiedSource }
    /// True while the source table exists (cleanup drops it).
    func sourceTableExists(on db: Connection) throws(FerryError) -> Bool {
        try sqlite(db.tableExists(sourceShape.name, schema: source.schema))
    }
    /// `main."T"`.
    var qualifiedTarget: String { "main.\(q(target.name))" }

    /// The source's rowid, qualified by the source table.
    var sourceRowid: String { "\(qualifiedSource).\(sourceShape.rowidName)" }

    // MARK: Source rows without rowid
    //
    // A source `WITHOUT ROWID` is kept track of by its primary key: the single value that stands
    // for a row (in the moved set, the move lists, quarantine) is `ferry_key(key columns)`, and a
    // list of such values finds its rows through the primary key (`ferry_key_part`). Its cursor is
    // inclusive: the key of the first source row not passed yet (NULL once every row is passed),
    // because no value lies below every key of every type.

    /// False when the source is `WITHOUT ROWID`: its rows are identified by their primary key.
    var sourceHasRowid: Bool { sourceShape.hasRowid }
    /// The source's primary-key columns in key order, qualified, each with the collation its key
    /// is unique under (a source without rowid): every comparison and order of keys uses them, so
    /// that no two rows ever tie.
    var sourceKeyColumns: [String] {
        sourceShape.primaryKey.map { "\(qualifiedSource).\(q($0.column)) COLLATE \(q($0.collation))" }
    }
    /// The one value that identifies a source row: its rowid, or `ferry_key` of its primary key.
    var sourceIdentity: String {
        sourceHasRowid ? sourceRowid : "\(Connection.rowKeyFunction)(\(sourceKeyColumns.joined(separator: ", ")))"
    }
    /// The source's order: rowid, or the primary key's columns.
    var sourceOrder: String { sourceHasRowid ? sourceRowid : sourceKeyColumns.joined(separator: ", ") }
    /// The source's key as a row value, `(k1, k2)` (a source without rowid).
    var sourceKeyTuple: String { "(\(sourceKeyColumns.joined(separator: ", ")))" }
    /// The parts of the row key `identity` (an SQL expression), as a list matching `sourceKeyTuple`.
    func keyParts(of identity: String) -> String {
        sourceKeyColumns.indices.map { "\(Connection.rowKeyPartFunction)(\(identity), \($0))" }.joined(separator: ", ")
    }
    /// The source rows whose identity is a value of column `column` in `rows` (a table, or a
    /// parenthesized query): by rowid, or through the primary key.
    func sourceRows(identifiedIn rows: String, column: String = "r") -> String {
        if sourceHasRowid { return "\(sourceRowid) IN (SELECT \(column) FROM \(rows))" }
        return "\(sourceKeyTuple) IN (SELECT \(keyParts(of: column)) FROM \(rows))"
    }
    /// The source row whose identity is `identity` (an SQL expression, a parameter say).
    func sourceRow(identifiedBy identity: String) -> String {
        sourceHasRowid ? "\(sourceRowid) = \(identity)" : "\(sourceKeyTuple) = (\(keyParts(of: identity)))"
    }

    /// The condition a source row meets when it belongs to this mapping: its own filter, and none
    /// of the earlier mappings' filters on the same source table.
    /// Date and time functions in the filters read their computed arguments through the time-value
    /// guard (`guardingTime`).
    var filterCondition: String {
        var parts = [record.filter.map { "(\(Self.guardingTime($0)))" } ?? "1"]
        for earlier in earlierFilters { parts.append("NOT ifnull((\(Self.guardingTime(earlier))), 0)") }
        return parts.joined(separator: " AND ")
    }

    /// `sql` (a filter or a column feed) with the computed arguments of its date and time functions
    /// read through `ferry_time_value` (FerrySQL's `TimeValueGuard`): a value that reads the clock
    /// or the time zone fails the statement that evaluates it, as SQLite fails it in a CHECK
    /// constraint, whether it is computed or held by a column. (A text that does not tokenize is
    /// returned as it is: SQLite refuses it when it compiles.)
    static func guardingTime(_ sql: String) -> String {
        (try? TimeValueGuard.guarding(sql, with: Connection.timeValueGuardFunction)) ?? sql
    }

    /// The source rows of this mapping with rowid in (lo, hi]: `?1` is lo, `?2` is hi.
    var rangeCondition: String { rangeCondition(recording: false) }

    /// `rangeCondition`; when `recording`, its filter term also records each source row it
    /// matches, in that very evaluation, through the stepper's row recorder
    /// (`movedRowRecorderFunction`): what a batch moved is known without evaluating the filter again.
    func rangeCondition(recording: Bool) -> String {
        "\(sourceRowid) > ?1 AND \(sourceRowid) <= ?2 AND \(filterCondition(recording: recording))"
    }

    /// `filterCondition`; when `recording`, a term that also records each source row it matches, in
    /// that very evaluation, through the stepper's row recorder.
    func filterCondition(recording: Bool) -> String {
        recording ? "(CASE WHEN \(filterCondition) THEN \(Self.movedRowRecorderFunction)(\(sourceDigestArguments)) END)" : filterCondition
    }

    /// The source row as `ferry_row_digest` and the row recorder read it: its identity (rowid, or
    /// row key), then every column, qualified.
    /// The target's key by which a moved row is found from its source row when no rowid the source
    /// gives identifies it: the primary key's columns, every one fed by the source, each with the
    /// collation that makes it unique. Nil when the target has no such key.
    var targetMatchKey: [(column: String, collation: String?)]? {
        let key = target.hasRowid
            ? target.columns.filter { $0.primaryKeyPosition > 0 }.map { (column: $0.name, collation: Optional<String>.none) }
            : target.primaryKey.map { (column: $0.column, collation: Optional($0.collation)) }
        guard !key.isEmpty, key.allSatisfy({ feed(of: $0.column) != nil }) else { return nil }
        return key
    }

    /// The digest (`RowDigest`) of a moved row's `targetMatchKey` computed from its source row, as
    /// the target stores the key (under each column's affinity): what the app-edit triggers of a
    /// target matched by key record (`MigratingTableSQL.editTriggerSQL`).
    var sourceMatchKeyDigest: String? {
        guard let key = targetMatchKey else { return nil }
        let values = key.map { part -> String in
            let value = correlatedSourceValue(of: feed(of: part.column)!)
            let affinity = ColumnAffinity(declaredType: target.column(named: part.column)?.declaredType ?? "")
            return affinity == .blob ? value : "\(Connection.affinityFunction)(\(value), '\(affinity.rawValue)')"
        }
        return "\(RowDigest.function)(\(values.joined(separator: ", ")))"
    }

    var sourceDigestArguments: String {
        ([sourceIdentity] + sourceShape.columns.map { "\(qualifiedSource).\(q($0.name))" }).joined(separator: ", ")
    }

    /// The SQL function of the writer's row recorder (`Connection.defineRowRecorder`), which only
    /// the stepper's own statements may call.
    static let movedRowRecorderFunction = "ferry_record_moved"

    /// True when each batch records the source rows it accounted for (`MovedRows`), and cleanup
    /// deletes those rows and nothing else: a table registered by this version whose rows are
    /// chosen by a filter (its own, or earlier mappings' of the same source table). Without a filter
    /// every row of a batch's range is the mapping's: the range is the record.
    var recordsMovedRows: Bool { record.movesRecorded && (record.filter != nil || !earlierFilters.isEmpty) }

    /// The pending rows: the source rows of this mapping not yet in the target (above the cursor,
    /// not in the moved set). The one definition, evaluated inside SQLite against the statement's
    /// snapshot of the state (union reads, redirect triggers, pre-moves, progress counts).
    var pendingCondition: String {
        let cursor = sourceHasRowid ? "\(sourceRowid) > \(MigrationState.cursorSQL(target: targetName))"
            : "\(sourceKeyTuple) >= (\(MigrationState.keyCursorSQL(target: targetName, parts: keyParts(of: "cursor"))))"
        return cursor + " AND \(MigrationState.notMovedCondition(target: targetName, rowid: sourceIdentity)) AND \(filterCondition)"
    }

    /// The pending rows with rowid in (lo, hi] (`?1`, `?2`), for a batch above the cursor: the
    /// range replaces the cursor test and the moved set is read once as a list (the stepper's form
    /// of `pendingCondition`; it copies a range in one set-based statement).
    var pendingRangeCondition: String { pendingRangeCondition(recording: false) }

    /// `pendingRangeCondition`, recording the rows its filter matches when `recording` (see
    /// `rangeCondition(recording:)`).
    func pendingRangeCondition(recording: Bool) -> String {
        "\(rangeCondition(recording: recording)) AND \(sourceRowid) NOT IN (\(MigrationState.movedRowidsSQL(target: targetName)))"
    }

    /// `INSERT INTO main."T"(rowid, cols) SELECT rowid, cols FROM src."S"` (append a WHERE); without
    /// the rowid when the target has none.
    /// - Parameter qualifiedTarget: false inside trigger bodies, where SQLite forbids a schema
    ///   on the written table (`"T"` then resolves to main).
    /// - Parameter rollingBack: `INSERT OR ROLLBACK`: a conflict rolls the whole transaction back
    ///   (the stepper's own transactions only; see `Stepper.copyingSetBased`).
    func insertSelectHead(qualifiedTarget: Bool = true, rollingBack: Bool = false) -> String {
        // A target without rowid takes the source row's values alone (its primary key identifies it).
        // From a source without rowid, the target's rowid is its INTEGER PRIMARY KEY's feed, or new.
        let rowidColumn = target.hasRowid && sourceHasRowid ? [target.rowidName] : []
        let rowidValue = target.hasRowid && sourceHasRowid ? [sourceRowid] : []
        let columnList = (rowidColumn + feeds.map { q($0.column) }).joined(separator: ", ")
        let valueList = (rowidValue + feeds.map { sourceValue(of: $0) }).joined(separator: ", ")
        return "INSERT \(rollingBack ? "OR ROLLBACK " : "")INTO \(qualifiedTarget ? self.qualifiedTarget : q(target.name))(\(columnList)) "
            + "SELECT \(valueList) FROM \(sourceRangeScan)"
    }

    /// The feed of a target column, if it has one.
    func feed(of column: String) -> ResolvedFeed? {
        feeds.first { $0.column.lowercased() == column.lowercased() }
    }

    /// The value of a feed in a query whose only table at its level is the source (an expression's
    /// unqualified columns then bind to the source row).
    func sourceValue(of feed: ResolvedFeed) -> String {
        switch feed.value {
        case .sourceColumn(let name): return "\(qualifiedSource).\(q(name))"
        case .expression(let sql): return "(\(Self.guardingTime(sql)))"
        }
    }

    /// The value of a feed anywhere `qualifiedSource` names the source row, even where other
    /// tables are in scope: an expression is evaluated in a subquery over that one row.
    func correlatedSourceValue(of feed: ResolvedFeed) -> String {
        switch feed.value {
        case .sourceColumn: return sourceValue(of: feed)
        case .expression(let sql):
            let alias = "ferry_feed_row"
            let sameRow = sourceHasRowid ? "\(alias).\(sourceShape.rowidName) = \(sourceRowid)"
                : sourceShape.primaryKey.map { "\(alias).\(q($0.column)) = \(qualifiedSource).\(q($0.column)) COLLATE \(q($0.collation))" }
                    .joined(separator: " AND ")
            return "(SELECT \(Self.guardingTime(sql)) FROM \(qualifiedSource) AS \(alias) WHERE \(sameRow))"
        }
    }
}

/// How one target column is fed from the source row.
struct ResolvedFeed: Sendable, Hashable {
    /// Where the value comes from.
    enum Value: Sendable, Hashable {
        /// A source column (by name): the target column copies it.
        case sourceColumn(String)
        /// An SQL expression over the source row (a registered `ColumnFeed`).
        case expression(String)
    }
    /// The target column.
    let column: String
    /// Its value.
    let value: Value

    /// The source column when the feed copies one (key lookups can then use the source's indexes).
    var sourceColumn: String? {
        if case .sourceColumn(let name) = value { return name }
        return nil
    }
}
