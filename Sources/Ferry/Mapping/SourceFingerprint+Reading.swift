import FerrySQLite
import Foundation

/// Reading and checking a source file's fingerprint (the value is the state's: `SourceFingerprint`).
extension SourceFingerprint {
    /// Reads the fingerprint of the file at `path`, attached as `schema`, for `tables`.
    static func read(path: String, encrypted: Bool, schema: String, tables: [String], on db: Connection) throws(FerryError) -> SourceFingerprint {
        var fingerprint = SourceFingerprint(salt: encrypted ? try salt(of: path) : nil, tables: [:])
        for table in tables {
            fingerprint.tables[table.lowercased()] = try sample(schema: schema, table: table, at: nil, on: db)
        }
        return fingerprint
    }

    /// The sample of `schema.table`: its row at `rowid` (its largest rowid when nil).
    static func sample(schema: String, table: String, at rowid: Int64?, key rowKey: String? = nil, on db: Connection) throws(FerryError) -> Sample {
        let qualified = "\(Connection.quoteIdentifier(schema)).\(Connection.quoteIdentifier(table))"
        guard try sqlite(db.tableExists(table, schema: schema)) else { return Sample(rowid: rowid, key: rowKey, digest: nil) }
        let shape = try TableShape.read(table, schema: schema, on: db)
        if !shape.hasRowid { return try keyedSample(shape, qualified: qualified, at: rowKey, on: db) }
        var key = rowid
        // The rowid under the spelling no column shadows (a column may be named `rowid`).
        let rowidName = shape.rowidName
        if key == nil { key = try sqlite(db.scalar("SELECT max(\(rowidName)) FROM \(qualified)", as: Int64.self)) }
        guard let key else { return Sample(rowid: nil, digest: nil) }
        guard let row = try sqlite(db.fetchOne("SELECT * FROM \(qualified) WHERE \(rowidName) = ?", [.integer(key)])) else {
            return Sample(rowid: key, digest: nil)
        }
        var hasher = SHA256()
        for value in row.values { hasher.update("\(value)\u{1F}") }
        return Sample(rowid: key, digest: SHA256.hexString(hasher.finalize()))
    }

    /// The sample of a table without rowid: its row with key `rowKey` (hex of `ferry_key`), or
    /// its last row in primary-key order when nil.
    private static func keyedSample(_ shape: TableShape, qualified: String, at rowKey: String?, on db: Connection) throws(FerryError) -> Sample {
        let columns = shape.primaryKey.map { "\(q($0.column)) COLLATE \(q($0.collation))" }
        let identity = "\(Connection.rowKeyFunction)(\(columns.joined(separator: ", ")))"
        let row: Row?
        if let rowKey {
            let parts = columns.indices.map { "\(Connection.rowKeyPartFunction)(X'\(rowKey)', \($0))" }
            row = try sqlite(db.fetchOne("SELECT hex(\(identity)), * FROM \(qualified) WHERE (\(columns.joined(separator: ", "))) = (\(parts.joined(separator: ", ")))"))
        } else {
            row = try sqlite(db.fetchOne("SELECT hex(\(identity)), * FROM \(qualified) ORDER BY \(columns.map { "\($0) DESC" }.joined(separator: ", ")) LIMIT 1"))
        }
        guard let row else { return Sample(rowid: nil, key: rowKey, digest: nil) }
        var hasher = SHA256()
        for value in row.values.dropFirst() { hasher.update("\(value)\u{1F}") }
        return Sample(rowid: nil, key: try sqlite(row.column(0, as: String.self)), digest: SHA256.hexString(hasher.finalize()))
    }

    /// The first 16 bytes of a file, in hex (an encrypted database's salt).
    static func salt(of path: String) throws(FerryError) -> String {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw .sourceUnavailable(path: path, reason: "cannot open the file to read its salt")
        }
        defer { try? handle.close() }
        let bytes = (try? handle.read(upToCount: 16)) ?? Data()
        return bytes.map { String(format: "%02x", $0) }.joined()
    }

    /// Why the file attached as `schema` is not the one registered (nil when it is).
    /// - Parameter migrating: the lower-cased source tables still migrating (their sampled row must
    ///   be there); for the others cleanup may have deleted it.
    func mismatch(path: String, encrypted: Bool, schema: String, migrating: Set<String>, on db: Connection) throws(FerryError) -> String? {
        if let salt, encrypted, try Self.salt(of: path) != salt {
            return "its encryption salt differs from the registered file's (another or re-encrypted file)"
        }
        for (table, registered) in tables.sorted(by: { $0.key < $1.key }) {
            guard registered.rowid != nil || registered.key != nil, let digest = registered.digest else { continue }
            let current = try Self.sample(schema: schema, table: table, at: registered.rowid, key: registered.key, on: db)
            let row = registered.rowid.map { "row \($0)" } ?? "the row with key \(registered.key ?? "")"
            if let found = current.digest {
                if found != digest { return "\(row) of \(table) differs from the registered file's" }
            } else if migrating.contains(table) {
                return "\(row) of \(table), present when the plan was registered, is missing"
            }
        }
        return nil
    }
}
