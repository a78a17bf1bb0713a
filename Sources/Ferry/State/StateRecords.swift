import FerrySQLite

/// A persisted source database.
struct SourceRecord: Sendable, Hashable {
    /// Stable id; the source attaches as schema `ferry_src_<id>`.
    let id: Int64
    /// The stored path (relative to the target's directory, or absolute); nil for the target file.
    let path: String?
    /// Whether the file is encrypted (then a key must be supplied at open).
    let encrypted: Bool
    /// The cipher settings (never the key).
    let cipherSettings: CipherSettings?
    /// What identifies the registered file (nil: registered by a version that did not record it).
    var fingerprint: SourceFingerprint? = nil

    /// The schema name the source has on Ferry's connections.
    var schema: String { path == nil ? "main" : "\(Self.schemaPrefix)\(id)" }
    /// The prefix of the schema names Ferry attaches sources under.
    static let schemaPrefix = "ferry_src_"
}

/// A persisted table mapping and its progress.
struct TableRecord: Sendable, Hashable {
    enum State: String, Sendable { case migrating, finished }
    var target: String
    var sourceID: Int64
    var sourceTable: String
    var filter: String?
    var state: State
    /// Matching source rows with rowid at or below it are in the target (nil: none yet).
    var cursor: Int64?
    var rowsMoved: Int64
    var rowsQuarantined: Int64
    var rowsEstimate: Int64?
    var notified: Bool
    var sourceCleaned: Bool
    /// Target columns fed by expressions (normalized), in the order registered.
    var columnFeeds: [ColumnFeed] = []
    /// Rows moved ahead of the stepper by app writes, counted as the moved set is pruned (nil:
    /// registered by a version that did not count them).
    var rowsMovedAhead: Int64? = 0
    /// True once cleanup found every matching source row accounted for (moved, moved ahead or
    /// quarantined): from then on it deletes.
    var cleanupChecked = false
    /// The cursor of a source without rowid: the row key (`ferry_key`) of the first source row not
    /// passed yet; matching rows before it are in the target. Nil once every source row is passed.
    var keyCursor: [UInt8]?
    /// True when each batch records the source rows it accounted for (`MovedRows`), so cleanup
    /// deletes those rows and nothing else; false for tables registered by a version that did not.
    var movesRecorded = false
}
