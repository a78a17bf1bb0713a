import Testing
@testable import FerrySQLite

/// `ferry_row_digest` tells rows apart by every value and its class, and a row recorder digests a
/// row as the function does.
@Suite struct RowDigestTests {
    @Test func valuesAndClassesAreTold() throws {
        let db = try Connection.inMemory()
        func digest(_ values: String) throws -> Int64? { try db.scalar("SELECT ferry_row_digest(\(values))", as: Int64.self) }
        #expect(try digest("1, 'a'") == digest("1, 'a'"))
        let distinct = try ["1, 'a'", "1, 'b'", "2, 'a'", "'1', 'a'", "1.0, 'a'", "1, x'61'", "1, NULL", "1, 'a', NULL", "1",
                            "1, 'abcdefgh'", "1, 'abcdefgi'", "1, 'abcdefghi'", "1, ''"].map(digest)
        #expect(Set(distinct).count == distinct.count)
    }

    @Test func aRecorderDigestsARowAsTheFunctionDoes() throws {
        let db = try Connection.inMemory()
        let recorder = try db.defineRowRecorder("record_it")
        try db.execute("CREATE TABLE t(a, b); INSERT INTO t VALUES (1, 'x'), (2, 'a longer text than eight bytes'), (3, NULL)")
        recorder.reset()
        _ = try db.fetchAll("SELECT record_it(rowid, a, b) FROM t WHERE a <> 2")
        let entries = recorder.take()
        #expect(entries.map(\.identity) == [.integer(1), .integer(3)])
        let expected = try db.fetchAll("SELECT ferry_row_digest(rowid, a, b) FROM t WHERE a <> 2").map { UInt64(bitPattern: try $0.column(0, as: Int64.self)) }
        #expect(entries.map(\.digest) == expected)
        #expect(recorder.entries.isEmpty, "taken")
    }
}
