import Testing
@testable import Ferry

/// `TableShape.declaresAutoincrement` reads the declaration, not the text.
@Suite struct TableShapeTests {
    @Test func autoincrementIsReadFromTheDeclaration() {
        #expect(TableShape.declaresAutoincrement("CREATE TABLE t(id INTEGER PRIMARY KEY AUTOINCREMENT, b)"))
        #expect(TableShape.declaresAutoincrement("CREATE TABLE t(id INTEGER, b, PRIMARY KEY(id AUTOINCREMENT))"))
        #expect(!TableShape.declaresAutoincrement("CREATE TABLE t(id INTEGER PRIMARY KEY, note TEXT DEFAULT 'AUTOINCREMENT')"))
        #expect(!TableShape.declaresAutoincrement("CREATE TABLE t(id INTEGER PRIMARY KEY, autoincrement_hint TEXT)"))
        #expect(!TableShape.declaresAutoincrement("CREATE TABLE t(id INTEGER PRIMARY KEY /* no AUTOINCREMENT here */, b)"))
    }
}
