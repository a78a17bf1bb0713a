#if SQLCipher
internal import CSQLCipher
#else
internal import CSQLite
#endif

/// The closure of `Connection.setWALCommitHook(_:)`, kept alive by the connection while SQLite may call it.
final class WALCommitHook {
    let body: (_ schema: String, _ frames: Int) -> Void
    init(_ body: @escaping (_ schema: String, _ frames: Int) -> Void) { self.body = body }
}

extension Connection {
    /// Calls `body` after each commit this connection writes to a database in WAL mode, with the
    /// database's schema name (`main` or an attached one) and the number of frames its WAL now
    /// holds: a count that falls back when a transaction restarts the log after a complete
    /// checkpoint, unlike the WAL file's size. nil removes the hook.
    ///
    /// SQLite's automatic checkpoint is this same hook: installing one turns `wal_autocheckpoint`
    /// off for the connection. `body` runs on the committing thread, inside the commit: it must not
    /// use the connection.
    package func setWALCommitHook(_ body: ((_ schema: String, _ frames: Int) -> Void)?) {
        guard let handle else { return }
        guard let body else {
            sqlite3_wal_hook(handle, nil, nil)
            walCommitHook = nil
            return
        }
        let hook = WALCommitHook(body)
        walCommitHook = hook
        sqlite3_wal_hook(handle, { context, _, schema, frames in
            let hook = Unmanaged<WALCommitHook>.fromOpaque(context!).takeUnretainedValue()
            hook.body(schema.map { String(cString: $0) } ?? "main", Int(frames))
            return SQLITE_OK
        }, Unmanaged.passUnretained(hook).toOpaque())
    }
}
