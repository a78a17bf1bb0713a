import Foundation
import Testing

/// One entry of the shared SQL corpus (`shared/sql-corpus/corpus.jsonl`).
struct CorpusEntry: Decodable {
    let sql: String
    let kind: String
    let valid: String
    let source: String
}

enum Corpus {
    /// Finds `shared/sql-corpus/corpus.jsonl` by walking up from this file: the package sits beside `shared/`.
    static func url(file: String = #filePath) -> URL? {
        var directory = URL(fileURLWithPath: file).deletingLastPathComponent()
        for _ in 0..<8 {
            let candidate = directory.appendingPathComponent("shared/sql-corpus/corpus.jsonl")
            if FileManager.default.fileExists(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return nil
    }

    /// True when the corpus is beside the package (the corpus tests run only then, reported as
    /// skipped otherwise).
    static let isAvailable = url() != nil

    /// Why the corpus tests are skipped when it is not.
    static let unavailable: Comment = "shared/sql-corpus/corpus.jsonl is not beside the package (a clone without the shared inputs)"

    static func load() throws -> [CorpusEntry]? {
        guard let url = url() else { return nil }
        let data = try Data(contentsOf: url)
        let decoder = JSONDecoder()
        var entries: [CorpusEntry] = []
        for line in data.split(separator: UInt8(ascii: "\n")) where !line.isEmpty {
            entries.append(try decoder.decode(CorpusEntry.self, from: Data(line)))
        }
        return entries
    }
}

extension Corpus {
    /// The corpus tests' heavy loops run here, one at a time.
    private static let queue = DispatchQueue(label: "ferry.corpus-tests")

    /// Runs `body` on a serial queue of the corpus tests and returns its result.
    ///
    /// Each corpus test takes seconds of CPU (a minute on a loaded machine). Run as plain synchronous tests they
    /// hold the few threads Swift concurrency shares with every other test (two on a two-core machine), and the
    /// tasks of async tests elsewhere starve (PoolTests' cancellation tests timed out waiting for theirs to start);
    /// run side by side on threads of their own they take both cores. One at a time, off those threads, they take
    /// one core and leave the other tests theirs.
    static func runSerially<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try body() }) }
        }
    }
}
