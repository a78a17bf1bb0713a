/// One table mapping with the shapes of both tables: everything SQL generation needs.
struct ResolvedMapping: Sendable {
    var record: TableRecord
    let source: SourceRecord
    let target: TableShape
    let sourceShape: TableShape
    /// Target columns fed from the source column of the same name, in the target's order.
    let copiedColumns: [String]
    /// The filters of mappings registered earlier on the same source table: a source row belongs to
    /// the first mapping whose filter it matches, so split targets never share a row.
    let earlierFilters: [String]

    var targetName: String { record.target }
    var isFinished: Bool { record.state == .finished }

    /// `ferry_src_N."S"` (or `main."S"`).
    var qualifiedSource: String { "\(q(source.schema)).\(q(sourceShape.name))" }
    /// The source table for keyset-range statements: `NOT INDEXED` keeps SQLite on the rowid
    /// b-tree, where a range costs only the rows in it. Without it the planner may pick an index on
    /// a filter column and scan half the table per batch.
    var sourceRangeScan: String { "\(qualifiedSource) NOT INDEXED" }
    /// `main."T"`.
    var qualifiedTarget: String { "main.\(q(target.name))" }

    /// The source's rowid, qualified by the source table.
    var sourceRowid: String { "\(qualifiedSource).\(sourceShape.rowidName)" }

    /// The condition a source row meets when it belongs to this mapping: its own filter, and none
    /// of the earlier mappings' filters on the same source table.
    var filterCondition: String {
        var parts = [record.filter.map { "(\($0))" } ?? "1"]
        for earlier in earlierFilters { parts.append("NOT ifnull((\(earlier)), 0)") }
        return parts.joined(separator: " AND ")
    }

    /// The source rows of this mapping with rowid in (lo, hi]: `?1` is lo, `?2` is hi.
    var rangeCondition: String {
        "\(sourceRowid) > ?1 AND \(sourceRowid) <= ?2 AND \(filterCondition)"
    }

    /// `INSERT INTO main."T"(rowid, cols) SELECT rowid, cols FROM src."S"` (append a WHERE).
    /// - Parameter qualifiedTarget: false inside trigger bodies, where SQLite forbids a schema
    ///   on the written table (`"T"` then resolves to main).
    func insertSelectHead(qualifiedTarget: Bool = true) -> String {
        let cols = copiedColumns.map(q).joined(separator: ", ")
        let sourceCols = copiedColumns.map { "\(qualifiedSource).\(q($0))" }.joined(separator: ", ")
        let separator = copiedColumns.isEmpty ? "" : ", "
        return "INSERT INTO \(qualifiedTarget ? self.qualifiedTarget : q(target.name))(\(target.rowidName)\(separator)\(cols)) "
            + "SELECT \(sourceRowid)\(separator)\(sourceCols) FROM \(sourceRangeScan)"
    }
}

/// Double-quotes an identifier.
func q(_ identifier: String) -> String { Connection.quoteIdentifier(identifier) }

/// A single-quoted SQL string literal.
func sqlString(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "''") + "'" }
