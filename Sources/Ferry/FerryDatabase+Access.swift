import FerrySQLite

/// The app's reads and writes: every statement goes through the rewriter.
///
/// Each comes in two forms: a body that throws only `FerryError` gets a typed
/// `throws(FerryError)`; any other body may throw the app's own errors, which pass unchanged
/// beside Ferry's (always `FerryError`). Which form a call takes is Swift's choice, from the
/// closure's type as written:
///
/// - `{ db throws(FerryError) in ... }`, and a body that throws nothing, take the typed form
///   (the untyped one is disfavored: it is picked only when the typed one cannot take the body).
/// - `{ db in try ... }` takes the untyped form even when every call in it throws `FerryError`:
///   Swift gives a closure that does not spell its error type `throws(any Error)` (typed-throws
///   inference for closures, SE-0413, is not in the language yet). Spell `throws(FerryError)`.
/// - In an `async` function or closure, `try await db.read { ... }` takes the async form, which
///   runs the body off Swift's cooperative threads and honours task cancellation. In top-level
///   code (`main.swift`) Swift picks the blocking form even after `await` (it chooses overloads
///   there as in synchronous code, and warns "no 'async' operations occur within 'await'"): the
///   body runs, blocking the main thread; call from an `async` function or a `Task` for the
///   async form.
extension FerryDatabase {
    /// Runs `body` with a read-only handle on a reader connection, in one snapshot.
    @_disfavoredOverload
    public func read<T>(_ body: (FerryConnection) throws -> T) throws -> T {
        try FerryError.surfacing { try pool.read { db in try access.readerHandle(on: db, onWriter: pool.readsUseWriter).scoped(body) } }
    }

    /// `read(_:)` for a body that throws only `FerryError`.
    public func read<T>(_ body: (FerryConnection) throws(FerryError) -> T) throws(FerryError) -> T {
        try pool.read { db throws(FerryError) in try access.readerHandle(on: db, onWriter: pool.readsUseWriter).scoped(body) }
    }

    /// Runs `body` in a write transaction on the writer (committed when it returns, rolled back
    /// when it throws). Migration steps never run inside it.
    @_disfavoredOverload
    public func write<T>(_ body: (FerryConnection) throws -> T) throws -> T {
        try FerryError.surfacing {
            try pool.writeWithoutTransaction { db in
                try prepareAppWrite(on: db)
                defer { afterAppWrite(on: db) }
                let kind = try appTransactionKind(on: db)
                return try db.transaction(kind) { try beginAppWrite(kind, on: db).scoped(body) }
            }
        }
    }

    /// `write(_:)` for a body that throws only `FerryError`.
    public func write<T>(_ body: (FerryConnection) throws(FerryError) -> T) throws(FerryError) -> T {
        try pool.writeWithoutTransaction { db throws(FerryError) in
            try prepareAppWrite(on: db)
            defer { afterAppWrite(on: db) }
            let kind = try appTransactionKind(on: db)
            return try db.transaction(kind) { () throws(FerryError) in try beginAppWrite(kind, on: db).scoped(body) }
        }
    }

    /// Async form of `read(_:)`.
    @_disfavoredOverload
    public func read<T: Sendable>(_ body: @escaping @Sendable (FerryConnection) throws -> T) async throws -> T {
        try await FerryError.surfacing {
            try await pool.read { [access, pool] db in try access.readerHandle(on: db, onWriter: pool.readsUseWriter).scoped(body) }
        }
    }

    /// Async form of `read(_:)` for a body that throws only `FerryError`.
    public func read<T: Sendable>(_ body: @escaping @Sendable (FerryConnection) throws(FerryError) -> T) async throws(FerryError) -> T {
        try await pool.read { [access, pool] db throws(FerryError) in try access.readerHandle(on: db, onWriter: pool.readsUseWriter).scoped(body) }
    }

    /// Async form of `write(_:)`.
    @_disfavoredOverload
    public func write<T: Sendable>(_ body: @escaping @Sendable (FerryConnection) throws -> T) async throws -> T {
        try await FerryError.surfacing {
            try await pool.writeWithoutTransaction { [self] db in
                try prepareAppWrite(on: db)
                defer { afterAppWrite(on: db) }
                let kind = try appTransactionKind(on: db)
                return try db.transaction(kind) { try beginAppWrite(kind, on: db).scoped(body) }
            }
        }
    }

    /// Async form of `write(_:)` for a body that throws only `FerryError`.
    public func write<T: Sendable>(_ body: @escaping @Sendable (FerryConnection) throws(FerryError) -> T) async throws(FerryError) -> T {
        try await pool.writeWithoutTransaction { [self] db throws(FerryError) in
            try prepareAppWrite(on: db)
            defer { afterAppWrite(on: db) }
            let kind = try appTransactionKind(on: db)
            return try db.transaction(kind) { () throws(FerryError) in try beginAppWrite(kind, on: db).scoped(body) }
        }
    }

    /// How the app's write transaction begins. `BEGIN IMMEDIATE` takes the write lock of every
    /// attached database, Ferry's sources included, which the app's writes never write (a few
    /// microseconds per write, and a wait whenever another process writes a source). With only
    /// Ferry's sources attached the transaction begins deferred, and `beginAppWrite` takes main's
    /// write lock alone at once; with databases the app attached itself, or on a read-only target
    /// (where `BEGIN IMMEDIATE` lets a body that only reads run), it stays immediate.
    private func appTransactionKind(on db: Connection) throws(FerryError) -> Connection.TransactionKind {
        let attached = try sqlite(db.schemaNames()).dropFirst(2)  // main, temp
        guard !attached.isEmpty, attached.allSatisfy({ $0.hasPrefix(SourceRecord.schemaPrefix) }), !isReadOnly else { return .immediate }
        return .deferred
    }

    /// The start of the app's write transaction begun `kind`, before its first statement: for
    /// `.deferred`, takes main's write lock (so a write after a read never fails to upgrade; SQL's
    /// `changes()` still reports the app's last write); then the writer's handle, for main's schema
    /// as the transaction sees it.
    private func beginAppWrite(_ kind: Connection.TransactionKind, on db: Connection) throws(FerryError) -> FerryConnection {
        if kind == .deferred {
            let visible = db.visibleChanges
            defer { db.reportChanges(visible) }
            try sqlite(db.executeCached(MigrationState.takeMainWriteLockSQL))
        }
        return try access.writerHandle(on: db)
    }

    /// Before the app's write transaction: the writer's temp DDL (outside the transaction), then
    /// the WAL's backpressure.
    private func prepareAppWrite(on db: Connection) throws(FerryError) {
        try access.prepareWriter(on: db)
        // The app's edits wait for the next step; a long wait without one writes them here.
        if appEdits.count > Self.appEditsHeldAtMost { try appEdits.persist(on: db) }
        relieveWALBacklog(on: db)
    }

    /// The app's edits of moved rows held in memory (`AppEditLog`) before an app write writes them.
    static let appEditsHeldAtMost = 100_000

    /// Before the app's write transaction, outside any other: when a WAL holds more than twice
    /// `Options.walSizeLimit`, waits (at most `appWriteBacklogTimeout`) for a catch-up checkpoint,
    /// as a step does at the limit, so that this transaction restarts the log.
    ///
    /// SQLite restarts a log only when a write begins after a checkpoint copied every frame, and
    /// the background checkpoints always finish a little behind a writer that does not pause: an
    /// app writing single rows in a loop grew the WAL by 350 MB in 2 s, migrating or not. The
    /// catch-up copies only what the background checkpoints have not copied yet (a few hundred
    /// frames), so the wait is short (2-4 ms) and comes once per `walSizeLimit` of log. While
    /// steps run they wait at the limit and keep the log under twice it, so the app's writes do
    /// not wait for them. A reader holding an old snapshot keeps the log from restarting; the
    /// checkpoint then ends at once, having copied what it could, and the write goes on; later
    /// writes wait again only once the log grew by another limit
    /// (`Checkpointer.relieveBacklogBeforeAppWrite(timeout:)`).
    private func relieveWALBacklog(on db: Connection) {
        guard !db.isInTransaction else { return }
        runner.checkpointer.relieveBacklogBeforeAppWrite(timeout: Self.appWriteBacklogTimeout)
    }

    /// The longest an app write waits for a catch-up checkpoint (`relieveWALBacklog(on:)`): a
    /// checkpoint that takes longer (a slow disk's sync) goes on in the background, and the write
    /// runs without restarting the log.
    static let appWriteBacklogTimeout = Duration.milliseconds(250)

    /// After the app's transaction: reload the migration state when it ended a table's migration
    /// or added a column to one (committed or rolled back: the persisted state is the truth either
    /// way), note the write for the steps (`WriterContention`), and checkpoint.
    private func afterAppWrite(on db: Connection) {
        runner.contention.noteAppWrite()  // a step that could go on moving stays short while the app writes
        if access.takeEngineStateChanged() {
            do { try engine.load(on: db) } catch { hub.send(.error(error)) }
        }
        appEdits.transactionEnded(on: db)  // (a rolled-back transaction's edits are gone already)
        runner.checkpointer.checkpointIfNeeded()
        commits.send()  // observed queries run again (a rolled-back write finds them unchanged)
    }
}
