import Foundation
import Testing
@testable import FerrySQLite

/// Stores `value` in a column without type affinity (so SQLite keeps the storage class as bound),
/// reads it back and returns the read value together with SQLite's `typeof()` of the stored value.
private func roundTrip(_ value: some SQLValueConvertible) throws -> (value: Value, storageClass: String) {
    let db = try Connection.inMemory()
    try db.execute("CREATE TABLE t(v)")
    try db.execute("INSERT INTO t(v) VALUES (?)", [value.sqlValue])
    let row = try #require(try db.fetchOne("SELECT v, typeof(v) FROM t"))
    return (row[0], try row.column(1))
}

/// Round trip of a Swift value through insert and select, converted back to its own type.
private func roundTripped<T: SQLValueConvertible>(_ value: T) throws -> T {
    let (stored, _) = try roundTrip(value)
    return try Row(columnNames: ["v"], values: [stored]).column(0, as: T.self)
}

@Suite(.timeLimit(.minutes(3)))
struct ValueTests {
    // MARK: Round trips

    @Test func integersRoundTripAtTheirLimits() throws {
        for value in [0, 1, -1, Int.max, Int.min] {
            #expect(try roundTripped(value) == value)
        }
        for value in [Int64.max, Int64.min, 42] {
            #expect(try roundTripped(value) == value)
            #expect(try roundTrip(value).storageClass == "integer")
        }
        for value in [Int32.max, Int32.min, 7] {
            #expect(try roundTripped(value) == value)
        }
    }

    @Test func doublesRoundTripIncludingInfinityAndNegativeZero() throws {
        for value in [0.5, -1.25, Double.greatestFiniteMagnitude, Double.leastNonzeroMagnitude, .pi,
                      Double.infinity, -Double.infinity] {
            #expect(try roundTripped(value) == value)
            #expect(try roundTrip(value).storageClass == "real")
        }
        let negativeZero = try roundTripped(-0.0)
        #expect(negativeZero == 0 && negativeZero.sign == .minus)
        // An integral double stays a REAL in a column without affinity.
        #expect(try roundTrip(3.0).value == .real(3))
    }

    @Test func nanIsStoredAsNull() throws {
        // SQLite has no NaN: binding one stores NULL.
        let (value, storageClass) = try roundTrip(Double.nan)
        #expect(value == .null)
        #expect(storageClass == "null")
    }

    @Test func boolsAreIntegersZeroAndOne() throws {
        #expect(try roundTrip(true).value == .integer(1))
        #expect(try roundTrip(false).value == .integer(0))
        #expect(try roundTripped(true) == true)
        #expect(try roundTripped(false) == false)
        #expect(Bool.fromSQLValue(.integer(2)) == true)
        #expect(Bool.fromSQLValue(.real(0)) == false)
        #expect(Bool.fromSQLValue(.text("true")) == nil)
    }

    @Test(arguments: ["", "plain", "héllo wörld", "日本語テキスト", "emoji 👩‍👩‍👧‍👦 and 🇫🇷", "quote ' and \" and \\",
                      "embedded\u{0}NUL\u{0}", "\u{0}", "line\nbreak\r\ntab\t"])
    func stringsRoundTrip(_ value: String) throws {
        let (stored, storageClass) = try roundTrip(value)
        #expect(storageClass == "text")
        #expect(stored == .text(value))
        #expect(try roundTripped(value) == value)
    }

    @Test func longStringsRoundTrip() throws {
        let value = String(repeating: "long text é ", count: 20_000)
        #expect(try roundTripped(value) == value)
    }

    @Test func embeddedNULKeepsTheWholeLength() throws {
        let db = try Connection.inMemory()
        #expect(try db.scalar("SELECT length(CAST(? AS BLOB))", ["a\u{0}b"], as: Int.self) == 3)
        #expect(try db.scalar("SELECT ? = 'a' || char(0) || 'b'", ["a\u{0}b"], as: Bool.self) == true)
    }

    @Test func blobsRoundTripIncludingEmpty() throws {
        let bytes: [UInt8] = [0, 1, 2, 0xFF, 0, 0x80]
        #expect(try roundTripped(bytes) == bytes)
        #expect(try roundTripped(Data(bytes)) == Data(bytes))
        let all = [UInt8]((0...255).map { UInt8($0) })
        #expect(try roundTripped(all) == all)

        // An empty blob stays a blob: not NULL, not text.
        let (empty, storageClass) = try roundTrip([UInt8]())
        #expect(empty == .blob([]))
        #expect(storageClass == "blob")
        #expect(try roundTripped(Data()) == Data())
    }

    @Test func nullAndOptionals() throws {
        #expect(try roundTrip(Value.null) == (.null, "null"))
        #expect(try roundTrip(Int?.none) == (.null, "null"))
        #expect(try roundTrip(Int?.some(5)) == (.integer(5), "integer"))
        #expect(try roundTripped(String?.none) == nil)
        #expect(try roundTripped(String?.some("x")) == "x")
        #expect(try roundTripped([UInt8]?.some([])) == [])
    }

    @Test func everyValueCaseRoundTrips() throws {
        let values: [Value] = [.null, .integer(-9), .real(2.5), .text("t"), .blob([9, 8])]
        let db = try Connection.inMemory()
        try db.execute("CREATE TABLE t(a, b, c, d, e)")
        try db.execute("INSERT INTO t VALUES (?, ?, ?, ?, ?)", .positional(values))
        let row = try #require(try db.fetchOne("SELECT * FROM t"))
        #expect(row.values == values)
        #expect(try db.fetchOne("SELECT typeof(a), typeof(b), typeof(c), typeof(d), typeof(e) FROM t")?.values
            == values.map { .text($0.storageClass) })
    }

    @Test func columnAffinityConvertsOnStorage() throws {
        let db = try Connection.inMemory()
        try db.execute("CREATE TABLE t(i INTEGER, r REAL, s TEXT)")
        try db.execute("INSERT INTO t VALUES (?, ?, ?)", ["12", 3, 45])
        let row = try #require(try db.fetchOne("SELECT i, r, s FROM t"))
        #expect(row.values == [.integer(12), .real(3), .text("45")])
    }

    // MARK: Conversions

    @Test func conversionsBetweenStorageClasses() {
        #expect(Int64.fromSQLValue(.real(3)) == 3)
        #expect(Int64.fromSQLValue(.real(3.5)) == nil)
        #expect(Int64.fromSQLValue(.text("3")) == nil)
        #expect(Int32.fromSQLValue(.integer(Int64(Int32.max) + 1)) == nil)
        #expect(Double.fromSQLValue(.integer(2)) == 2)
        #expect(String.fromSQLValue(.blob(Array("abc".utf8))) == "abc")
        #expect(String.fromSQLValue(.blob([0xFF, 0xFE])) == nil)
        #expect([UInt8].fromSQLValue(.text("ab")) == [0x61, 0x62])
        #expect(Int.fromSQLValue(.null) == nil)
        #expect(Int?.fromSQLValue(.null) == .some(nil))
        #expect(Int?.fromSQLValue(.text("x")) == nil)
    }

    @Test func literalsAndDescriptions() {
        let values: [Value] = [nil, 1, 2.5, "it's", true]
        #expect(values == [.null, .integer(1), .real(2.5), .text("it's"), .integer(1)])
        #expect(values.map(\.description) == ["NULL", "1", "2.5", "'it''s'", "1"])
        #expect(Value.blob([0x00, 0xAB]).description == "X'00ab'")
        #expect(Value.null.isNull && !Value.integer(0).isNull)
    }

    // MARK: Row access

    @Test func rowAccessByIndexAndName() throws {
        let db = try Connection.inMemory()
        let row = try #require(try db.fetchOne("SELECT 1 AS id, 'x' AS Name, NULL AS note, 2 AS id"))
        #expect(row.count == 4)
        #expect(row.columnNames == ["id", "Name", "note", "id"])
        #expect(row[0] == .integer(1))
        #expect(row["name"] == .text("x"))  // ASCII case-insensitive
        #expect(row["NAME"] == .text("x"))
        #expect(row["id"] == .integer(1))   // the first column of that name
        #expect(row["missing"] == nil)
        #expect(row.columnIndex(named: "NOTE") == 2)
        #expect(try row.column("id", as: Int.self) == 1)
        #expect(try row.column(1, as: String.self) == "x")
        #expect(try row.column("note", as: String?.self) == nil)
        #expect(row.description == "[id: 1, Name: 'x', note: NULL, id: 2]")
    }

    @Test func rowGetThrowsDecodingFailed() throws {
        let row = Row(columnNames: ["a", "b"], values: [.text("x"), .null])
        #expect(throws: SQLiteError.decodingFailed("column index 2 out of range (the row has 2 columns)")) {
            try row.column(2, as: Int.self)
        }
        #expect(throws: SQLiteError.decodingFailed("column 0 (a) holds text, not Int")) {
            try row.column(0, as: Int.self)
        }
        #expect(throws: SQLiteError.decodingFailed("column 1 (b) holds null, not String")) {
            try row.column("b", as: String.self)
        }
        #expect(throws: SQLiteError.decodingFailed("no column named c (columns: a, b)")) {
            try row.column("c", as: Int.self)
        }
    }

    @Test func scalarReturnsNilForNoRowAndNull() throws {
        let db = try Connection.inMemory()
        #expect(try db.scalar("SELECT 1 WHERE 0", as: Int.self) == nil)
        #expect(try db.scalar("SELECT NULL", as: Int.self) == nil)
        #expect(try db.scalar("SELECT 41 + 1", as: Int.self) == 42)
        #expect(throws: SQLiteError.self) { try db.scalar("SELECT 'x'", as: Int.self) }
    }

    // MARK: Decodable rows

    struct Person: Decodable, Equatable {
        var id: Int64
        var name: String
        var nickname: String?
        var score: Double
        var active: Bool
        var avatar: Data?
        var age: UInt8
    }

    @Test func decodesRowsIntoDecodableTypes() throws {
        let db = try Connection.inMemory()
        try db.execute("""
            CREATE TABLE people(id INTEGER PRIMARY KEY, name TEXT, nickname TEXT, score REAL, active INTEGER, avatar BLOB, age INTEGER);
            INSERT INTO people VALUES (1, 'Ada', NULL, 9.5, 1, X'0102', 36);
            INSERT INTO people VALUES (2, 'Bob', 'B', 7, 0, NULL, 41);
            """)
        let people = try db.fetchAll("SELECT * FROM people ORDER BY id").map { try $0.decoded(Person.self) }
        #expect(people == [
            Person(id: 1, name: "Ada", nickname: nil, score: 9.5, active: true, avatar: Data([1, 2]), age: 36),
            Person(id: 2, name: "Bob", nickname: "B", score: 7, active: false, avatar: nil, age: 41),
        ])
        // Column names match coding keys case-insensitively, and extra columns are ignored.
        let upper = try #require(try db.fetchOne("SELECT ID, NAME, 'x' AS extra, 0.5 AS SCORE, 1 AS Active, 3 AS age FROM people"))
        let decoded = try upper.decoded(Person.self)
        #expect(decoded.id == 1 && decoded.name == "Ada" && decoded.nickname == nil && decoded.avatar == nil)
    }

    @Test func decodesSingleColumnRowsAsValues() throws {
        let db = try Connection.inMemory()
        #expect(try db.fetchOne("SELECT 5")?.decoded(Int.self) == 5)
        #expect(try db.fetchOne("SELECT NULL")?.decoded(Int?.self) == .some(nil))
        #expect(try db.fetchOne("SELECT 'abc'")?.decoded(String.self) == "abc")
        let uuid = UUID()
        #expect(try db.fetchOne("SELECT ?", [.text(uuid.uuidString)])?.decoded(UUID.self) == uuid)
        // Date has no SQLValueConvertible conformance: through Decodable it reads a number of
        // seconds since 2001-01-01 (Foundation's default Date coding).
        #expect(try db.fetchOne("SELECT 86400.5")?.decoded(Date.self) == Date(timeIntervalSinceReferenceDate: 86400.5))
        #expect(throws: SQLiteError.self) { try db.fetchOne("SELECT '2024-01-01'")?.decoded(Date.self) }
    }

    @Test func decodingErrorsAreTyped() throws {
        let db = try Connection.inMemory()
        struct Pair: Decodable { var a: Int; var b: Int }
        struct Small: Decodable { var n: UInt8 }
        struct Nested: Decodable { var a: [Int] }
        // Missing column.
        #expect(throws: SQLiteError.decodingFailed("no column named b (columns: a)")) {
            try db.fetchOne("SELECT 1 AS a")?.decoded(Pair.self)
        }
        // Wrong storage class.
        #expect(throws: SQLiteError.decodingFailed("column b holds text, not Int")) {
            try db.fetchOne("SELECT 1 AS a, 'x' AS b")?.decoded(Pair.self)
        }
        // NULL for a non-optional property.
        #expect(throws: SQLiteError.decodingFailed("column b holds null, not Int")) {
            try db.fetchOne("SELECT 1 AS a, NULL AS b")?.decoded(Pair.self)
        }
        // Out of range for a narrow integer.
        #expect(throws: SQLiteError.decodingFailed("column n: 300 does not fit in UInt8")) {
            try db.fetchOne("SELECT 300 AS n")?.decoded(Small.self)
        }
        // A single value needs exactly one column.
        #expect(throws: SQLiteError.decodingFailed("a single value needs a one-column row, this one has 2 columns")) {
            try db.fetchOne("SELECT 1, 2")?.decoded(Int.self)
        }
        // Nested containers are refused with a typed error.
        #expect(throws: SQLiteError.self) {
            try db.fetchOne("SELECT '[1]' AS a")?.decoded(Nested.self)
        }
        // Errors other than SQLiteError thrown by a Decodable type become decodingFailed.
        struct Picky: Decodable {
            init(from decoder: any Decoder) throws {
                throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "no"))
            }
        }
        let error = #expect(throws: SQLiteError.self) { try db.fetchOne("SELECT 1")?.decoded(Picky.self) }
        guard case .decodingFailed(let message)? = error else {
            Issue.record("expected decodingFailed, got \(String(describing: error))")
            return
        }
        #expect(message.hasPrefix("Picky: "))
    }
}
