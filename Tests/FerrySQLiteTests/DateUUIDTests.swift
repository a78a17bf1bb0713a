import Foundation
import Testing
@testable import FerrySQLite

/// `Date` and `UUID` as arguments and results, with GRDB's conventions; never a silent misread.
@Suite struct DateUUIDTests {
    struct Event: Decodable, Equatable {
        let at: Date
        let id: UUID
    }

    @Test func unixTimeNumbersReadAsUnixTime() throws {
        let db = try Connection.inMemory()
        // 1600000000 is 2020-09-13 12:26:40 UTC (read as seconds since 2001 it would be 2051).
        let date = try #require(try db.scalar("SELECT 1600000000", as: Date.self))
        #expect(date == Date(timeIntervalSince1970: 1_600_000_000))
        #expect(try db.scalar("SELECT 1600000000.25", as: Date.self) == Date(timeIntervalSince1970: 1_600_000_000.25))
        #expect(try db.scalar("SELECT unixepoch('2020-09-13 12:26:40')", as: Date.self) == date)
    }

    @Test func sqliteTextsRead() throws {
        let expected = Date(timeIntervalSince1970: 1_600_000_000)
        for text in ["2020-09-13 12:26:40", "2020-09-13T12:26:40", "2020-09-13 12:26:40.000", "2020-09-13T12:26:40Z",
                     "2020-09-13 14:26:40+02:00", "2020-09-13 07:26:40-05:00"] {
            #expect(SQLiteDateText.date(from: text) == expected, "\(text)")
        }
        #expect(SQLiteDateText.date(from: "2020-09-13") == Date(timeIntervalSince1970: 1_599_955_200))
        #expect(SQLiteDateText.date(from: "2020-09-13 12:26") == Date(timeIntervalSince1970: 1_599_999_960))
        for text in ["", "now", "2020-13-01", "2020-09-13 25:00", "2020-09-13 12:26:40.", "2020-09-13x", "13/09/2020", "1600000000"] {
            #expect(SQLiteDateText.date(from: text) == nil, "\(text)")
        }
    }

    @Test func datesRoundTripAtMillisecondsAndSQLiteReadsThem() throws {
        let db = try Connection.inMemory()
        try db.execute("CREATE TABLE t(at, id)")
        let dates = [Date(timeIntervalSince1970: 1_600_000_000.123), Date(timeIntervalSince1970: -86_400.5), Date(timeIntervalSince1970: 0),
                     Date(timeIntervalSince1970: 253_402_300_799)]
        for date in dates { try db.execute("INSERT INTO t(at) VALUES (?)", [date]) }
        let texts: [String] = try db.fetchAll("SELECT at FROM t ORDER BY rowid").map { try $0.column(0) }
        #expect(texts == ["2020-09-13 12:26:40.123", "1969-12-30 23:59:59.500", "1970-01-01 00:00:00.000", "9999-12-31 23:59:59.000"])
        // SQLite's own functions read them.
        #expect(try db.scalar("SELECT unixepoch(at) FROM t ORDER BY rowid LIMIT 1", as: Int64.self) == 1_600_000_000)
        let read: [Date] = try db.fetchAll("SELECT at FROM t ORDER BY rowid").map { try $0.column(0) }
        for (date, back) in zip(dates, read) { #expect(abs(date.timeIntervalSince1970 - back.timeIntervalSince1970) < 0.0005) }
    }

    @Test func uuidsAreBlobsAndReadFromText() throws {
        let db = try Connection.inMemory()
        let id = UUID()
        try db.execute("CREATE TABLE t(at, id)")
        try db.execute("INSERT INTO t VALUES (?, ?)", [Date(timeIntervalSince1970: 1_600_000_000), id])
        #expect(try db.scalar("SELECT typeof(id) || length(id) FROM t", as: String.self) == "blob16")
        #expect(try db.scalar("SELECT id FROM t", as: UUID.self) == id)
        #expect(try db.scalar("SELECT ?", [id.uuidString.lowercased()], as: UUID.self) == id)
        #expect(throws: SQLiteError.self) { try db.scalar("SELECT x'00'", as: UUID.self) }
        #expect(throws: SQLiteError.self) { try db.scalar("SELECT 'now'", as: Date.self) }
        // Records decode both.
        let event = try #require(try db.fetchOne("SELECT at, id FROM t")).decoded(Event.self)
        #expect(event == Event(at: Date(timeIntervalSince1970: 1_600_000_000), id: id))
        #expect(throws: SQLiteError.self) { try #require(try db.fetchOne("SELECT 'not a date' AS at, x'00' AS id")).decoded(Event.self) }
    }
}
