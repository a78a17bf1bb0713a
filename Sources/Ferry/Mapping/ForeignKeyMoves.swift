import FerrySQLite

/// Foreign keys between the app's tables and migrating ones, kept as on the finished table: SQLite
/// checks a foreign key against the target's rows alone, so Ferry moves the pending rows a check or
/// an action needs just before it happens, with temp triggers on the writer:
///
/// - **Parents ahead.** Before a row is inserted into a child table (or its key columns updated),
///   the pending rows of a migrating parent it references move into the parent's target: the
///   check then finds them, as on the finished table. It also fires when Ferry moves child rows
///   ahead of an app write (their parents come along); not for stepper batches, which run with
///   foreign keys off (see `Stepper`).
/// - **Children ahead.** Before a parent row is deleted (or its key updated), the pending rows of a
///   migrating child that reference it move into the child's target: `ON DELETE CASCADE`, `SET
///   NULL` and `RESTRICT` then reach them, as on the finished table.
///
/// The rows move through `temp.ferry_move_fk`, keyed by the moving table, so that a move nested in
/// another (a child's parents while the child moves) never touches the rows another move is
/// reading. A table's move never nests in a move of its own rows (a self-referencing key), so a
/// pending parent of a row being moved in the same table stays pending.
struct ForeignKeyEdge: Sendable, Hashable {
    /// The key's number in `PRAGMA foreign_key_list(child)`.
    var id = 0
    /// Whether the child table has a rowid (not `WITHOUT ROWID`).
    var childHasRowid = true
    /// The child table, its key columns, and the parent table with the columns they reference (in
    /// the same order).
    let child: String
    let childColumns: [String]
    let parent: String
    let parentColumns: [String]

    /// Every foreign key of `main`'s tables (a parent key left implicit is the parent's primary key).
    static func all(on db: Connection) throws(FerryError) -> [ForeignKeyEdge] {
        let tables = try sqlite(db.fetchAll("SELECT name, sql LIKE '%WITHOUT%ROWID%' FROM main.sqlite_master WHERE type = 'table' "
                                            + "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name NOT LIKE 'ferry\\_%' ESCAPE '\\'"))
            .map { row throws(FerryError) -> (String, Bool) in (try sqlite(row.column(0)), try sqlite(row.column(1, as: Int.self)) == 0) }
        var edges: [ForeignKeyEdge] = []
        for (table, hasRowid) in tables {
            var keys: [Int: (parent: String, from: [String], to: [String?])] = [:]
            for row in try sqlite(db.fetchAll("PRAGMA main.foreign_key_list(\(q(table)))")) {
                let id: Int = try sqlite(row.column(0))
                let parent: String = try sqlite(row.column(2))
                let from: String = try sqlite(row.column(3))
                let to: String? = try sqlite(row.column(4, as: String?.self))
                keys[id, default: (parent, [], [])].from.append(from)
                keys[id, default: (parent, [], [])].to.append(to)
            }
            for key in keys.keys.sorted() {
                guard let entry = keys[key] else { continue }
                var to = entry.to.compactMap { $0 }
                if to.count != entry.from.count {
                    // The parent's primary key, in order.
                    var primaryKey: [(position: Int, name: String)] = []
                    for row in try sqlite(db.fetchAll("PRAGMA main.table_info(\(q(entry.parent)))")) {
                        let position: Int = try sqlite(row.column(5))
                        if position > 0 { primaryKey.append((position, try sqlite(row.column(1)))) }
                    }
                    to = primaryKey.sorted { $0.position < $1.position }.map(\.name)
                }
                guard to.count == entry.from.count, !to.isEmpty else { continue }
                edges.append(ForeignKeyEdge(id: key, childHasRowid: hasRowid, child: table, childColumns: entry.from, parent: entry.parent,
                                            parentColumns: to))
            }
        }
        return edges
    }
}

extension MigratingTableSQL {
    /// Temp table of the rows that foreign-key moves choose, by moving table (writer connection only).
    static let foreignKeyRowsTable = "ferry_move_fk"

    /// The value in `temp.ferry_redirect_suspended` while the stepper moves rows: foreign-key moves
    /// skip its batches (they run with foreign keys off); moves ahead of an app write use 1.
    static let stepperSuspension = 2

    /// The source expression of the target column `column` when it copies a source column (or is
    /// the rowid alias); nil when it is computed, or fed by nothing.
    func sourceExpression(of column: String) -> String? {
        if mapping.sourceHasRowid, let alias = mapping.target.rowidAliasColumn, alias.lowercased() == column.lowercased() { return mapping.sourceRowid }
        guard let source = mapping.feed(of: column)?.sourceColumn else { return nil }
        return "\(mapping.qualifiedSource).\(q(source))"
    }

    /// Statements (for a trigger body) that move this table's pending rows where each of
    /// `keyColumns` equals the matching value of `values` (NEW.x or OLD.x), through the
    /// foreign-key rows table. Nil when a key column is not a plain copy of a source column.
    func foreignKeyMove(keyColumns: [String], values: [String]) -> String? {
        var conditions: [String] = []
        for (column, value) in zip(keyColumns, values) {
            guard let source = sourceExpression(of: column) else { return nil }
            conditions.append("\(source) = \(value)")
        }
        return foreignKeyMove(where: conditions)
    }

    /// Statements (for a trigger body) that move this table's pending rows meeting every one of
    /// `conditions` (on the source's columns), through the foreign-key rows table.
    func foreignKeyMove(where conditions: [String]) -> String {
        let key = sqlString(mapping.targetName.lowercased())
        let rows = "(SELECT r FROM \(Self.foreignKeyRowsTable) WHERE t = \(key))"
        let listing = "INSERT OR IGNORE INTO \(Self.foreignKeyRowsTable)(t, r) SELECT \(key), \(mapping.sourceIdentity) FROM \(mapping.qualifiedSource) "
            + "WHERE \(mapping.pendingCondition) AND \(conditions.joined(separator: " AND "))"
        return ([listing] + moveSequence(rows: rows, qualified: false) + ["DELETE FROM \(Self.foreignKeyRowsTable) WHERE t = \(key)"])
            .map { $0 + ";" }.joined(separator: "\n")
    }

    /// The condition that keeps a foreign-key trigger quiet: during stepper batches, and while this
    /// table's own rows move through the foreign-key rows table (no nesting of a table in itself).
    func foreignKeyTriggerCondition() -> String {
        "NOT EXISTS (SELECT 1 FROM temp.\(Self.suspendTable) WHERE x = \(Self.stepperSuspension)) "
            + "AND NOT EXISTS (SELECT 1 FROM temp.\(Self.foreignKeyRowsTable) WHERE t = \(sqlString(mapping.targetName.lowercased())))"
    }

    /// The temp triggers that move this table's pending rows for the foreign-key `edge`: as parents
    /// before rows are written into the child table (when this table is the parent), or as
    /// children before parent rows are deleted or re-keyed (when it is the child). `index` makes
    /// the names unique.
    func foreignKeyTriggerSQL(for edge: ForeignKeyEdge, index: Int) -> [String] {
        let name = "ferry_redirect_fk_\(index)"
        let when = "WHEN " + foreignKeyTriggerCondition()
        var triggers: [String] = []
        if edge.parent.lowercased() == mapping.targetName.lowercased(),
           let move = foreignKeyMove(keyColumns: edge.parentColumns, values: edge.childColumns.map { "NEW.\(q($0))" }) {
            let columns = edge.childColumns.map(q).joined(separator: ", ")
            triggers.append("CREATE TEMP TRIGGER \(q(name + "_pi")) BEFORE INSERT ON main.\(q(edge.child)) \(when) BEGIN\n\(move)\nEND")
            triggers.append("CREATE TEMP TRIGGER \(q(name + "_pu")) BEFORE UPDATE OF \(columns) ON main.\(q(edge.child)) \(when) BEGIN\n\(move)\nEND")
        }
        if edge.child.lowercased() == mapping.targetName.lowercased(),
           let move = foreignKeyMove(keyColumns: edge.childColumns, values: edge.parentColumns.map { "OLD.\(q($0))" }) {
            let columns = edge.parentColumns.map(q).joined(separator: ", ")
            triggers.append("CREATE TEMP TRIGGER \(q(name + "_cd")) BEFORE DELETE ON main.\(q(edge.parent)) \(when) BEGIN\n\(move)\nEND")
            triggers.append("CREATE TEMP TRIGGER \(q(name + "_cu")) BEFORE UPDATE OF \(columns) ON main.\(q(edge.parent)) \(when) BEGIN\n\(move)\nEND")
        }
        return triggers
    }

    /// The temp triggers that keep this table's source, a table of the target's file, out of the
    /// way of its own foreign key `edge` (the source is its child, `edge.parent` a table the app
    /// writes). The moved rows stay in the source until cleanup, and SQLite would apply the
    /// source's key to them: refuse the parent's delete (`NO ACTION`) or change them behind
    /// Ferry's back (`CASCADE`, `SET NULL`), where the finished table has no source. Before a
    /// parent row is deleted or re-keyed, the source rows that reference it move into the target
    /// while pending and match (`migrating`), and those moved are deleted from the source, as
    /// cleanup would have deleted them; SQLite then applies the target's key to them, and the
    /// source's key only to the source rows that stay (a filter's others), as on the finished
    /// tables. What moved is what was recorded when it moved: every row, for a source without a
    /// filter, whose retired rows are counted in the catalog's `rows_retired_early`; for a
    /// filtered one, the batches' records and the moved set (`MovedRowIndex`), and the retired
    /// rows are recorded with their digests (`MigrationState.retiredRowsTable`). `index` makes the
    /// names unique.
    func sourceForeignKeyTriggerSQL(for edge: ForeignKeyEdge, index: Int, migrating: Bool) -> [String] {
        let name = "ferry_redirect_sfk_\(index)"
        let conditions = zip(edge.childColumns, edge.parentColumns).map { "\(mapping.qualifiedSource).\(q($0)) = OLD.\(q($1))" }
        let matching = conditions.joined(separator: " AND ")
        // By source, not by target name: the app may rename the target (no other mapping reads this source).
        let source = "source_id = \(mapping.record.sourceID) AND source_table = \(sqlString(mapping.record.sourceTable))"
        // (A trigger's INSERT, UPDATE and DELETE name their table unqualified: main's, as temp has none of these.)
        let retire: [String]
        if mapping.recordsMovedRows {
            let moved = "\(MovedRowIndex.function)(\(mapping.record.sourceID), \(sqlString(mapping.record.sourceTable)), \(mapping.sourceIdentity))"
            retire = [
                "INSERT OR IGNORE INTO \(MigrationState.retiredRowsTable)(source_id, source_table, r, digest) "
                    + "SELECT \(mapping.record.sourceID), \(sqlString(mapping.record.sourceTable)), \(mapping.sourceIdentity), "
                    + "\(RowDigest.function)(\(mapping.sourceDigestArguments)) FROM \(mapping.qualifiedSource) WHERE \(matching) AND \(moved);",
                "DELETE FROM \(q(mapping.sourceShape.name)) WHERE \(matching) AND \(mapping.sourceIdentity) IN "
                    + "(SELECT r FROM \(MigrationState.retiredRowsTable) WHERE \(source));",
            ]
        } else {
            retire = [
                "UPDATE \(MigrationState.tablesTable) SET rows_retired_early = rows_retired_early + "
                    + "(SELECT count(*) FROM \(mapping.qualifiedSource) WHERE \(matching)) WHERE \(source) AND source_cleaned = 0;",
                "DELETE FROM \(q(mapping.sourceShape.name)) WHERE \(matching);",
            ]
        }
        let body = ((migrating ? [foreignKeyMove(where: conditions)] : []) + retire).joined(separator: "\n")
        let when = "WHEN " + foreignKeyTriggerCondition()
        let changed = edge.parentColumns.map { "OLD.\(q($0)) IS NOT NEW.\(q($0))" }.joined(separator: " OR ")
        let columns = edge.parentColumns.map(q).joined(separator: ", ")
        return [
            "CREATE TEMP TRIGGER \(q(name + "_d")) BEFORE DELETE ON main.\(q(edge.parent)) \(when) BEGIN\n\(body)\nEND",
            "CREATE TEMP TRIGGER \(q(name + "_u")) BEFORE UPDATE OF \(columns) ON main.\(q(edge.parent)) \(when) AND (\(changed)) BEGIN\n\(body)\nEND",
        ]
    }

    /// True when this table's source may keep its own foreign keys out of the way
    /// (`sourceForeignKeyTriggerSQL`): a table of the target's file whose moved rows are known
    /// (every row, without a filter now or before; or as recorded by the batches), that no other
    /// mapping reads and no foreign key references (its rows go without a check of their own
    /// children).
    func retiresReferencingRowsEarly(others: [ResolvedMapping], edges: [ForeignKeyEdge]) -> Bool {
        let source = mapping.sourceShape.name.lowercased()
        let movedRowsKnown = (mapping.record.filter == nil && mapping.earlierFilters.isEmpty) || mapping.recordsMovedRows
        return mapping.source.path == nil && movedRowsKnown
            && !others.contains { $0.registeredName.lowercased() != mapping.registeredName.lowercased() && $0.source.id == mapping.source.id
                && $0.sourceShape.name.lowercased() == source }
            && !edges.contains { $0.parent.lowercased() == source }
    }
}
