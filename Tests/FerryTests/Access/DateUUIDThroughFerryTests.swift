import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@_spi(Benchmarks) @testable import Ferry

/// Dates and UUIDs through a migrating table: pending rows (Unix-time integers in the source) and
/// rows the app writes (`Date`, `UUID` arguments) read back as what they are.
@Suite(.timeLimit(.minutes(1))) struct DateUUIDThroughFerryTests {
    struct Message: Decodable, Equatable {
        let id: Int64
        let sent: Date
    }

    @Test func datesAndUUIDsReadTheSameMigratingOrNot() throws {
        let box = Sandbox()
        let legacy = box.path("legacy.db")
        let source = try Connection(path: legacy)
        try source.execute("CREATE TABLE messages(id INTEGER PRIMARY KEY, sent, ref)")
        try source.execute("INSERT INTO messages VALUES (1, 1600000000, NULL), (2, '2021-01-01 00:00:00', NULL)")
        source.close()
        let db = try FerryDatabase(path: box.path("app.db"), plan: .messages(from: legacy), options: .fixedBatches(of: 1))
        defer { db.close() }
        let ref = UUID()
        try db.write { try $0.execute("INSERT INTO messages VALUES (?, ?, ?)", [3, Date(timeIntervalSince1970: 1_700_000_000), ref]) }
        let expected = [Message(id: 1, sent: Date(timeIntervalSince1970: 1_600_000_000)), Message(id: 2, sent: Date(timeIntervalSince1970: 1_609_459_200)),
                        Message(id: 3, sent: Date(timeIntervalSince1970: 1_700_000_000))]
        for _ in 0..<3 {
            let read = try db.read { try $0.fetchAll("SELECT id, sent FROM messages ORDER BY id").map { try $0.decode(Message.self) } }
            #expect(read == expected)
            #expect(try db.read { try $0.scalar("SELECT ref FROM messages WHERE id = 3", as: UUID.self) } == ref)
            _ = try db.step()
        }
    }
}
