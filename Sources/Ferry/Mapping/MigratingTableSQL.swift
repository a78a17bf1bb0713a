import FerrySQL
import FerrySQLite

/// The SQL that makes a migrating table look finished: the union read, the pending-row condition,
/// and the statements that move chosen source rows into the target ahead of the stepper.
///
/// Everything is evaluated inside SQLite against one snapshot of the target: the cursor and the
/// moved set are read by subqueries from Ferry's persisted state (`MigrationState`'s SQL), never baked in from Swift memory,
/// so a reader sees the rows, the cursor and the moved set of the same commit.
struct MigratingTableSQL: Sendable {
    let mapping: ResolvedMapping

    /// The value of a target column in the source arm: its feed (a source column or an expression
    /// over the source row), or the target's default; under the target column's affinity when
    /// the value may not have it (a source column of another type, an expression, a default), as
    /// the finished table stores it (`Connection.affinityFunction`).
    private func sourceValue(of column: TableShape.Column) -> String {
        let value: String
        let affinity = ColumnAffinity(declaredType: column.declaredType)
        if let feed = mapping.feed(of: column.name) {
            value = mapping.sourceValue(of: feed)
            if case .sourceColumn(let name) = feed.value {
                // The source's rowid (no column of that name) is an integer: it keeps a lookup by
                // rowid where the target's affinity keeps integers as they are.
                guard let source = mapping.sourceShape.column(named: name) else {
                    return affinity == .text || affinity == .real ? "\(Connection.affinityFunction)(\(value), '\(affinity.rawValue)')" : value
                }
                if ColumnAffinity(declaredType: source.declaredType) == affinity { return value }
            }
        } else {
            guard let defaultSQL = column.defaultSQL else { return "NULL" }
            value = "(\(defaultSQL))"
        }
        return affinity == .blob ? value : "\(Connection.affinityFunction)(\(value), '\(affinity.rawValue)')"
    }

    /// The target's columns whose pending value is computed (`sourceValue(of:)` applies an affinity,
    /// or an expression or default feeds them), so that the union's column has no affinity: a
    /// comparison with one is given the finished column's explicitly (`AffinityComparisons`).
    /// Lower-cased column name → the affinity its comparisons apply; BLOB columns apply none.
    var reshapedColumns: [String: ComparisonAffinity] {
        var result: [String: ComparisonAffinity] = [:]
        for column in mapping.target.columns where !column.isGenerated {
            let affinity = ColumnAffinity(declaredType: column.declaredType)
            guard affinity != .blob else { continue }
            if let feed = mapping.feed(of: column.name), case .sourceColumn(let name) = feed.value {
                guard let source = mapping.sourceShape.column(named: name) else { continue }  // the rowid: an integer with affinity
                if ColumnAffinity(declaredType: source.declaredType) == affinity { continue }
            }
            result[column.name.lowercased()] = affinity == .text ? .text : .numeric
        }
        return result
    }

    /// The union of target rows and pending source rows, shaped like the target.
    /// - Parameter rowidNames: rowid spellings the statement uses (`rowid`, `oid`, `_rowid_`),
    ///   exposed as extra columns so `SELECT rowid FROM T` keeps working.
    /// - Parameter hint: the app's `INDEXED BY` / `NOT INDEXED`, applied to the target's arm (the
    ///   index is the target's; the source arm reads another table).
    /// - Parameter forFerry: the read is one of Ferry's own helper queries, which select pending
    ///   source rows by their rowid: on a target `WITHOUT ROWID`, its rows then show a NULL rowid.
    ///   (The app's statements see no rowid there, as on the finished table.)
    func unionSelect(exposingRowidAs rowidNames: [String], hint: IndexHint? = nil, forFerry: Bool = false) throws(RewriteError) -> String {
        try unionArms(exposingRowidAs: rowidNames, hint: hint, forFerry: forFerry).joined(separator: " UNION ALL ")
    }

    /// The arms over which a whole-table aggregate of the app's is computed and combined
    /// (`AggregateSplit`): the union's, the pending rows' columns under the target's collations
    /// (the union compares under its first arm's, the target's). Nil for a target with generated
    /// columns, whose pending rows compute them in nested queries.
    func aggregateArms(exposingRowidAs rowidNames: [String]) throws(RewriteError) -> AggregateArms? {
        guard !mapping.target.columns.contains(where: \.isGenerated) else { return nil }
        let collations = declaredCollations
        return AggregateArms(arms: try unionArms(exposingRowidAs: rowidNames, collations: collations), collations: collations)
    }

    /// The collation each target column declares (lower-cased column name → collation), from its CREATE TABLE.
    var declaredCollations: [String: String] {
        guard case .createTable(let statement)? = try? Parser.parseStatement(mapping.target.sql),
              case .columns(let definitions, _, _) = statement.definition
        else { return [:] }
        var result: [String: String] = [:]
        for definition in definitions {
            for constraint in definition.constraints {
                if case .collate(let name) = constraint.kind { result[definition.name.name.lowercased()] = name.name }
            }
        }
        return result
    }

    /// The union's arms: the target's rows, then the pending source rows (their columns compared
    /// under `collations`, when given: BINARY for a column not listed).
    private func unionArms(exposingRowidAs rowidNames: [String], hint: IndexHint? = nil, forFerry: Bool = false,
                           collations: [String: String]? = nil) throws(RewriteError) -> [String] {
        let columns = mapping.target.columns
        // A real column named `oid` (or `rowid`, `_rowid_`) shadows that spelling of the rowid, as
        // on the finished table: the union exposes the column, not the rowid, under that name. So
        // do Ferry's own reads (a write's selection holds the app's text, whose `y.rowid` must read
        // the column): they find a row by its identity, which they name apart.
        let unshadowed = mapping.target.unshadowedRowidSpellings
        let rowidNames = forFerry ? rowidNames.filter { unshadowed.contains($0.lowercased()) }
            : mapping.target.hasRowid ? rowidNames.filter { unshadowed.contains($0.lowercased()) } : []
        let targetRowid = mapping.target.hasRowid ? mapping.target.rowidName : "NULL"
        let targetItems = rowidNames.map { "\(targetRowid) AS \($0)" } + columns.map { q($0.name) }
        // A pending row's rowid: the source's; from a source without rowid, the finished table's
        // (its INTEGER PRIMARY KEY's feed), or for Ferry's queries the row's identity.
        let pendingRowid: String
        if forFerry {
            pendingRowid = mapping.sourceIdentity
        } else if let value = pendingRowidValue {
            pendingRowid = value
        } else if rowidNames.isEmpty {
            pendingRowid = "NULL"
        } else {
            throw RewriteError.refused(table: mapping.targetName, reason: "its source has no rowid, so the rows not moved yet get theirs when "
                + "they move (the target has no INTEGER PRIMARY KEY fed by the source); read rowids once the migration finished")
        }
        let hintSQL: String
        switch hint {
        case .indexedBy(let index): hintSQL = " INDEXED BY \(q(index.name))"
        case .notIndexed: hintSQL = " NOT INDEXED"
        case nil: hintSQL = ""
        }
        let sourceArm = try pendingRows(exposingRowidAs: rowidNames, pendingRowid: pendingRowid, collations: collations)
        return ["SELECT \(targetItems.joined(separator: ", ")) FROM \(mapping.qualifiedTarget)\(hintSQL)", sourceArm]
    }

    /// The pending source rows shaped like the target, with their identity (rowid, or row key) as
    /// the column `rowid`: the source arm of Ferry's own reads (`unionSelect(forFerry: true)`). A
    /// write's choice of rows to move reads it alone, since no target row is pending.
    /// Its columns compare under the target's declared collations (BINARY where none is declared).
    /// The identity is also the column `identityColumn`, which no app column can shadow: a real
    /// column named `rowid` (or `oid`, `_rowid_`) is then the app's, as on the finished table, and
    /// Ferry still reads the identity.
    func pendingSelect() throws(RewriteError) -> String {
        let spellings = mapping.target.unshadowedRowidSpellings
        // Each column compares under the target column's collation, as the finished table's would:
        // a write's condition picks the pending rows the finished table's statement would touch.
        return try pendingRows(exposingRowidAs: [Self.identityColumn] + spellings, pendingRowid: mapping.sourceIdentity, named: true,
                               collations: declaredCollations)
    }

    /// The name of the pending rows' identity in `pendingSelect()`.
    static let identityColumn = "ferry_identity"

    /// The source arm of the union: the pending rows, each column its feed's value (named after
    /// the target's column when `named`: a union takes its names from the target's arm).
    /// With `collations`, each column compares under the collation listed for it (BINARY when none is), and is named.
    private func pendingRows(exposingRowidAs rowidNames: [String], pendingRowid: String, named: Bool = false,
                             collations: [String: String]? = nil) throws(RewriteError) -> String {
        if mapping.target.columns.contains(where: \.isGenerated) {
            return try generatingSourceArm(exposingRowidAs: rowidNames, pendingRowid: pendingRowid, collations: collations)
        }
        let values = mapping.target.columns.map { column in
            if let collations {
                return "\(sourceValue(of: column)) COLLATE \(q(collations[column.name.lowercased()] ?? "BINARY")) AS \(q(column.name))"
            }
            return named ? "\(sourceValue(of: column)) AS \(q(column.name))" : sourceValue(of: column)
        }
        let sourceItems = rowidNames.map { "\(pendingRowid) AS \($0)" } + values
        return "SELECT \(sourceItems.joined(separator: ", ")) FROM \(mapping.qualifiedSource) WHERE \(mapping.pendingCondition)"
    }

    /// The source arm of a target with generated columns: the pending rows' ordinary columns
    /// first, then each generated column computed from them by its own expression (a generated
    /// column that reads others comes one level further out), as SQLite computes it on the
    /// finished table.
    /// With `collations`, each column compares under the collation listed for it (BINARY when none is).
    private func generatingSourceArm(exposingRowidAs rowidNames: [String], pendingRowid: String,
                                     collations: [String: String]? = nil) throws(RewriteError) -> String {
        let columns = mapping.target.columns
        let expressions = try generationExpressions()
        let rowidColumn = "ferry_source_rowid"
        let ordinary = columns.filter { !$0.isGenerated }
        let baseItems = ["\(pendingRowid) AS \(rowidColumn)"] + ordinary.map { "\(sourceValue(of: $0)) AS \(q($0.name))" }
        var query = "SELECT \(baseItems.joined(separator: ", ")) FROM \(mapping.qualifiedSource) WHERE \(mapping.pendingCondition)"
        let generatedNames = Set(columns.filter(\.isGenerated).map { $0.name.lowercased() })
        var available = Set<String>()
        var remaining = columns.filter(\.isGenerated)
        while !remaining.isEmpty {
            let ready = remaining.filter { column in
                expressions[column.name.lowercased()].map { $0.references.intersection(generatedNames).isSubset(of: available) } ?? false
            }
            guard !ready.isEmpty else {
                throw RewriteError.refused(table: mapping.targetName,
                                           reason: "the generated columns \(remaining.map(\.name).joined(separator: ", ")) cannot be computed for pending rows")
            }
            let items = ready.map { "(\(expressions[$0.name.lowercased()]!.sql)) AS \(q($0.name))" }
            query = "SELECT *, \(items.joined(separator: ", ")) FROM (\(query))"
            available.formUnion(ready.map { $0.name.lowercased() })
            remaining.removeAll { column in ready.contains { $0.name == column.name } }
        }
        let items = rowidNames.map { "\(rowidColumn) AS \($0)" } + columns.map { column in
            collations.map { "\(q(column.name)) COLLATE \(q($0[column.name.lowercased()] ?? "BINARY")) AS \(q(column.name))" } ?? q(column.name)
        }
        return "SELECT \(items.joined(separator: ", ")) FROM (\(query))"
    }

    /// Each generated column's expression (by lower-cased name) and the columns it reads, from
    /// the target's CREATE TABLE.
    private func generationExpressions() throws(RewriteError) -> [String: (sql: String, references: Set<String>)] {
        guard case .createTable(let statement)? = try? Parser.parseStatement(mapping.target.sql),
              case .columns(let definitions, _, _) = statement.definition
        else {
            throw RewriteError.refused(table: mapping.targetName, reason: "its generated columns cannot be read from its definition")
        }
        var result: [String: (sql: String, references: Set<String>)] = [:]
        for definition in definitions {
            for constraint in definition.constraints {
                guard case .generated(let expression, _, _) = constraint.kind else { continue }
                var references = Set<String>()
                expression.forEachSubexpression { node in
                    if case .column(let reference) = node { references.insert(reference.column.name.lowercased()) }
                }
                result[definition.name.name.lowercased()] = (Printer().print(expression), references)
            }
        }
        return result
    }

    /// The statements that move the source rows listed in `rows` (a table, or a parenthesized
    /// query, with their rowids in a column `r`) into the target and add them to the moved set,
    /// with the move guard raised meanwhile, so the app's INSERT triggers stay quiet. Unqualified
    /// (`qualified: false`) inside trigger bodies. Every move of Ferry's runs them: ahead of an app
    /// write, in the redirect triggers and in the foreign-key triggers; the caller empties `rows`.
    /// The guard is raised only when something reads it: the app's guarded triggers on the target
    /// (looked up as the move runs, so a trigger created in the same transaction counts), or the
    /// redirect insert trigger of a table that tells Ferry's moves by the guard. Otherwise the move
    /// writes no guard row (one page less in the app's commit).
    func moveSequence(rows: String, qualified: Bool) -> [String] {
        let guardReader = mapping.target.hasRowid && mapping.sourceHasRowid ? mapping.targetName : nil
        return [
            MigrationState.raiseMoveGuardSQL(whenRowsIn: rows, qualified: qualified, onlyForAppTriggersOf: guardReader),
            mapping.insertSelectHead(qualifiedTarget: qualified) + " WHERE \(mapping.sourceRows(identifiedIn: rows))",
            MigrationState.recordMovedSQL(target: mapping.targetName, from: rows, qualified: qualified),
            MigrationState.lowerMoveGuardSQL(qualified: qualified),
        ]
    }

    /// `DROP TABLE T` while migrating: drop the target, finish its migration with the cursor above
    /// every source row (the cleanup steps delete the matching ones), forget the moved set.
    var dropStatements: [String] {
        // Every row of T goes: cleanup deletes all the mapping's source rows without counting them first.
        ["DROP TABLE \(mapping.qualifiedTarget)"]
            + MigrationState.finishDroppedSQL(target: mapping.targetName, source: mapping.qualifiedSource,
                                          rowid: mapping.sourceHasRowid ? mapping.sourceRowid : nil)
    }

    // MARK: Redirect triggers

    /// Temp table of source rowids chosen to move (writer connection only).
    static let rowidRowsTable = "ferry_move_rows"
    /// Temp table of the row keys of a source without rowid chosen to move (writer connection only).
    static let keyRowsTable = "ferry_move_keys"
    /// Both.
    static let rowsTables = [rowidRowsTable, keyRowsTable]
    /// The temp table that lists this table's source rows to move.
    var rowsTable: String { mapping.sourceHasRowid ? Self.rowidRowsTable : Self.keyRowsTable }
    /// Temp table that holds a row while Ferry itself inserts into targets (stepper, pre-moves):
    /// the redirect triggers do nothing then.
    static let suspendTable = "ferry_redirect_suspended"

    /// The names of the temp tables the write path uses (`temporaryTablesSQL`), all reserved
    /// (`AccessPolicy.reservedObjectPrefixes`).
    static let temporaryTables = [rowidRowsTable, keyRowsTable, suspendTable, foreignKeyRowsTable]
    /// The temp tables the write path uses.
    static let temporaryTablesSQL = """
        CREATE TEMP TABLE IF NOT EXISTS \(rowidRowsTable)(r INTEGER PRIMARY KEY);
        CREATE TEMP TABLE IF NOT EXISTS \(keyRowsTable)(r PRIMARY KEY) WITHOUT ROWID;
        CREATE TEMP TABLE IF NOT EXISTS \(suspendTable)(x);
        CREATE TEMP TABLE IF NOT EXISTS \(foreignKeyRowsTable)(t TEXT NOT NULL, r INTEGER NOT NULL, PRIMARY KEY (t, r)) WITHOUT ROWID;
        """

    /// Names of the redirect triggers (insert, update, and the insert probe's moves).
    var triggerNames: [String] {
        ["ferry_redirect_insert_\(mapping.targetName)", "ferry_redirect_update_\(mapping.targetName)", probeTriggerName]
    }

    /// Names of the triggers that record the app's edits of moved rows (`editTriggerSQL`).
    var editTriggerNames: [String] {
        ["update", "delete", "replace"].map { "ferry_redirect_edited_\($0)_\(mapping.targetName)" }
    }

    /// Temp triggers on the target that record, in the app's statement, the rows it updates,
    /// deletes or replaces (an insert whose rowid or key a target row holds), by rowid, or by the
    /// digest of their key for a target matched by key (`ResolvedMapping.targetMatchKey`): `verify`
    /// compares those with their source rows no more (`MigrationState.editedRowsTable`). Ferry's
    /// own moves (with the redirect triggers suspended) are not recorded; Ferry never updates or
    /// deletes a target row. Installed while the table migrates and until its source is cleaned.
    /// Empty when verify finds a target row by its values alone (those compare as before).
    func editTriggerSQL() -> [String] {
        let target = mapping.targetName
        // A target row found by its rowid (the source's), or else by its key (the digest of its
        // key's values, as verify computes it from the source row: `sourceMatchKeyDigest`).
        let identity: (_ row: String) -> String
        let sameRow: String
        if mapping.target.hasRowid, pendingRowidValue != nil {
            let rowid = mapping.target.rowidName
            identity = { "\($0).\(rowid)" }
            sameRow = "\(rowid) = NEW.\(rowid)"
        } else if let key = mapping.targetMatchKey {
            identity = { row in "\(RowDigest.function)(" + key.map { "\(row).\(q($0.column))" }.joined(separator: ", ") + ")" }
            sameRow = key.map { "\(q($0.column)) = NEW.\(q($0.column))\($0.collation.map { " COLLATE \(q($0))" } ?? "")" }.joined(separator: " AND ")
        } else {
            return []
        }
        return [
            "CREATE TEMP TRIGGER \(q(editTriggerNames[0])) AFTER UPDATE ON \(mapping.qualifiedTarget) BEGIN\n"
                + MigrationState.recordEditSQL(target: target, rowids: [identity("OLD"), identity("NEW")]) + ";\nEND",
            "CREATE TEMP TRIGGER \(q(editTriggerNames[1])) AFTER DELETE ON \(mapping.qualifiedTarget) BEGIN\n"
                + MigrationState.recordEditSQL(target: target, rowids: [identity("OLD")]) + ";\nEND",
            // A REPLACE deletes the row it replaces without a DELETE trigger (recursive triggers off).
            "CREATE TEMP TRIGGER \(q(editTriggerNames[2])) BEFORE INSERT ON \(mapping.qualifiedTarget) "
                + "WHEN NOT EXISTS (SELECT 1 FROM temp.\(Self.suspendTable)) "
                + "AND EXISTS (SELECT 1 FROM \(q(mapping.target.name)) WHERE \(sameRow)) BEGIN\n"
                + MigrationState.recordEditSQL(target: target, rowids: [identity("NEW")]) + ";\nEND",
        ]
    }

    /// BEFORE INSERT / BEFORE UPDATE temp triggers on the target that move, ahead of the app's row,
    /// every pending source row it would conflict with (same rowid, same value of a unique key), so
    /// the conflict happens exactly as in a finished table. Before an insert, the pending source
    /// row with the largest rowid is moved too when it lies above the target's, so SQLite's next
    /// automatic rowid is the one a finished table would choose and never collides with a source row.
    /// Statements inside trigger bodies may not name a schema: `T`, `ferry_move_rows` and Ferry's
    /// catalog resolve to main and temp by SQLite's search order.
    /// The update trigger fires only for updates that set a column of `keyColumns` (when given):
    /// an update of other columns keeps the row's rowid and keys, which no pending row shares.
    /// - Parameter uniqueKeys: the target's unique keys whose columns all come from the source
    ///   (rowid not included), as `uniqueKeys(of:on:)` reads them on the writer.
    /// - Parameter keyColumns: `keyColumns(of:unique:)`; nil: every update fires the trigger.
    /// - Parameter pendingRowids: `pendingRowidRange(on:)`, read on the connection the triggers
    ///   are for: the look-ups by rowid run only for a rowid in it.
    func triggerSQL(uniqueKeys: [[TableShape.KeyColumn]], keyColumns: [String]? = nil,
                    pendingRowids: PendingRowidRange = .unknown) -> [String] {
        let rows = rowsTable
        let targetRowid = mapping.target.rowidName
        let appRow = conflictTests(newRowid: "NEW.\(targetRowid)", uniqueKeys: uniqueKeys, pendingRowids: pendingRowids)
        let tail = (moveSequence(rows: rows, qualified: false) + ["DELETE FROM \(rows)"])
            .map { $0 + ";" }.joined(separator: "\n")
        let when = "WHEN NOT EXISTS (SELECT 1 FROM temp.\(Self.suspendTable))"
        // A row the update trigger is moving (it sits in the rows table) is Ferry's own insert,
        // not the app's: the insert trigger leaves it alone. (Without a source rowid in the target
        // to compare, the move guard that every move raises tells it.) Tested after the moves
        // needed, which most app inserts answer from constants and the target alone.
        let notMoving = !(mapping.target.hasRowid && mapping.sourceHasRowid) ? MigrationState.appTriggerCondition
            : "NOT EXISTS (SELECT 1 FROM temp.\(rows) WHERE r = NEW.\(targetRowid))"
            + " AND NOT EXISTS (SELECT 1 FROM temp.\(Self.foreignKeyRowsTable) WHERE t = \(sqlString(mapping.targetName.lowercased())) "
            + "AND r = NEW.\(targetRowid))"
        let updateBody = [appRow.conflictSelect, tail].filter { !$0.isEmpty }.joined(separator: "\n")
        let aboveTarget = pendingAboveTarget(pendingRowids)
        let insertTrigger: [String]
        if uniqueKeys.isEmpty, pendingRowids != .unknown {
            // The insert probe: the trigger on the target names no source, so that an app insert
            // does not begin a read transaction on the source file (SQLite begins one on every
            // database a statement's triggers name, whether they run or not: 2.5-3 µs of an
            // insert). It tests the constants that tell whether a pending row may conflict and
            // only then calls the procedure, whose statement fires the probe's trigger: the same
            // look-ups and moves as the single trigger of the other tables (below), on the rowid
            // passed (see `InsertProbe`).
            let probe = conflictTests(newRowid: "NEW.r", uniqueKeys: [], pendingRowids: pendingRowids)
            let view = q(Self.insertProbeView(target: mapping.targetName))
            let mayConflict = [appRow.rowidGuard, aboveTarget?.guard].compactMap { $0 }
            let rowid = mapping.target.hasRowid ? "NEW.\(targetRowid)" : "NULL"
            let probeBody = [probe.conflictSelect, maxSelect(rows: rows), tail].filter { !$0.isEmpty }.joined(separator: "\n")
            insertTrigger = [
                "CREATE TEMP VIEW IF NOT EXISTS \(view) AS SELECT NULL AS r",
                "CREATE TEMP TRIGGER \(q(probeTriggerName)) INSTEAD OF INSERT ON \(view) "
                    + "WHEN \(Self.movesNeeded(probe.conflictExists + (aboveTarget.map { [$0.test] } ?? []))) BEGIN\n\(probeBody)\nEND",
                "CREATE TEMP TRIGGER \(q(triggerNames[0])) BEFORE INSERT ON \(mapping.qualifiedTarget) "
                    + "\(when) AND \(Self.movesNeeded(mayConflict)) AND \(notMoving) BEGIN\n"
                    + "SELECT \(Self.insertProbeProcedure)(\(sqlString(mapping.targetName)), \(rowid));\nEND",
            ]
        } else {
            let insertBody = [appRow.conflictSelect, maxSelect(rows: rows), tail].filter { !$0.isEmpty }.joined(separator: "\n")
            insertTrigger = [
                "CREATE TEMP TRIGGER \(q(triggerNames[0])) BEFORE INSERT ON \(mapping.qualifiedTarget) "
                    + "\(when) AND \(Self.movesNeeded(appRow.conflictExists + (aboveTarget.map { [$0.test] } ?? []))) AND \(notMoving) BEGIN\n"
                    + "\(insertBody)\nEND",
            ]
        }
        return insertTrigger + [
            "CREATE TEMP TRIGGER \(q(triggerNames[1])) BEFORE UPDATE\(keyColumns.map { " OF " + $0.map(q).joined(separator: ", ") } ?? "") "
                + "ON \(mapping.qualifiedTarget) \(when) AND \(Self.movesNeeded(appRow.conflictExists)) BEGIN\n"
                + "\(updateBody)\nEND",
        ]
    }

    /// The look-ups of the pending rows a new row conflicts with, its rowid spelled `newRowid`
    /// (and its unique keys' columns `NEW.column`): `conflictSelect` lists them in the rows table,
    /// `conflictExists` tests whether there is one, each look-up by rowid after `rowidGuard`, the
    /// test of the constants that tell whether it may find one (nil when it never runs, or when
    /// the range is not known).
    private func conflictTests(newRowid: String, uniqueKeys: [[TableShape.KeyColumn]], pendingRowids: PendingRowidRange)
        -> (conflictSelect: String, conflictExists: [String], rowidGuard: String?) {
        let rowidConflict = pendingRowidValue.map { "\($0) = \(newRowid)" }
        let keyConflicts = uniqueKeys.map { key in
            // Compared under the index's collation, which decides what conflicts (the source's
            // index serves the look-up when its column has the same).
            "(" + key.map { key in
                "\(mapping.qualifiedSource).\(q(mapping.feed(of: key.column)?.sourceColumn ?? key.column)) = NEW.\(q(key.column)) COLLATE \(q(key.collation))"
            }.joined(separator: " AND ") + ")"
        }
        let conflicts = (rowidConflict.map { [$0] } ?? []) + keyConflicts
        // No key to look up (a WITHOUT ROWID target keyed by an expression): a conflict surfaces
        // when the stepper moves the row (quarantine).
        let conflictSelect = conflicts.isEmpty ? "" : "INSERT INTO \(rowsTable)(r) SELECT \(mapping.sourceIdentity) FROM \(mapping.qualifiedSource) "
            + "WHERE \(mapping.pendingCondition) AND (\(conflicts.joined(separator: " OR ")));"
        // The bodies run only when a pending row must move (see `movesNeeded`). The look-up by
        // rowid runs only for a rowid some source row has (an automatic rowid shows as -1 here).
        var conflictExists: [String] = []
        var rowidGuard: String?
        if let rowidConflict {
            let guardCondition = { (range: ClosedRange<Int64>) in "\(newRowid) BETWEEN \(range.lowerBound) AND \(range.upperBound)" }
            if let lookUp = pendingRowids.guarding(
                "EXISTS (SELECT 1 FROM \(mapping.qualifiedSource) WHERE \(mapping.pendingCondition) AND \(rowidConflict))", when: guardCondition) {
                conflictExists.append(lookUp)
            }
            rowidGuard = pendingRowids.condition(guardCondition)
        }
        if !keyConflicts.isEmpty {
            conflictExists.append("EXISTS (SELECT 1 FROM \(mapping.qualifiedSource) WHERE \(mapping.pendingCondition) "
                + "AND (\(keyConflicts.joined(separator: " OR "))))")
        }
        return (conflictSelect, conflictExists, rowidGuard)
    }

    /// Lists in `rows` the pending source row with the largest rowid in the finished table, when
    /// it lies above the target's: SQLite's next automatic rowid is then the finished table's. Empty
    /// for a target without rowid, and one whose pending rows get theirs when they move.
    private func maxSelect(rows: String) -> String {
        guard let value = pendingRowidValue else { return "" }
        return "INSERT INTO \(rows)(r) SELECT k FROM (SELECT \(mapping.sourceIdentity) AS k, \(value) AS v FROM \(mapping.qualifiedSource) "
            + "WHERE \(mapping.pendingCondition) ORDER BY \(value) DESC LIMIT 1) "
            + "WHERE v > ifnull((SELECT max(\(mapping.target.rowidName)) FROM \(mapping.qualifiedTarget)), \(MigrationState.minimumRowid)) "
            + "AND k NOT IN (SELECT r FROM \(rows));"
    }

    /// A redirect trigger's condition, after its other tests: one of `reasons` (existence tests)
    /// holds, so some pending row must move ahead of the app's row. Most app writes need no move
    /// (a new row above every source row, keys no pending row has): the body, whose statements
    /// would each run for nothing, then does not run. Measured with ferry-bench: an app insert
    /// while migrating took 39 µs with the body always running, 33 µs with this condition (20 µs
    /// into the finished table).
    private static func movesNeeded(_ reasons: [String]) -> String {
        reasons.isEmpty ? "0" : "(" + reasons.joined(separator: " OR ") + ")"
    }

    /// `test`: true when a pending source row would have a rowid above every target row (the
    /// insert trigger then moves the largest one ahead of the app's row), looked up only when the
    /// largest rowid of `pendingRowids` lies above the target's; `guard` is that condition alone
    /// (nil when the range is not known). Nil when the target chooses no automatic rowid, or no
    /// row can be pending.
    private func pendingAboveTarget(_ pendingRowids: PendingRowidRange) -> (test: String, guard: String?)? {
        guard let value = pendingRowidValue else { return nil }
        let source = mapping.qualifiedSource
        let targetMax = "ifnull((SELECT max(\(mapping.target.rowidName)) FROM \(mapping.qualifiedTarget)), \(MigrationState.minimumRowid))"
        let above = { (range: ClosedRange<Int64>) in "\(range.upperBound) > \(targetMax)" }
        let aboveGuard = pendingRowids.condition(above)
        guard mapping.sourceHasRowid else {
            // The largest pending row's, as the body finds it.
            return pendingRowids.guarding("EXISTS (SELECT 1 FROM (SELECT \(value) AS v FROM \(source) WHERE \(mapping.pendingCondition) "
                + "ORDER BY \(value) DESC LIMIT 1) WHERE v > \(targetMax))", when: above).map { ($0, aboveGuard) }
        }
        // One range look-up above the larger of the target's largest rowid and the cursor (a single
        // bound: given two, SQLite would scan from one and test the other row by row). The larger
        // is chosen by CASE, not by the function max(): a function call in a trigger's WHEN makes
        // every statement that fires the trigger open a statement journal, the stepper's
        // `INSERT OR ROLLBACK` copies included (`Stepper.copyingSetBased`).
        let cursor = MigrationState.cursorSQL(target: mapping.targetName)
        return pendingRowids.guarding("EXISTS (SELECT 1 FROM \(source) WHERE \(value) > (CASE WHEN \(targetMax) > \(cursor) THEN \(targetMax) ELSE \(cursor) END) "
            + "AND \(MigrationState.notMovedCondition(target: mapping.targetName, rowid: mapping.sourceIdentity)) AND \(mapping.filterCondition))",
            when: above).map { ($0, aboveGuard) }
    }

    /// The rowid a pending source row has in the finished table, over the source row: the source's
    /// rowid; from a source without rowid, the feed of the target's INTEGER PRIMARY KEY. Nil when
    /// the target has no rowid, or when the row gets its rowid as it moves.
    var pendingRowidValue: String? {
        guard mapping.target.hasRowid else { return nil }
        if mapping.sourceHasRowid { return mapping.sourceRowid }
        return mapping.target.rowidAliasColumn.flatMap { mapping.feed(of: $0) }.map { mapping.sourceValue(of: $0) }
    }

    /// The columns an update must set to be able to conflict with a pending row: the rowid (every
    /// spelling, and the column that aliases it) and the columns of the unique keys. Nil when the
    /// target has a partial unique index, whose rows an update of any column may bring into it.
    /// - Parameter unique: `uniqueIndexes(of:on:)`.
    static func keyColumns(of mapping: ResolvedMapping, unique: (keys: [[TableShape.KeyColumn]], hasPartialIndex: Bool)) -> [String]? {
        if unique.hasPartialIndex { return nil }
        var columns = ["rowid", "oid", "_rowid_"] + (mapping.target.rowidAliasColumn.map { [$0] } ?? [])
        for key in unique.keys {
            for column in key.map(\.column) where !columns.contains(where: { $0.lowercased() == column.lowercased() }) {
                columns.append(column)
            }
        }
        return columns
    }

    /// Reads the target's unique keys (rowid excluded) whose columns all copy a source column,
    /// each column with the collation the key compares it under.
    static func uniqueKeys(of mapping: ResolvedMapping, on db: Connection) throws(FerryError) -> [[TableShape.KeyColumn]] {
        try uniqueIndexes(of: mapping, on: db).keys
    }

    /// `uniqueKeys(of:on:)`, and whether any unique index of the target is partial (a `WHERE`),
    /// from one read of its index list.
    static func uniqueIndexes(of mapping: ResolvedMapping, on db: Connection) throws(FerryError)
        -> (keys: [[TableShape.KeyColumn]], hasPartialIndex: Bool) {
        var keys: [[TableShape.KeyColumn]] = []
        var hasPartialIndex = false
        let copied = Set(mapping.feeds.filter { $0.sourceColumn != nil }.map { $0.column.lowercased() })
        for index in try sqlite(db.fetchAll("PRAGMA main.index_list(\(q(mapping.target.name)))")) {
            guard try sqlite(index.column(2, as: Int.self)) == 1 else { continue }
            if try sqlite(index.column(4, as: Int.self)) == 1 { hasPartialIndex = true }
            let columns = try TableShape.keyColumns(ofIndex: try sqlite(index.column(1)), schema: "main", on: db)
            // Expression keys, and keys over columns fed by expressions, cannot be looked up in the
            // source without a scan; a conflict on one surfaces when the stepper moves the row
            // (quarantine). Documented in Docs/Limitations.md.
            guard !columns.isEmpty, columns.allSatisfy({ $0 != nil && copied.contains($0!.column.lowercased()) }) else { continue }
            keys.append(columns.map { $0! })
        }
        return (keys, hasPartialIndex)
    }
}
