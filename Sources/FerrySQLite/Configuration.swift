/// How a connection opens its database (`Connection.Configuration`): file access, encryption,
/// journal, locking and statement cache.
public struct DatabaseConfiguration: Sendable {
    /// Open read-only. Default false.
    public var readOnly: Bool
    /// Create the file when it does not exist. Default true.
    public var createIfMissing: Bool
    /// The encryption of the file; nil for a plain database.
    public var cipher: Cipher?
    /// How long a statement waits for a lock held by another connection. Default 5 s.
    public var busyTimeout: Duration
    /// The journal mode set at open (files only, writable connections only). Default WAL.
    public var journalMode: JournalMode
    /// `PRAGMA synchronous`; nil keeps SQLite's default. Default `.normal` (safe in WAL mode).
    public var synchronous: SynchronousMode?
    /// Enforce foreign keys. Default true.
    public var foreignKeys: Bool
    /// Log every statement at `trace` level through swift-log (label `ferry.sqlite`). Default false.
    public var traceStatements: Bool
    /// How many prepared statements the cache keeps. Default 256.
    public var statementCacheCapacity: Int
    /// The connection's lookaside slots (SQLite's own memory for small allocations, 1200 bytes
    /// each, part of them split into 128-byte slots); 0 keeps SQLite's default (40). Default 500
    /// (about 600 KB per connection, allocated at open). Cached statements hold slots: once they
    /// hold all of SQLite's 40, every small allocation of a long query goes to `malloc` (a union
    /// read of a migrating table copies each row's text: 25% slower over 200k rows). No effect
    /// when the library has no lookaside (`SQLiteEngine.hasLookaside`).
    public var lookasideSlots: Int
    /// Statements run after open (e.g. `PRAGMA cache_size = -8000`).
    public var prepareStatements: [String]
    /// The name of a registered SQLite VFS to open the file with (`sqlite3_vfs_register`), or nil
    /// for the default VFS. Databases attached to the connection (migration sources, exports)
    /// use the same VFS. Every connection opened from this configuration uses it: the pool's
    /// writer and readers, and Ferry's checkpointer. Default nil.
    ///
    /// Ferry's fault-injection tests use it to fail chosen reads, writes, syncs and locks.
    /// Opening fails with `SQLiteError.sqlite` (`SQLITE_ERROR`, "no such vfs") when no VFS has
    /// this name.
    public var vfs: String?

    /// A configuration with the defaults above, and any field given.
    public init(readOnly: Bool = false, createIfMissing: Bool = true, cipher: Cipher? = nil,
                busyTimeout: Duration = .seconds(5), journalMode: JournalMode = .wal,
                synchronous: SynchronousMode? = .normal, foreignKeys: Bool = true,
                traceStatements: Bool = false, statementCacheCapacity: Int = 256, lookasideSlots: Int = 500,
                prepareStatements: [String] = [], vfs: String? = nil) {
        self.readOnly = readOnly
        self.createIfMissing = createIfMissing
        self.cipher = cipher
        self.busyTimeout = busyTimeout
        self.journalMode = journalMode
        self.synchronous = synchronous
        self.foreignKeys = foreignKeys
        self.traceStatements = traceStatements
        self.statementCacheCapacity = statementCacheCapacity
        self.lookasideSlots = lookasideSlots
        self.prepareStatements = prepareStatements
        self.vfs = vfs
    }

    /// The journal mode a connection sets when it opens a file.
    public enum JournalMode: String, Sendable {
        /// Write-ahead log: readers never block the writer. The default.
        case wal
        /// Rollback journal, deleted after each transaction.
        case delete
        /// Leave the file's journal mode as it is.
        case keep
    }

    /// `PRAGMA synchronous` levels.
    public enum SynchronousMode: String, Sendable {
        /// No syncs.
        case off = "OFF"
        /// Syncs at checkpoints (WAL) or at commits (rollback journal): safe in WAL mode. The default.
        case normal = "NORMAL"
        /// Syncs at every commit.
        case full = "FULL"
        /// `FULL`, and the directory too.
        case extra = "EXTRA"
    }
}

extension Connection {
    /// How a connection opens its database.
    public typealias Configuration = DatabaseConfiguration
    /// The journal mode a connection sets when it opens a file.
    public typealias JournalMode = DatabaseConfiguration.JournalMode
    /// `PRAGMA synchronous` levels.
    public typealias SynchronousMode = DatabaseConfiguration.SynchronousMode
}
