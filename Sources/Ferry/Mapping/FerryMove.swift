import FerrySQLite

/// Ferry's own inserts of source rows into a target, and what SQLite says of them.
enum FerryMove {
    /// Runs `copy` (Ferry's own inserts into a target) with the redirect triggers suspended and the
    /// guard raised that keeps the app's INSERT triggers quiet (a failure rolls both back with the
    /// enclosing transaction or savepoint).
    static func guarding<T>(on db: Connection, _ copy: () throws(FerryError) -> T) throws(FerryError) -> T {
        try sqlite(db.execute("INSERT INTO temp.\(MigratingTableSQL.suspendTable) VALUES (\(MigratingTableSQL.stepperSuspension))"))
        try sqlite(db.execute(MigrationState.raiseMoveGuardSQL))
        let result = try copy()
        try sqlite(db.execute(MigrationState.lowerMoveGuardSQL(qualified: true)))
        try sqlite(db.execute("DELETE FROM temp.\(MigratingTableSQL.suspendTable)"))
        return result
    }

    /// A row conflicts with a row already in the target (the quarantine policy applies). Any other
    /// failure (a trigger's RAISE, NOT NULL, CHECK, I/O) is not a data conflict and must not hide rows.
    static func isUniquenessConflict(_ error: FerryError) -> Bool {
        guard let code = error.resultCode else { return false }
        return code == .constraintUnique || code == .constraintPrimaryKey || code == .constraintRowID
    }

    /// True when moving the source row `identity` of `mapping` into the target now would violate one
    /// of the target's uniqueness constraints: asked of SQLite, by moving the row under a savepoint
    /// that is then rolled back, so that every constraint counts as the finished table would apply it
    /// (partial and expression indexes, the target's affinities and collations), not as a
    /// re-implementation would guess. Call it inside a transaction.
    static func wouldConflict(_ mapping: ResolvedMapping, identity: Value, on db: Connection) throws(FerryError) -> Bool {
        try sqlite(db.execute("SAVEPOINT ferry_conflict_probe"))
        var conflict = false
        do {
            try guarding(on: db) { () throws(FerryError) in
                try sqlite(db.execute(mapping.insertSelectHead() + " WHERE \(mapping.sourceRow(identifiedBy: "?1"))", [identity]))
            }
        } catch where isUniquenessConflict(error) {
            conflict = true
        } catch {
            // Not a conflict (NOT NULL, CHECK, a trigger's RAISE): the stepper reports it when it moves the row.
        }
        try sqlite(db.execute("ROLLBACK TO ferry_conflict_probe"))
        try sqlite(db.execute("RELEASE ferry_conflict_probe"))
        return conflict
    }
}
