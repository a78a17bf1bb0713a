import FerrySQL
import FerrySQLite

/// The pending source rows a statement may touch, moved into the target before it runs
/// ("move-then-write"): how an UPDATE, a DELETE or a `CREATE UNIQUE INDEX` on a migrating table
/// meets the rows its finished table would hold. Built by the redirector once per SQL text, run by
/// `FerryConnection` before the statement, in its transaction.
///
/// The plan is two parts. `listing` puts the identities (rowid, or row key) of the pending rows the
/// statement may touch into a temp table; when it lists none (the usual write: its rows moved long
/// ago, or never existed) nothing more runs. Otherwise `moves`, with the redirect triggers
/// suspended, copy those rows into the target, record them as moved, and empty the temp table. The
/// statement then runs on the target alone, so its `changes()`, `RETURNING`, `ORDER BY ... LIMIT`,
/// triggers and conflicts are those of the finished table.
struct RowMovePlan: Sendable {
    /// Lists the rows to move into the table's temp rows table (`MigratingTableSQL.rowsTable`).
    let listing: HashedSQL
    /// Moves the listed rows, records them and empties the rows table.
    let moves: [HashedSQL]

    /// The moves of the rows of `table` whose identity `selection` yields (one column, named `r`,
    /// evaluated before anything moves).
    /// - Parameter pendingOnly: `selection` yields pending rows alone (it reads
    ///   `MigratingTableSQL.pendingSelect()`), so it needs no second look-up in the source.
    init(table: MigratingTableSQL, selection: String, pendingOnly: Bool) {
        let mapping = table.mapping
        let list: String
        if pendingOnly {
            list = "SELECT r FROM (\(selection))"
        } else {
            let chosen = mapping.sourceHasRowid ? "\(mapping.sourceRowid) IN (\(selection))" : mapping.sourceRows(identifiedIn: "(\(selection))")
            list = "SELECT \(mapping.sourceIdentity) FROM \(mapping.qualifiedSource) WHERE \(mapping.pendingCondition) AND \(chosen)"
        }
        listing = HashedSQL("INSERT OR IGNORE INTO temp.\(table.rowsTable)(r) \(list)")
        moves = (table.moveSequence(rows: "temp.\(table.rowsTable)", qualified: true) + ["DELETE FROM temp.\(table.rowsTable)"]).map(HashedSQL.init)
    }

    /// The moves ahead of the app's UPDATE or DELETE of `table` (nil for an INSERT: the redirect
    /// triggers move what a row conflicts with, row by row). `readsRewritten` rewrites the reads of
    /// the selection (its FROM and subqueries may read migrating tables), with
    /// `pendingRowsName` read as `table`'s pending rows.
    static func ahead(of request: WriteRequest, table: MigratingTableSQL,
                      readsRewritten: (String) throws(RewriteError) -> String) throws(RewriteError) -> RowMovePlan? {
        guard let selection = affectedRowSelection(request) else { return nil }
        return RowMovePlan(table: table, selection: try readsRewritten(selection), pendingOnly: true)
    }

    /// The moves ahead of `CREATE UNIQUE INDEX` on `table`: every pending row whose key in the new
    /// index is shared with another row of the finished table (`duplicateKeys`, a selection of
    /// rowids over the finished table), so that the index is created there and fails exactly as on
    /// the finished table when a key is duplicated.
    static func aheadOfUniqueIndex(on table: MigratingTableSQL, duplicateKeys: String) -> RowMovePlan {
        RowMovePlan(table: table, selection: duplicateKeys, pendingOnly: false)
    }

    /// The name the selection of an UPDATE or DELETE reads the pending rows of its table under
    /// (replaced by `MigratingTableSQL.pendingSelect()`; an app table of that name read in the
    /// write's condition would read them too, which moves rows early at worst, as the stepper would).
    static let pendingRowsName = "ferry_pending_rows"

    /// `WITH ... SELECT alias.ferry_identity AS r FROM pending AS alias [, FROM items] WHERE ...` for
    /// UPDATE and DELETE: the identity of every pending row the statement may touch (a superset when
    /// it has ORDER BY / LIMIT, which then apply to the target alone, as in a finished table). Only
    /// pending rows can need a move, so the target's rows are not read. Nil for INSERT.
    static func affectedRowSelection(_ request: WriteRequest) -> String? {
        let reference: TableReference
        let from: JoinClause?
        let condition: Expression?
        let with: WithClause?
        switch request.statement {
        case .update(let update):
            (reference, from, condition, with) = (update.table, update.from, update.where, update.with)
        case .delete(let delete):
            (reference, from, condition, with) = (delete.table, nil, delete.where, delete.with)
        default:
            return nil
        }
        let name = reference.alias ?? reference.name.name
        var joins: [Join] = []
        if let from { joins = [Join(JoinOperator(.comma), from.first)] + from.joins }
        // The statement's INDEXED BY / NOT INDEXED names the target's index: it applies when the
        // statement runs on the target, not to the source's pending rows.
        let target = TableReference(QualifiedName(schema: Identifier("main"), Identifier(pendingRowsName)), alias: name)
        let select = SelectStatement(with: with, first: .select(SelectClause(
            columns: [.expression(.column(ColumnReference(table: name, column: Identifier(MigratingTableSQL.identityColumn))), alias: Identifier("r"))],
            from: JoinClause(.table(target), joins: joins), where: condition)))
        return Printer(options: PrinterOptions(numberAnonymousParameters: true)).print(select)
    }

    /// Runs the plan on the writer, with the app's `arguments` (the listing and moves use some of
    /// its parameters, numbered as in the app's statement). Ferry's statements (the app's
    /// conditions inside them: the policy's function rules hold for every statement). After a
    /// failure the rows table is emptied, the move guard lowered and the triggers resumed.
    func run(on connection: Connection, arguments: StatementArguments) throws(FerryError) {
        try connection.withStatementTrust(.trusted) { () throws(FerryError) in
            let listing = try sqlite(connection.cachedStatement(self.listing))
            try listing.bindAllowingUnused(arguments)
            do throws(FerryError) {
                try sqlite(listing.execute())
            } catch {
                Self.emptyRowsTables(on: connection)
                throw error
            }
            if connection.changes == 0 { return }  // nothing pending to move
            try sqlite(connection.executeCached(Self.suspendRedirectSQL))
            var completed = false
            defer {
                if !completed {
                    try? connection.executeCached(MigrationState.lowerMoveGuardSQL(qualified: true))
                    Self.emptyRowsTables(on: connection)
                }
                try? connection.executeCached(Self.resumeRedirectSQL)
            }
            for move in moves {
                let statement = try sqlite(connection.cachedStatement(move))
                try statement.bindAllowingUnused(arguments)
                try sqlite(statement.execute())
            }
            completed = true
        }
    }

    /// Suspends the redirect triggers while the rows move (`MigratingTableSQL.suspendTable`).
    private static let suspendRedirectSQL = HashedSQL("INSERT INTO temp.\(MigratingTableSQL.suspendTable) VALUES (1)")
    /// Ends the suspension.
    private static let resumeRedirectSQL = HashedSQL("DELETE FROM temp.\(MigratingTableSQL.suspendTable)")

    private static func emptyRowsTables(on connection: Connection) {
        for table in MigratingTableSQL.rowsTables { try? connection.executeCached("DELETE FROM temp.\(table)") }
    }
}
