import FerrySQLite
/// What an online data migration moves: for each source database, which source tables feed which
/// target tables of the database Ferry opens, optionally only the rows matching a filter.
///
/// ```swift
/// var plan = MigrationPlan()
/// plan.add(MigrationSource(.file("legacy.db"), cipher: .passphrase("old", settings: .sqlcipher3), tables: [
///     TableMapping(target: "messages", source: "messages", filter: "conversation_id < 1000"),
///     TableMapping(target: "archived_messages", source: "messages", filter: "conversation_id >= 1000"),
/// ]))
/// ```
/// The plan is persisted in the target database (without keys) when registered.
public struct MigrationPlan: Sendable, Hashable {
    /// The sources, each with its table mappings.
    public var sources: [MigrationSource]

    /// A plan with the given sources.
    public init(sources: [MigrationSource] = []) { self.sources = sources }

    /// Adds a source.
    public mutating func add(_ source: MigrationSource) { sources.append(source) }

    /// Every table mapping with its source.
    public var mappings: [(source: MigrationSource, table: TableMapping)] {
        sources.flatMap { source in source.tables.map { (source, $0) } }
    }
}

/// One source database of a plan: where it is, how it is encrypted, and which tables it feeds.
public struct MigrationSource: Sendable, Hashable {
    /// Where the source tables live.
    public var location: MigrationSourceLocation
    /// The source file's encryption (nil for a plain file or for the target file itself).
    /// Keys are never persisted: supply the cipher again at every open.
    public var cipher: Cipher?
    /// The table mappings fed by this source.
    public var tables: [TableMapping]
    /// True to leave a source file in rollback-journal mode. By default Ferry switches a source file
    /// that uses a rollback journal to WAL when a plan registers it, or registers it again (the
    /// file stays in WAL): every statement that reads a pending row opens a read transaction on the
    /// source, which costs more under a rollback journal (Docs/Performance.md). Keep the journal when other
    /// code must open the file in a way WAL does not allow (read-only media, a network file
    /// system, an old process).
    public var keepsJournalMode: Bool

    /// A source at `location`, with its cipher and table mappings; `keepsJournalMode` leaves a
    /// rollback-journal source file in that mode.
    public init(_ location: MigrationSourceLocation, cipher: Cipher? = nil, tables: [TableMapping], keepsJournalMode: Bool = false) {
        self.location = location
        self.cipher = cipher
        self.tables = tables
        self.keepsJournalMode = keepsJournalMode
    }
}

/// Where a source table lives.
public enum MigrationSourceLocation: Sendable, Hashable {
    /// In the target database file itself (reshaping or renaming a table in place).
    case targetFile
    /// In another database file, attached to Ferry's connections. A relative path is relative to
    /// the current directory when the plan is registered; it is stored relative to the target's
    /// directory when the source lies below it, so moving both files together keeps working.
    case file(String)
}

/// One mapping `target <- source [where filter]`, optionally with column feeds.
public struct TableMapping: Sendable, Hashable, Codable {
    /// The table of the target database the app uses.
    public var target: String
    /// The table of the source database that feeds it.
    public var source: String
    /// A SQL expression over the source row; only matching rows belong to the target. Nil: all rows.
    public var filter: String?
    /// Target columns fed by an expression over the source row (see `ColumnFeed`); every other
    /// target column takes the source column of the same name, or its default.
    public var columns: [ColumnFeed]
    /// Source columns whose values the target deliberately does not keep. Registration refuses a
    /// source column that reaches no target column (not copied by name, not used by a feed) unless
    /// it is listed here: its values would be lost.
    public var droppedColumns: [String]

    /// A mapping `target <- source [where filter]`, with `columns` feeding target columns from
    /// expressions over the source row, and `droppedColumns` the source columns left behind on
    /// purpose.
    public init(target: String, source: String, filter: String? = nil, columns: [ColumnFeed] = [], droppedColumns: [String] = []) {
        self.target = target
        self.source = source
        self.filter = filter
        self.columns = columns
        self.droppedColumns = droppedColumns
    }

    private enum CodingKeys: String, CodingKey { case target, source, filter, columns, droppedColumns }

    /// Decodes a mapping; `columns` may be absent.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        target = try container.decode(String.self, forKey: .target)
        source = try container.decode(String.self, forKey: .source)
        filter = try container.decodeIfPresent(String.self, forKey: .filter)
        columns = try container.decodeIfPresent([ColumnFeed].self, forKey: .columns) ?? []
        droppedColumns = try container.decodeIfPresent([String].self, forKey: .droppedColumns) ?? []
    }
}
