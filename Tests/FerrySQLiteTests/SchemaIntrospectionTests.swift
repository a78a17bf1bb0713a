import Testing
@testable import FerrySQLite

/// The connection's answers about its schemas and tables, which Ferry asks at every use of a
/// connection (attached sources) and before it reads a table (catalog, targets, sources).
@Suite(.timeLimit(.minutes(1)))
struct SchemaIntrospectionTests {
    @Test func schemasAreListedCountedAndFound() throws {
        let db = try Connection.inMemory()
        #expect(try db.schemaNames() == ["main", "temp"])
        #expect(try db.schemaCount() == 2)
        try db.execute("ATTACH ':memory:' AS other")
        #expect(try db.schemaNames() == ["main", "temp", "other"])
        #expect(try db.schemaCount() == 3)
        #expect(try db.hasSchema("other"))
        #expect(try !db.hasSchema("missing"))
        try db.detach("other")
        #expect(try db.schemaCount() == 2)
        #expect(try !db.hasSchema("other"))
    }

    @Test func tableExistsComparesNamesAsSQLiteDoes() throws {
        let db = try Connection.inMemory()
        try db.execute("""
            CREATE TABLE Messages(id INTEGER PRIMARY KEY, body TEXT);
            CREATE INDEX messages_by_body ON Messages(body);
            CREATE VIEW recent AS SELECT * FROM Messages;
            ATTACH ':memory:' AS "other schema";
            CREATE TABLE "other schema".archive(x);
            """)
        #expect(try db.tableExists("Messages"))
        #expect(try db.tableExists("messages"))  // SQLite's names ignore ASCII case
        #expect(try db.tableExists("MESSAGES", schema: "main"))
        #expect(try !db.tableExists("messages_by_body"))  // an index
        #expect(try !db.tableExists("recent"))  // a view
        #expect(try !db.tableExists("archive"))  // in another schema
        #expect(try db.tableExists("ARCHIVE", schema: "other schema"))
        #expect(try !db.tableExists("Messages", schema: "other schema"))
        #expect(throws: SQLiteError.self) { try db.tableExists("Messages", schema: "missing") }
    }
}
