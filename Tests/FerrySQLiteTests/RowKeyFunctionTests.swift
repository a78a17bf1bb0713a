import FerrySQLite
import Testing

/// `ferry_key` and `ferry_key_part`: a key's values come back with their classes and exact bytes,
/// equal keys encode alike and different ones differently, and queries that compare a table's key
/// columns with decoded parts use the table's primary-key index.
struct RowKeyFunctionTests {
    static let values: [Value] = [.null, .integer(0), .integer(-1), .integer(Int64.min), .integer(Int64.max), .real(0.1), .real(0.1 + 1e-17),
                                  .real(-0.0), .real(1e308), .text(""), .text("012"), .text("a\u{0}b"), .text("é"), .blob([]), .blob([0, 255, 1])]

    @Test func everyValueComesBackWithItsClass() throws {
        let db = try Connection.inMemory()
        for first in Self.values {
            for second in Self.values {
                let row = try #require(try db.fetchOne("SELECT ferry_key_part(ferry_key(?1, ?2), 0), ferry_key_part(ferry_key(?1, ?2), 1), "
                                                       + "ferry_key_part(ferry_key(?1, ?2), 2), typeof(ferry_key(?1, ?2))", [first, second]))
                #expect(row.values == [first, second, .null, .text("blob")])
            }
        }
    }

    /// `Connection.rowKeyValues` decodes in Swift what `ferry_key` encoded; a blob of another shape is refused.
    @Test func swiftDecodesWhatTheFunctionEncodes() throws {
        let db = try Connection.inMemory()
        for first in Self.values {
            for second in Self.values {
                let key: [UInt8] = try #require(try db.scalar("SELECT ferry_key(?1, ?2)", [first, second]))
                #expect(Connection.rowKeyValues(key) == [first, second])
                #expect(Connection.rowKeyValues(Array(key.dropLast())) == nil || key.last == 0, "a truncated key")
            }
        }
        #expect(Connection.rowKeyValues([9]) == nil)
        #expect(Connection.rowKeyValues([]) == [])
    }

    @Test func keysAreEqualExactlyWhenTheirValuesAre() throws {
        let db = try Connection.inMemory()
        var seen: [[UInt8]: Value] = [:]
        for value in Self.values {
            let key: [UInt8] = try #require(try db.scalar("SELECT ferry_key(?)", [value]))
            #expect(seen[key] == nil, "\(value) and \(String(describing: seen[key])) encode alike")
            seen[key] = value
            #expect(try db.scalar("SELECT ferry_key(?) = ferry_key(?)", [value, value], as: Int.self) == 1)
        }
        // 1 and 1.0 are different keys (a table's affinity has made each key's class definite).
        #expect(try db.scalar("SELECT ferry_key(1) = ferry_key(1.0)", as: Int.self) == 0)
        #expect(try db.scalar("SELECT ferry_key_part(x'00', 0) IS NULL AND ferry_key_part(NULL, 0) IS NULL AND ferry_key_part(x'0300', 0) IS NULL",
                              as: Int.self) == 1)
    }

    @Test func decodedPartsUseTheTablesIndex() throws {
        let db = try Connection.inMemory()
        try db.execute("CREATE TABLE t(a TEXT COLLATE NOCASE, b INTEGER, c, PRIMARY KEY (a, b)) WITHOUT ROWID; CREATE TABLE keys(k PRIMARY KEY) WITHOUT ROWID")
        try db.execute("CREATE TABLE pos(p)")
        func plan(_ sql: String) throws -> String {
            try db.fetchAll("EXPLAIN QUERY PLAN " + sql).map { try $0.column(3, as: String.self) }.joined(separator: "; ")
        }
        let lookup = try plan("SELECT c FROM t WHERE (a, b) IN (SELECT ferry_key_part(k, 0), ferry_key_part(k, 1) FROM keys)")
        // (SQLite 3.40 searches by the first column of a row value alone; later versions by both.)
        #expect(lookup.contains("SEARCH t USING PRIMARY KEY (a=?"), "\(lookup)")
        let range = try plan("SELECT c FROM t WHERE (a, b) >= (SELECT ferry_key_part(p, 0), ferry_key_part(p, 1) FROM pos)")
        #expect(range.contains("SEARCH t USING PRIMARY KEY ((a,b)>(?,?))") || range.contains("SEARCH t USING PRIMARY KEY"), "\(range)")
        // The collation of the key column decides: 'B' follows 'a' under NOCASE.
        try db.execute("INSERT INTO t VALUES ('a', 1, 'x'), ('B', 1, 'y'); INSERT INTO pos VALUES (ferry_key('b', 0))")
        #expect(try db.fetchAll("SELECT c FROM t WHERE (a, b) >= (SELECT ferry_key_part(p, 0), ferry_key_part(p, 1) FROM pos)").map { try $0.column(0, as: String.self) } == ["y"])
    }
}
