import FerrySQLite

/// Records: `Decodable` types read from rows, `Encodable` values written as rows, through the same
/// rewrite as every statement (a migrating table reads and writes as the finished one).
extension FerryConnection {
    /// Runs a query and decodes every row into `Record` (its coding keys name the columns, as
    /// `keys` says).
    /// - Throws: `FerryError.decodingFailed` naming the column when a value does not fit.
    public func fetchAll<Record: Decodable>(_ type: Record.Type, _ sql: String, _ arguments: StatementArguments = .none,
                                            keys: ColumnKeys = .asWritten) throws(FerryError) -> [Record] {
        try fetchAll(sql, arguments).map { row throws(FerryError) in try sqlite(row.decoded(Record.self, keys: keys)) }
    }

    /// Runs a query and decodes its first row into `Record`, if there is one.
    public func fetchOne<Record: Decodable>(_ type: Record.Type, _ sql: String, _ arguments: StatementArguments = .none,
                                            keys: ColumnKeys = .asWritten) throws(FerryError) -> Record? {
        try fetchOne(sql, arguments).map { row throws(FerryError) in try sqlite(row.decoded(Record.self, keys: keys)) }
    }

    /// Inserts `record` into `table`, one column per coding key (`INSERT INTO table(columns) VALUES
    /// (...)`); `lastInsertRowid` is its rowid.
    /// - Parameters:
    ///   - record: the row's values.
    ///   - table: the table written.
    ///   - keys: how the record's coding keys name the columns.
    ///   - conflict: `OR REPLACE`, `OR IGNORE`, ... (nil: SQLite's default, `ABORT`).
    public func insert<Record: Encodable>(_ record: Record, into table: String, keys: ColumnKeys = .asWritten,
                                          onConflict conflict: ConflictResolution? = nil) throws(FerryError) {
        let columns = try sqlite(RecordEncoder(keys: keys).encode(record))
        try execute(Self.insertSQL(into: table, columns, conflict: conflict), .positional(columns.map(\.value)))
    }

    /// Updates the row of `table` whose `key` columns hold `record`'s values for them, setting its
    /// other columns to `record`'s; returns whether a row changed.
    /// - Throws: `FerryError.invalidArguments` when `key` names no column of the record, or all of them.
    @discardableResult
    public func update<Record: Encodable>(_ record: Record, in table: String, key: [String], keys: ColumnKeys = .asWritten) throws(FerryError) -> Bool {
        let columns = try sqlite(RecordEncoder(keys: keys).encode(record))
        let (keyed, set) = try split(columns, key: key)
        guard !set.isEmpty else { throw .invalidArguments("the record has no column besides its key \(key.joined(separator: ", ")) to update") }
        var arguments = set.map(\.value)
        let setSQL = set.enumerated().map { "\(q($0.element.column)) = ?\($0.offset + 1)" }.joined(separator: ", ")
        let whereSQL = keyed.enumerated().map { "\(q($0.element.column)) = ?\(set.count + $0.offset + 1)" }.joined(separator: " AND ")
        arguments += keyed.map(\.value)
        try execute("UPDATE \(q(table)) SET \(setSQL) WHERE \(whereSQL)", .positional(arguments))
        return changes > 0
    }

    /// Inserts `record` into `table`, or, when a row with the same `key` (a unique key) exists,
    /// sets that row's other columns to `record`'s (`INSERT ... ON CONFLICT (key) DO UPDATE`).
    public func upsert<Record: Encodable>(_ record: Record, into table: String, key: [String], keys: ColumnKeys = .asWritten) throws(FerryError) {
        let columns = try sqlite(RecordEncoder(keys: keys).encode(record))
        let (_, set) = try split(columns, key: key)
        let update = set.isEmpty ? "NOTHING" : "UPDATE SET " + set.map { "\(q($0.column)) = excluded.\(q($0.column))" }.joined(separator: ", ")
        try execute(Self.insertSQL(into: table, columns) + " ON CONFLICT (\(key.map(q).joined(separator: ", "))) DO \(update)",
                    .positional(columns.map(\.value)))
    }

    /// `INSERT [OR conflict] INTO table(columns) VALUES (?1, ...)`, the values bound in the columns' order.
    private static func insertSQL(into table: String, _ columns: [(column: String, value: Value)], conflict: ConflictResolution? = nil) -> String {
        "INSERT\(conflict.map { " OR \($0.rawValue)" } ?? "") INTO \(q(table))(\(columns.map { q($0.column) }.joined(separator: ", "))) "
            + "VALUES (\(columns.indices.map { "?\($0 + 1)" }.joined(separator: ", ")))"
    }

    /// The record's columns split into the `key` ones (in `key`'s order) and the others.
    private func split(_ columns: [(column: String, value: Value)], key: [String]) throws(FerryError)
        -> (key: [(column: String, value: Value)], other: [(column: String, value: Value)]) {
        var keyed: [(column: String, value: Value)] = []
        for name in key {
            guard let column = columns.first(where: { $0.column.lowercased() == name.lowercased() }) else {
                throw .invalidArguments("the record has no column \(name) (columns: \(columns.map(\.column).joined(separator: ", ")))")
            }
            keyed.append(column)
        }
        let lowered = Set(key.map { $0.lowercased() })
        let other = columns.filter { !lowered.contains($0.column.lowercased()) }
        guard !keyed.isEmpty else { throw .invalidArguments("a record update needs at least one key column") }
        return (keyed, other)
    }
}

/// The conflict resolution of an `INSERT OR ...` (SQLite's `ON CONFLICT` algorithms).
public enum ConflictResolution: String, Sendable, Hashable {
    /// Roll the transaction back.
    case rollback = "ROLLBACK"
    /// Undo the statement (SQLite's default).
    case abort = "ABORT"
    /// Stop the statement, keeping the rows it already changed.
    case fail = "FAIL"
    /// Skip the row.
    case ignore = "IGNORE"
    /// Delete the rows it conflicts with, then write it.
    case replace = "REPLACE"
}
