import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@_spi(Benchmarks) @testable import Ferry

/// Every object Ferry creates is reserved (`AccessPolicy.reservedObjectPrefixes`): the app's
/// statements can write none of them, whatever Ferry names it next. Sources stay unwritten also by
/// `REINDEX`, and an `ATTACH` under a reserved schema name creates no file.
@Suite(.timeLimit(.minutes(2))) struct ReservedObjectsTests {
    /// Enumerates what Ferry created on a migrating writer (temp and main), and expects every
    /// write and drop of each refused. `temp.ferry_move_keys` and `temp.ferry_move_fk` used to
    /// be writable.
    @Test func theAppCanWriteNoneOfFerrysObjects() throws {
        let world = try AuthorizerTests.World()
        let objects = try world.db.write { db in
            try db.fetchAll("""
                SELECT 'temp', type, name FROM temp.sqlite_master
                UNION ALL SELECT 'main', type, name FROM main.sqlite_master
                    WHERE name LIKE 'ferry\\_%' ESCAPE '\\' AND name NOT LIKE 'ferry\\_quarantine\\_%' ESCAPE '\\'
                """).map { (schema: try $0.get(0, as: String.self), type: try $0.get(1, as: String.self), name: try $0.get(2, as: String.self)) }
        }
        let names = Set(objects.map(\.name))
        #expect(names.isSuperset(of: ["ferry_move_rows", "ferry_move_keys", "ferry_move_fk", "ferry_redirect_suspended",
                                      "ferry_migration_tables", "ferry_redirect_insert_messages"]), "\(names.sorted())")
        for object in objects {
            #expect(AccessPolicy.isReservedObject(object.name), "\(object.name) is not reserved")
            let name = "\(object.schema).\"\(object.name)\""
            switch object.type {
            case "table":
                try world.expectDenied("INSERT INTO \(name) DEFAULT VALUES", object: object.name)
                try world.expectDenied("INSERT INTO \(name) SELECT * FROM \(name)", object: object.name)
                try world.expectDenied("DELETE FROM \(name)", object: object.name)
                let column = try world.db.write { db in  // temp is the writer's
                    try db.scalar("SELECT name FROM pragma_table_info(?, ?) ORDER BY cid LIMIT 1", [.text(object.name), .text(object.schema)], as: String.self)
                } ?? "?"
                try world.expectDenied("UPDATE \(name) SET \"\(column)\" = \"\(column)\"", object: object.name)
                try world.expectDenied("DROP TABLE \(name)", object: object.name)
            case "view":
                try world.expectDenied("INSERT INTO \(name) DEFAULT VALUES", object: object.name)
                try world.expectDenied("DROP VIEW \(name)", object: object.name)
            case "trigger":
                try world.expectDenied("DROP TRIGGER \(name)", object: object.name)
            case "index":
                try world.expectDenied("DROP INDEX \(name)", object: object.name)
            default:
                Issue.record("unexpected \(object.type) \(name)")
            }
        }
        try world.expectDenied("INSERT INTO temp.ferry_move_keys VALUES (30)", object: "ferry_move_keys")
        try world.expectDenied("INSERT INTO temp.ferry_move_fk VALUES ('messages', 30)", object: "ferry_move_fk")
        try world.expectMigrationCompletes()
    }

    /// `REINDEX` rewrites the indexes it names, or those of a collation in every attached
    /// database: on a source, it is refused (Ferry never writes a source); on the app's own tables
    /// it runs.
    @Test func reindexOfASourceIsRefused() throws {
        let world = try AuthorizerTests.World(legacySQL: "CREATE INDEX messages_body ON messages(body COLLATE NOCASE)")
        let s = world.schema
        try world.db.write { try $0.execute("CREATE INDEX keep_x ON keep(x COLLATE NOCASE)") }
        let before = try world.snapshot()
        for sql in ["REINDEX \(s).messages", "REINDEX \(s).messages_body", "REINDEX nocase", "REINDEX", "REINDEX binary"] {
            try world.expectDenied(sql, object: "REINDEX")
        }
        #expect(try world.snapshot() == before)
        try world.db.write { db in
            try db.execute("REINDEX keep")
            try db.execute("REINDEX main.keep_x")
        }
        try world.expectMigrationCompletes()
    }

    /// SQLite shows an authorizer the file of an `ATTACH`, not its schema name: a reserved name
    /// used to be caught after the statement ran, when SQLite had created the file.
    @Test func attachUnderAReservedNameCreatesNoFile() throws {
        let world = try AuthorizerTests.World()
        let cases: [(sql: String, arguments: StatementArguments)] = [
            ("ATTACH '\(world.box.path("a.db"))' AS ferry_src_2", .none),
            ("ATTACH DATABASE '\(world.box.path("b.db"))' AS \"FERRY_SRC_9\"", .none),
            ("ATTACH '\(world.box.path("c.db"))' AS 'ferry_plan_0'", .none),
            ("ATTACH '\(world.box.path("d.db"))' AS ?", [.text("ferry_export")]),
            ("ATTACH '\(world.box.path("e.db"))' AS :name", ["name": .text("ferry_src_3")]),
            ("ATTACH '\(world.box.path("f.db"))' AS 'ferry_' || 'src_4'", .none),
        ]
        for (index, attach) in cases.enumerated() {
            try world.expectDenied(attach.sql, attach.arguments, object: "ATTACH")
            let file = world.box.path("\(["a", "b", "c", "d", "e", "f"][index]).db")
            #expect(!FileManager.default.fileExists(atPath: file), "\(attach.sql) created \(file)")
        }
        #expect(try world.db.write { db in try db.fetchAll("PRAGMA database_list").count } == 3)  // main, temp, the source
        // Another name is the app's business, bound or not.
        try world.db.write { db in
            try db.execute("ATTACH '\(world.box.path("mine.db"))' AS mine")
            try db.execute("ATTACH '\(world.box.path("other.db"))' AS ?", [.text("other")])
        }
        #expect(FileManager.default.fileExists(atPath: world.box.path("mine.db")))
        try world.expectMigrationCompletes()
    }
}
