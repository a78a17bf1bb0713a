import FerrySQLite

/// What the app's connection runs for one statement while tables migrate, decided once per SQL
/// text by `StatementRedirector` (and cached): the work that prepares the statement, the statement
/// itself, and what follows once it ran. `FerryConnection` executes it; nothing else travels
/// between the two.
struct StatementPlan: Sendable {
    /// What runs first, in the statement's transaction and invisibly to the app (writer only).
    var preparation: Preparation?
    /// The app's statement with every read of a migrating table replaced by its union.
    var statement: HashedSQL
    /// True when the statement names no migrating table and runs as written.
    var isUnchanged: Bool
    /// What the connection must do once the statement ran.
    var effects: [SchemaEffect] = []
    /// A cheaper statement to run when the key the statement pins has moved (see `KeyShortcut`).
    var keyShortcut: KeyShortcut?
    /// The statement over the finished tables' shape (each migrating table read from its target),
    /// compiled (never run) before the statement: its name errors are the finished database's.
    /// Set for statements that read a rowid over a join with a migrating table (see
    /// `StatementRedirector.finishedShape`).
    var finishedShapeCheck: HashedSQL?
    /// True for an `ALTER TABLE`, which makes SQLite rewrite the text of the triggers that name
    /// the table or column (see `AppTriggerWrites.restoreAppTexts`).
    var rewritesTriggerText = false
    /// The migrating tables (lower-cased target names) whose pending rows the plan reads or moves,
    /// directly or through a view: it needs their sources attached.
    var migratingTables: Set<String> = []

    /// A statement that runs as written.
    static func unchanged(_ sql: String) -> StatementPlan {
        StatementPlan(preparation: nil, statement: HashedSQL(sql), isUnchanged: true)
    }

    /// True when the plan has `effect`.
    func has(_ effect: SchemaEffect) -> Bool { effects.contains(effect) }

    /// The column the statement adds to a migrating table, if any.
    var addedColumn: (table: String, column: String)? {
        for case .columnAdded(let table, let column) in effects { return (table, column) }
        return nil
    }

    /// The column the statement renames in a migrating table, if any.
    var renamedColumn: (table: String, old: String, new: String)? {
        for case .columnRenamed(let table, let old, let new) in effects { return (table, old, new) }
        return nil
    }

    /// The migrating (or finished, not yet cleaned) table the statement renames, if any.
    var renamedTable: (old: String, new: String)? {
        for case .tableRenamed(let old, let new) in effects { return (old, new) }
        return nil
    }

    /// The statements of the preparation and the statement, in order, as text (for benchmarks and tests).
    var allSQL: (preparation: [String], statement: String) {
        (preparation?.statements.map(\.sql) ?? [], statement.sql)
    }
}

/// The work a statement needs before it runs, as Ferry's own statements.
enum Preparation: Sendable {
    /// Move the pending source rows the statement may touch into the target (UPDATE, DELETE,
    /// CREATE UNIQUE INDEX: see `RowMovePlan`).
    case moveRows(RowMovePlan)
    /// Drop the redirect triggers of a table before one of its columns is dropped (they name every
    /// column; they are built again after, whether the statement succeeds or not).
    case dropRedirectTriggers([HashedSQL])
    /// End a table's migration (`DROP TABLE` of a migrating target): the statements drop the
    /// target and mark the migration finished; the rest of the transaction treats the table
    /// (lower-cased) as a plain one, and the engine reloads its state afterwards.
    case endMigration(table: String, statements: [HashedSQL])

    /// Its statements, in order.
    var statements: [HashedSQL] {
        switch self {
        case .moveRows(let plan): return [plan.listing] + plan.moves
        case .dropRedirectTriggers(let statements), .endMigration(_, let statements): return statements
        }
    }
}

/// What a statement changes in what Ferry knows, to act on once it ran.
enum SchemaEffect: Sendable, Hashable {
    /// A migrating table's unique keys (or foreign keys) changed: the redirect triggers are built again.
    case uniqueKeysChanged
    /// Main's schema changed in a way the redirector depends on (views, columns, names): it is
    /// built again from the transaction's view of the schema.
    case schemaChanged
    /// A trigger on a migrating table was created (or rewritten by SQLite): the app's INSERT
    /// triggers are stored guarded again (`AppTriggerGuard`).
    case triggersChanged
    /// A column of a migrating table was dropped: the engine reloads the table's shape.
    case columnDropped
    /// `ALTER TABLE T ADD COLUMN c` of a migrating table: recorded so no source column ever feeds `c`.
    case columnAdded(table: String, column: String)
    /// `ALTER TABLE T RENAME COLUMN old TO new`: recorded so that `new` keeps `old`'s feed.
    case columnRenamed(table: String, old: String, new: String)
    /// `ALTER TABLE old RENAME TO new` of a migrating or finished-but-not-cleaned table: Ferry's
    /// state follows the new name in the same transaction.
    case tableRenamed(old: String, new: String)
}
