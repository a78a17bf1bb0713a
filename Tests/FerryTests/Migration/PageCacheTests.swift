import FerryTestSupport
import FerrySQLite
import Testing
@testable import Ferry

/// The page caches Ferry gives its connections: the writer keeps the target's index pages for
/// the next batch, connections that write keep little of a source (moves read it once, in
/// order), and the app's readers keep the default for their range reads of pending rows.
@Suite(.timeLimit(.minutes(1))) struct PageCacheTests {
    @Test func theWriterCachesTheTargetAndReadersTheSource() throws {
        let box = Sandbox()
        let legacy = try box.makeLegacy(rows: 200)
        let db = try FerryDatabase(path: box.path("app.db"), plan: .messages(from: legacy))
        defer { db.close() }
        _ = try db.step()
        func cacheSizes(_ db: Connection) throws -> [String: Int] {
            var sizes: [String: Int] = [:]
            for schema in try db.schemaNames() where schema != "temp" {
                sizes[schema.hasPrefix(SourceRecord.schemaPrefix) ? "source" : schema] =
                    try db.scalar("PRAGMA \(Connection.quoteIdentifier(schema)).cache_size", as: Int.self)
            }
            return sizes
        }
        let writer = try db.pool.write { try cacheSizes($0) }
        #expect(writer == ["main": MigrationEngine.writerCacheSize, "source": MigrationEngine.writingSourceCacheSize])
        let reader = try db.pool.read { try cacheSizes($0) }
        #expect(reader == ["main": MigrationEngine.cacheSize, "source": MigrationEngine.cacheSize])
        // The sizes differ, so each expectation above tells the connections apart.
        #expect(Set([MigrationEngine.writerCacheSize, MigrationEngine.writingSourceCacheSize, MigrationEngine.cacheSize]).count == 3)
    }
}
