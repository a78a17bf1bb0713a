import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A directory for one test, removed when released.
final class Scratch: Sendable {
    let url: URL
    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("messages-service-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(at: url) }
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }
}

/// What the tests read from the service.
struct MessageJSON: Codable, Sendable, Equatable {
    var id: Int64
    var conversation_id: Int64
    var body: String?
}

/// `GET /migration`.
struct StatusJSON: Codable, Sendable {
    var finished: Bool
    var rows_moved: Int64
    var rows_left: Int64
}

struct ServiceError: Error, CustomStringConvertible {
    let description: String
}

/// The built `messages-service`, started on a free port with the directory's `app.db` and `plan.json`.
final class ServiceProcess: @unchecked Sendable {
    let process = Process()
    let port: Int
    private let outputPath: String

    init(directory: Scratch) throws {
        outputPath = directory.path("service-\(UUID().uuidString).out")
        FileManager.default.createFile(atPath: outputPath, contents: nil)
        process.executableURL = Self.executable
        process.arguments = ["--db", directory.path("app.db"), "--plan", directory.path("plan.json"), "--port", "0"]
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        process.standardError = FileHandle.standardError
        try process.run()
        // It prints `listening on HOST:PORT` once the server runs.
        let deadline = Date().addingTimeInterval(60)
        var found: Int?
        while found == nil && Date() < deadline && process.isRunning {
            let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
            if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("listening on ") }),
               let port = line.split(separator: ":").last.flatMap({ Int($0) }) {
                found = port
            } else {
                Thread.sleep(forTimeInterval: 0.02)
            }
        }
        guard let found else {
            process.terminate()
            throw ServiceError(description: "the service did not start (is it built? \(Self.executable.path))")
        }
        port = found
    }

    deinit { if process.isRunning { process.terminate() } }

    /// `messages-service` next to the test bundle, or in `.build/debug`.
    static var executable: URL {
        let here = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        var candidates = [here, Bundle.main.bundleURL.deletingLastPathComponent()]
        var url = here
        while url.path != "/" && (url.pathExtension == "xctest" || ["Contents", "MacOS"].contains(url.lastPathComponent)) {
            url = url.deletingLastPathComponent()
            candidates.append(url)
        }
        candidates.append(URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent(".build/debug"))
        for directory in candidates {
            let binary = directory.appendingPathComponent("messages-service")
            if FileManager.default.isExecutableFile(atPath: binary.path) { return binary }
        }
        return candidates.last!.appendingPathComponent("messages-service")
    }

    /// Sends SIGTERM and waits for the exit; returns the exit status.
    func terminate() async throws -> Int32 {
        process.terminate()
        let deadline = ContinuousClock.now + .seconds(30)
        while process.isRunning {
            guard ContinuousClock.now < deadline else { throw ServiceError(description: "no exit 30 s after SIGTERM") }
            try await Task.sleep(for: .milliseconds(20))
        }
        return process.terminationStatus
    }

    // MARK: HTTP

    private func request(_ path: String, method: String = "GET", body: Data? = nil) async throws -> (Int, Data) {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/\(path)")!)
        request.httpMethod = method
        request.httpBody = body
        if body != nil { request.setValue("application/json", forHTTPHeaderField: "Content-Type") }
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, data)
    }

    func get(_ path: String) async throws -> String {
        let (status, data) = try await request(path)
        guard status == 200 else { throw ServiceError(description: "GET /\(path): HTTP \(status)") }
        return String(decoding: data, as: UTF8.self)
    }

    /// `GET /messages/{id}`: nil on 404.
    func message(_ id: Int64) async throws -> MessageJSON? {
        let (status, data) = try await request("messages/\(id)")
        if status == 404 { return nil }
        guard status == 200 else { throw ServiceError(description: "GET /messages/\(id): HTTP \(status)") }
        return try JSONDecoder().decode(MessageJSON.self, from: data)
    }

    /// `POST /messages`: the stored message, once the service acknowledged it (201).
    func post(conversation: Int64, body: String) async throws -> MessageJSON {
        let input = try JSONSerialization.data(withJSONObject: ["conversation_id": conversation, "body": body])
        let (status, data) = try await request("messages", method: "POST", body: input)
        guard status == 201 else { throw ServiceError(description: "POST /messages: HTTP \(status)") }
        return try JSONDecoder().decode(MessageJSON.self, from: data)
    }

    func status() async throws -> StatusJSON {
        try JSONDecoder().decode(StatusJSON.self, from: Data(try await get("migration").utf8))
    }

    /// Polls `GET /migration` until `condition` holds.
    func waitForStatus(timeout: Duration = .seconds(30), _ condition: (StatusJSON) -> Bool) async throws -> StatusJSON {
        let deadline = ContinuousClock.now + timeout
        while true {
            let status = try await status()
            if condition(status) { return status }
            guard ContinuousClock.now < deadline else { throw ServiceError(description: "migration status never matched: \(status)") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}
