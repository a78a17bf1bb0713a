import FerrySQLite
/// The schema of a database's `main`, normalized for comparison: every table, index, view and
/// trigger with its SQL (whitespace and comments ignored), in a stable order. SQLite's internal
/// objects (`sqlite_*`) and Ferry's (`ferry_*`) are left out.
public struct SchemaSnapshot: Sendable, Hashable, CustomStringConvertible {
    /// One schema object.
    public struct Object: Sendable, Hashable, Comparable, CustomStringConvertible {
        /// `table`, `index`, `view` or `trigger`.
        public var type: String
        /// The object name.
        public var name: String
        /// The table an index or trigger belongs to (the name itself for tables and views).
        public var tableName: String
        /// The normalized SQL (nil for objects SQLite creates implicitly).
        public var sql: String?

        public static func < (a: Object, b: Object) -> Bool {
            (a.type, a.name.lowercased(), a.name) < (b.type, b.name.lowercased(), b.name)
        }

        /// `type name: sql`, one line.
        public var description: String { "\(type) \(name): \(sql ?? "(implicit)")" }
    }

    /// The objects, ordered by type then name.
    public var objects: [Object]

    /// Reads the schema of `main`.
    public init(_ db: MigrationConnection) throws(FerryError) {
        try self.init(db.connection)
    }

    /// `init(_:)` on a connection of this package (its tests and the migrator).
    package init(_ db: Connection) throws(FerryError) {
        let rows = try sqlite(db.fetchAll("""
            SELECT type, name, tbl_name, sql FROM main.sqlite_master
            WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name NOT LIKE 'ferry\\_%' ESCAPE '\\'
            """))
        var objects: [Object] = []
        for row in rows {
            objects.append(Object(type: try sqlite(row.column(0)), name: try sqlite(row.column(1)), tableName: try sqlite(row.column(2)),
                                  sql: try sqlite(row.column(3, as: String?.self)).map(SQLNormalizer.normalize)))
        }
        self.objects = objects.sorted()
    }

    /// The differences from another snapshot, one human-readable line each (empty when equal).
    public func differences(from other: SchemaSnapshot) -> [String] {
        func key(_ o: Object) -> String { o.type + " " + o.name.lowercased() }
        let mine = Dictionary(objects.map { (key($0), $0) }, uniquingKeysWith: { a, _ in a })
        let theirs = Dictionary(other.objects.map { (key($0), $0) }, uniquingKeysWith: { a, _ in a })
        var lines: [String] = []
        for k in Set(mine.keys).union(theirs.keys).sorted() {
            switch (theirs[k], mine[k]) {
            case let (old?, new?) where old != new:
                lines.append("changed \(old.type) \(old.name): \(old.sql ?? "(implicit)") -> \(new.sql ?? "(implicit)")")
            case let (old?, nil):
                lines.append("missing \(old.type) \(old.name): \(old.sql ?? "(implicit)")")
            case let (nil, new?):
                lines.append("extra \(new.type) \(new.name): \(new.sql ?? "(implicit)")")
            default:
                break
            }
        }
        return lines
    }

    /// One line per object.
    public var description: String { objects.map(\.description).joined(separator: "\n") }
}
