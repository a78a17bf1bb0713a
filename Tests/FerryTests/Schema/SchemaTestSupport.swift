import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@testable import Ferry


/// The kinds of database a migrator test runs against (GRDB runs its tests on an in-memory queue,
/// a file queue and a file pool; here: an in-memory connection, a file connection, a file pool).
enum Target: String, CaseIterable, CustomStringConvertible {
    case memoryConnection, fileConnection, filePool
    var description: String { rawValue }
}

/// A database under test: a connection or a pool, with helpers that work on both.
final class TestDatabase: @unchecked Sendable {
    let directory = Sandbox()
    let connection: Connection?
    let pool: DatabasePool?

    init(_ target: Target, configuration: Connection.Configuration = .init()) throws {
        switch target {
        case .memoryConnection:
            connection = try Connection.inMemory(configuration: configuration)
            pool = nil
        case .fileConnection:
            connection = try Connection(path: directory.path("db.sqlite"), configuration: configuration)
            pool = nil
        case .filePool:
            connection = nil
            pool = try DatabasePool(path: directory.path("db.sqlite"), configuration: configuration)
        }
    }

    @discardableResult
    func migrate(_ migrator: SchemaMigrator, upTo target: String? = nil) throws -> MigrationReport {
        if let pool {
            return try target.map { try migrator.migrate(pool, upTo: $0) } ?? migrator.migrate(pool)
        }
        return try target.map { try migrator.migrate(connection!, upTo: $0) } ?? migrator.migrate(connection!)
    }

    func read<T>(_ body: (Connection) throws -> T) throws -> T {
        if let pool { return try pool.read(body) }
        return try connection!.transaction(.deferred) { try body(connection!) }
    }

    func write<T>(_ body: (Connection) throws -> T) throws -> T {
        if let pool { return try pool.write(body) }
        return try connection!.transaction(.immediate) { try body(connection!) }
    }

    func tableExists(_ name: String) throws -> Bool { try read { try $0.tableExists(name) } }
}

/// Strings of the first column of every row.
func strings(_ db: Connection, _ sql: String) throws -> [String] {
    try db.fetchAll(sql).map { try $0.get(0, as: String.self) }
}

/// The schema helpers on the raw connections these tests open (the library offers them on its
/// handles, `DatabaseConnection`).
extension Connection {
    func tableExists(_ name: String, schema: String = "main", includingViews: Bool = false) throws -> Bool {
        try MigrationConnection(self).tableExists(name, schema: schema, includingViews: includingViews)
    }

    func columnNames(in table: String, schema: String = "main") throws -> [String] {
        try MigrationConnection(self).columnNames(in: table, schema: schema)
    }
}
