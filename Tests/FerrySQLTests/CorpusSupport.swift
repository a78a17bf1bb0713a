import Foundation

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
