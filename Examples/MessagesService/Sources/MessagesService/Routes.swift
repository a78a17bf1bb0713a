import Ferry
import Foundation
import Hummingbird
import Prometheus

/// One message, as the API shows it.
struct Message: ResponseCodable, Sendable {
    var id: Int64
    var conversation_id: Int64
    var sender: String?
    var body: String?
    var sent_at: Double?
}

/// The body of `POST /messages`.
struct NewMessage: Decodable, Sendable {
    var conversation_id: Int64
    var sender: String?
    var body: String
}

/// The migration's progress, as `GET /migration` shows it.
struct MigrationStatus: ResponseEncodable, Sendable {
    struct Table: Codable, Sendable {
        var name: String
        var source: String
        var state: String
        var rows_moved: Int64
        var rows_left: Int64
        var rows_per_second: Double
    }
    var finished: Bool
    var rows_moved: Int64
    var rows_left: Int64
    var tables: [Table]
}

/// The service's HTTP API. Every statement goes through Ferry: the app reads and writes `messages`
/// as if its migration had finished.
struct Routes: Sendable {
    let database: FerryDatabase
    let registry: PrometheusCollectorRegistry

    func router() -> Router<BasicRequestContext> {
        let router = Router()
        router.get("messages/:id") { _, context -> Message in
            let id = try context.parameters.require("id", as: Int64.self)
            guard let message = try await database.read({ db in try Self.message(id: id, on: db) }) else {
                throw HTTPError(.notFound, message: "no message \(id)")
            }
            return message
        }
        router.post("messages") { request, context -> EditedResponse<Message> in
            let input = try await request.decode(as: NewMessage.self, context: context)
            let message = try await database.write { db in
                try db.execute("INSERT INTO messages(conversation_id, sender, body, sent_at) VALUES (?, ?, ?, ?)",
                               [input.conversation_id, input.sender, input.body, Date().timeIntervalSince1970])
                return try Self.message(id: db.lastInsertRowid, on: db)
            }
            guard let message else { throw HTTPError(.internalServerError) }
            return EditedResponse(status: .created, response: message)
        }
        router.get("migration") { _, _ -> MigrationStatus in
            let progress = try database.progress()
            return MigrationStatus(
                finished: progress.isFinished, rows_moved: progress.rowsMoved, rows_left: progress.rowsLeft,
                tables: progress.tables.map { table in
                    .init(name: table.name, source: (table.sourcePath.map { $0 + ":" } ?? "") + table.sourceTable,
                          state: table.state.rawValue, rows_moved: table.rowsMoved, rows_left: table.rowsLeft,
                          rows_per_second: table.rowsPerSecond)
                })
        }
        router.get("metrics") { _, _ -> Response in
            Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                     body: .init(byteBuffer: ByteBuffer(bytes: registry.emitToBuffer())))
        }
        return router
    }

    private static func message(id: Int64, on db: FerryConnection) throws -> Message? {
        try db.fetchOne("SELECT id, conversation_id, sender, body, sent_at FROM messages WHERE id = ?", [id])?.decode(Message.self)
    }
}
