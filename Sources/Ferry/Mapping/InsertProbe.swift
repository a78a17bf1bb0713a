import FerrySQLite

/// The insert probe: how the redirect insert trigger of a migrating table looks pending rows up
/// in the source without naming it.
///
/// SQLite compiles a statement's triggers into it and begins a read transaction on every database
/// they name, at the start of the statement, whether their conditions let them run or not. A
/// trigger on the target that looks the source up would make every app insert open the source
/// file (2.5-3 µs of an insert that costs 4-6 µs more while migrating, measured with
/// ferry-bench). So the trigger on the target tests only constants and the target: whether the
/// app row's rowid lies in the source's rowid range, and whether a source row lies above the
/// target's largest rowid. When one holds, it calls `ferry_redirect_probe(target, rowid)`, a
/// procedure (`Connection.defineProcedure`) that inserts the rowid into a temp view that stores
/// nothing; the view's INSTEAD OF trigger runs the look-ups and moves of the trigger it stands
/// for. The procedure's statement is compiled, and opens the source, only when it is called.
///
/// The procedure runs only from Ferry's redirect triggers in the app's statements
/// (`AccessPolicy`). In Ferry's own statements, whose inserts into a target are moves that run
/// with the redirect triggers suspended, the call is compiled out: SQLite keeps a statement
/// journal for a statement that writes several rows and may call a function, which would slow
/// the stepper's copies (`Stepper.copyingSetBased`).
extension MigratingTableSQL {
    /// The procedure the insert trigger calls.
    static let insertProbeProcedure = "ferry_redirect_probe"

    /// The temp view of `target`'s probe: it shows one NULL column `r` and stores nothing.
    static func insertProbeView(target: String) -> String { "ferry_redirect_probe_\(target)" }

    /// The probe view's INSTEAD OF trigger.
    var probeTriggerName: String { "ferry_redirect_moves_\(mapping.targetName)" }

    /// What the procedure runs for `target`, with the app row's rowid as `?1`.
    static func insertProbeSQL(target: String) -> String { "INSERT INTO temp.\(q(insertProbeView(target: target)))(r) VALUES (?1)" }

    /// Defines the procedure on `db`, once (every connection of a `FerryDatabase`; the writer's
    /// redirect triggers call it).
    static func defineInsertProbe(on db: Connection) throws(FerryError) {
        guard !db.hasProcedure(insertProbeProcedure) else { return }
        try sqlite(db.defineProcedure(insertProbeProcedure) { db, arguments throws(SQLiteError) in
            guard arguments.count == 2, case .text(let target) = arguments[0] else {
                throw .misuse("\(insertProbeProcedure) takes a target's name and a rowid")
            }
            try db.withStatementTrust(.trusted) { () throws(SQLiteError) in
                try db.cachedStatement(insertProbeSQL(target: target)).execute(.positional([arguments[1]]))
            }
        })
    }
}
