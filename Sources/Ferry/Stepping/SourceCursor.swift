import FerrySQLite
import Foundation

/// The one place the SQL that walks a source table in its order is written, for both kinds of
/// source: a rowid source in rowid order (`NOT INDEXED`, on the rowid b-tree), a source without
/// rowid in primary-key order under the collations that make its key unique (so no two rows tie).
/// Moves, cleanup's count and deletes, and `verify` all read their ranges, counts and next
/// positions here; they differ only in the spans they ask for.
///
/// The two kinds keep their cursors differently (both persisted as they are): a rowid cursor is
/// the last row passed (every matching row at or below it moved), a key cursor the first row not
/// passed yet (NULL once every row is), because no value lies below every key of every type.
/// `notPassed(_:)` and `passed(_:)` turn either into a span.
struct SourceCursor {
    let mapping: ResolvedMapping

    init(_ mapping: ResolvedMapping) { self.mapping = mapping }

    var hasRowid: Bool { mapping.sourceHasRowid }

    /// The source table as the range statements read it (`ResolvedMapping.sourceRangeScan`).
    var scan: String { mapping.sourceRangeScan }

    // MARK: Spans as SQL

    /// The rows of `span` as an SQL condition; its positions are the parameters from `?first` on,
    /// in `arguments`.
    func condition(_ span: SourceSpan, firstParameter first: Int = 1) -> (sql: String, arguments: [Value]) {
        var terms: [String] = []
        var arguments: [Value] = []
        func bound(_ comparison: String, _ position: SourcePosition) {
            arguments.append(position.value)
            let parameter = "?\(first + arguments.count - 1)"
            terms.append(hasRowid ? "\(mapping.sourceRowid) \(comparison) \(parameter)"
                : "\(mapping.sourceKeyTuple) \(comparison) (\(mapping.keyParts(of: parameter)))")
        }
        switch span.lower {
        case .after(let position)?: bound(">", position)
        case .from(let position)?: bound(">=", position)
        case nil: break
        }
        switch span.upper {
        case .through(let position)?: bound("<=", position)
        case .before(let position)?: bound("<", position)
        case nil: break
        }
        return (terms.isEmpty ? "1" : terms.joined(separator: " AND "), arguments)
    }

    /// The rows of `span` the mapping matches (its filter, none of the earlier mappings'), as an
    /// SQL condition with its arguments.
    /// - Parameter recording: the filter term also records each row it matches through the
    ///   stepper's row recorder (`ResolvedMapping.filterCondition(recording:)`).
    /// - Parameter pendingOnly: rows in the moved set (moved ahead by app writes) left out.
    func matching(_ span: SourceSpan, recording: Bool = false, pendingOnly: Bool = false) -> (sql: String, arguments: [Value]) {
        let range = condition(span)
        var sql = "\(range.sql) AND \(mapping.filterCondition(recording: recording))"
        if pendingOnly { sql += " AND \(mapping.sourceIdentity) NOT IN (\(MigrationState.movedRowidsSQL(target: mapping.targetName)))" }
        return (sql, range.arguments)
    }

    // MARK: Reading positions and counts

    /// The last of the first `n` rows of `span` the mapping matches (the last of them all when
    /// fewer match); nil when none does. The range query of every batch and chunk.
    func lastOfFirst(_ n: Int, in span: SourceSpan, on db: Connection) throws(FerryError) -> SourcePosition? {
        let (condition, arguments) = matching(span)
        if hasRowid {
            let rowid = mapping.sourceRowid
            let last: Int64? = try sqlite(db.scalar("""
                SELECT max(r) FROM (SELECT \(rowid) AS r FROM \(scan) WHERE \(condition) ORDER BY \(rowid) LIMIT ?\(arguments.count + 1))
                """, .positional(arguments + [.integer(Int64(n))])))
            return last.map { .rowid($0) }
        }
        let select = "SELECT \(mapping.sourceIdentity) FROM \(mapping.qualifiedSource) WHERE \(condition) ORDER BY "
        let parameters = StatementArguments.positional(arguments)
        if let key: [UInt8] = try sqlite(db.scalar(select + "\(mapping.sourceOrder) LIMIT 1 OFFSET \(max(0, n - 1))", parameters)) {
            return .key(key)
        }
        let descending = mapping.sourceKeyColumns.map { "\($0) DESC" }.joined(separator: ", ")
        let last: [UInt8]? = try sqlite(db.scalar(select + descending + " LIMIT 1", parameters))
        return last.map { .key($0) }
    }

    /// How many of the first `n` rows of `span` the mapping matches, and, when that is `n`, the
    /// last of them (where the next count goes on from).
    func countFirst(_ n: Int, in span: SourceSpan, on db: Connection) throws(FerryError) -> (count: Int64, last: SourcePosition?) {
        let (condition, arguments) = matching(span)
        if hasRowid {
            let rowid = mapping.sourceRowid
            let row = try sqlite(db.fetchOne("""
                SELECT max(r), count(*) FROM (SELECT \(rowid) AS r FROM \(scan) WHERE \(condition) ORDER BY \(rowid) LIMIT ?\(arguments.count + 1))
                """, .positional(arguments + [.integer(Int64(n))])))
            let last = try sqlite(row?.column(0, as: Int64?.self)) ?? nil
            return (try sqlite(row?.column(1, as: Int64.self)) ?? 0, last.map { .rowid($0) })
        }
        let count = try sqlite(db.scalar("SELECT count(*) FROM (SELECT 1 FROM \(mapping.qualifiedSource) WHERE \(condition) LIMIT \(n))",
                                         .positional(arguments), as: Int64.self)) ?? 0
        return (count, count == Int64(n) ? try lastOfFirst(n, in: span, on: db) : nil)
    }

    /// How many rows of `span` the mapping matches.
    func matchingCount(in span: SourceSpan, on db: Connection) throws(FerryError) -> Int64 {
        let (condition, arguments) = matching(span)
        return try sqlite(db.scalar("SELECT count(*) FROM \(scan) WHERE \(condition)", .positional(arguments), as: Int64.self)) ?? 0
    }

    /// The first source row after `position`, whatever the filter.
    func first(after position: SourcePosition, on db: Connection) throws(FerryError) -> SourcePosition? {
        let (condition, arguments) = condition(SourceSpan(lower: .after(position)))
        let first: Value? = try sqlite(db.scalar(
            "SELECT \(mapping.sourceIdentity) FROM \(scan) WHERE \(condition) ORDER BY \(mapping.sourceOrder) LIMIT 1", .positional(arguments)))
        return first.flatMap(SourcePosition.init)
    }

    /// Deletes the rows of `span` the mapping matches from the source; returns how many.
    func deleteMatching(in span: SourceSpan, on db: Connection) throws(FerryError) -> Int {
        let (condition, arguments) = matching(span)
        try sqlite(db.execute("DELETE FROM \(scan) WHERE \(condition)", .positional(arguments)))
        return db.changes
    }

    // MARK: The migration's cursor

    /// Every row of the source (a rowid source's from above the smallest rowid, which stands for
    /// "nothing passed yet", as everywhere in the catalog).
    var everyRow: SourceSpan { hasRowid ? SourceSpan(lower: .after(.rowid(Int64.min))) : SourceSpan() }

    /// The rows the migration has not passed yet; nil when it passed every row (a key cursor at
    /// its end). A rowid cursor not set yet stands below every rowid.
    func notPassed(_ record: TableRecord) -> SourceSpan? {
        if hasRowid { return SourceSpan(lower: .after(.rowid(record.cursor ?? Int64.min))) }
        return record.keyCursor.map { SourceSpan(lower: .from(.key($0))) }
    }

    /// The rows the migration passed (every row, once a key cursor reached its end).
    func passed(_ record: TableRecord) -> SourceSpan {
        if hasRowid { return SourceSpan(lower: .after(.rowid(Int64.min)), upper: .through(.rowid(record.cursor ?? Int64.min))) }
        return SourceSpan(upper: record.keyCursor.map { .before(.key($0)) })
    }

    /// True when no row can lie beyond the cursor unseen: always for a rowid source (its
    /// retirement checks the rowids above the cursor itself, `SourceTableRetirement`), for a
    /// source without rowid once its key cursor passed every row.
    func passedEverything(_ record: TableRecord) -> Bool { hasRowid || record.keyCursor == nil }

    /// The cursor a source table's retirement checks no row lies above (a rowid source's).
    func retirementCursor(_ record: TableRecord) -> Int64? { hasRowid ? record.cursor : nil }

    /// The next batch: up to `n` matching rows the cursor has not passed; nil when none is left
    /// (the table is complete: an explicit check, never an inference from an empty insert).
    func nextBatch(of record: TableRecord, rows n: Int, on db: Connection) throws(FerryError) -> SourceBatch? {
        guard let pending = notPassed(record), let last = try lastOfFirst(n, in: pending, on: db) else { return nil }
        let after = hasRowid ? last : try first(after: last, on: db)
        return SourceBatch(span: pending.through(last), last: last, cursorAfter: after)
    }

    /// A batch moved: the cursor advances past it, the counts grow, and the moved set forgets the
    /// rows the batch passed (`MigrationState.advance`).
    func advance(_ record: inout TableRecord, past batch: SourceBatch, moved: Int, quarantined: Int, accounted: MovedRows?,
                 on db: Connection) throws(FerryError) {
        try MigrationState.advance(&record, to: batch.cursorAfter, pruning: movedSetEntries(through: batch.last),
                                   moved: moved, quarantined: quarantined, accounted: accounted, on: db)
    }

    // MARK: The moved set

    /// The moved set's entries (an SQL condition on their `source_rowid`: a rowid, or a row key)
    /// at or before `position`.
    func movedSetEntries(through position: SourcePosition) -> String {
        switch position {
        case .rowid(let rowid):
            return "source_rowid <= \(rowid)"
        case .key(let key):
            return "EXISTS (SELECT 1 FROM \(mapping.qualifiedSource) WHERE \(mapping.sourceRow(identifiedBy: "source_rowid")) "
                + "AND \(mapping.sourceKeyTuple) <= (\(mapping.keyParts(of: Self.blobLiteral(key)))))"
        }
    }

    /// True when the moved set may hold rows of `span`: for a rowid source, looked up in the
    /// span's rowid range; for a source without rowid, any row.
    func movedSetMayHoldRows(of span: SourceSpan, on db: Connection) throws(FerryError) -> Bool {
        if case .after(.rowid(let low))? = span.lower, case .through(.rowid(let high))? = span.upper {
            return try MigrationState.hasMovedRows(target: mapping.targetName, above: low, upTo: high, on: db)
        }
        return try MigrationState.hasMovedRows(target: mapping.targetName, on: db)
    }

    /// The source rows of the moved set whose entries `entries` (an SQL condition on
    /// `source_rowid`) selects, with their digests: driven by the moved set (a few rows, usually
    /// none), the source looked up by identity, never scanned. Rows retired from the source since
    /// they moved (`MigrationState.retiredRowsTable`) are listed with the digests recorded then.
    func movedAheadRows(where entries: String, on db: Connection) throws(FerryError) -> [(identity: Value, digest: UInt64)] {
        let moved = "(\(MigrationState.movedRowidsSQL(target: mapping.targetName)) AND \(entries))"
        var sql = """
            SELECT \(mapping.sourceIdentity), \(RowDigest.function)(\(mapping.sourceDigestArguments)) FROM \(mapping.qualifiedSource)
            WHERE \(mapping.sourceRows(identifiedIn: moved, column: "source_rowid"))
            """
        if mapping.source.path == nil, try sqlite(db.tableExists(MigrationState.retiredRowsTable)) {
            sql += """

                UNION ALL SELECT r, digest FROM main.\(MigrationState.retiredRowsTable)
                WHERE source_id = \(mapping.record.sourceID) AND source_table = \(sqlString(mapping.record.sourceTable)) AND r IN \(moved)
                """
        }
        return try sqlite(db.fetchAll(sql)).map { row throws(FerryError) in (row[0], UInt64(bitPattern: try sqlite(row.column(1)))) }
    }

    /// Rows listed by identity and digest, as one batch's record of the rows it accounted for.
    func movedRows(_ rows: [(identity: Value, digest: UInt64)]) -> MovedRows {
        if hasRowid {
            return MovedRows(rows.compactMap { row -> (rowid: Int64, digest: UInt64)? in
                if case .integer(let rowid) = row.identity { (rowid, row.digest) } else { nil }
            })
        }
        return MovedRows(keyed: rows.compactMap { row -> (key: [UInt8], digest: UInt64)? in
            if case .blob(let key) = row.identity { (key, row.digest) } else { nil }
        })
    }

    /// `X'...'`: a row key inlined in SQL.
    static func blobLiteral(_ bytes: [UInt8]) -> String {
        "X'" + bytes.map { String(format: "%02X", $0) }.joined() + "'"
    }
}
