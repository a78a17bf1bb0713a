import Foundation
import Testing

/// The folders of `Sources/Ferry` form a one-way graph (Docs/Architecture.md):
///
///     facade (FerryDatabase, the folder's top) → Access | Stepping | Schema → Mapping → State → Plan → Support
///
/// A folder may use the folders below it, never one above it or beside it. The check reads the
/// sources: it collects the top-level types each folder declares and reports every file that
/// names a type of a folder it may not use.
@Suite struct LayeringTests {
    /// Folders by layer, top first; folders of one layer may not use each other.
    static let layers: [[String]] = [[""], ["Access", "Stepping", "Schema"], ["Mapping"], ["State"], ["Plan"], ["Support"]]

    static let sourcesRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources")

    /// Swift files under `Sources/<module>`, keyed by their path relative to it.
    static func sources(of module: String) throws -> [(path: String, text: String)] {
        let root = sourcesRoot.appendingPathComponent(module)
        let paths = FileManager.default.enumerator(atPath: root.path)?.compactMap { $0 as? String } ?? []
        return try paths.filter { $0.hasSuffix(".swift") }.sorted().map { path in
            (path, try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8))
        }
    }

    /// The folder of a file (`""` for files at the top).
    static func folder(of path: String) -> String {
        path.contains("/") ? String(path.prefix { $0 != "/" }) : ""
    }

    /// The code of a file: `//` comment lines and the text of string literals removed, their
    /// interpolations kept (SQL built in strings names Swift types there).
    static func code(_ text: String) -> String {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> Substring in
            let trimmed = line.drop { $0 == " " }
            return trimmed.hasPrefix("//") ? "" : line
        }
        var output = ""
        var inString = false
        var depth = 0  // parentheses inside the current interpolation
        var interpolations: [Int] = []  // depth stack of interpolations open in strings
        var previous: Character = " "
        for character in lines.joined(separator: "\n") {
            if inString {
                if previous == "\\" && character == "(" {
                    inString = false
                    interpolations.append(depth)
                    depth = 1
                    output.append("(")
                } else if character == "\"" && previous != "\\" {
                    inString = false
                    output.append("\"")
                }
                previous = previous == "\\" && character == "\\" ? " " : character
                continue
            }
            if !interpolations.isEmpty {
                if character == "(" { depth += 1 }
                if character == ")" {
                    depth -= 1
                    if depth == 0 {
                        depth = interpolations.removeLast()
                        inString = true
                        previous = " "
                        output.append(")")
                        continue
                    }
                }
            }
            if character == "\"" { inString = true; previous = " " }
            output.append(character)
        }
        return output
    }

    /// The types a file declares at its top level.
    static func declaredTypes(in text: String) -> [String] {
        let pattern = #"(?m)^(?:@[\w.]+(?:\([^)]*\))?\s+)*(?:(?:public|internal|fileprivate|private|package|final|indirect)\s+)*(?:struct|enum|class|protocol|actor|typealias|func|let|var)\s+(\w+)"#
        let regex = try! NSRegularExpression(pattern: pattern)
        let range = NSRange(text.startIndex..., in: text)
        return regex.matches(in: text, range: range).compactMap { Range($0.range(at: 1), in: text).map { String(text[$0]) } }
    }

    static func identifiers(in text: String) -> Set<String> {
        var result: Set<String> = []
        var current = ""
        for character in text {
            if character.isLetter || character.isNumber || character == "_" { current.append(character) } else if !current.isEmpty {
                result.insert(current)
                current = ""
            }
        }
        if !current.isEmpty { result.insert(current) }
        return result
    }

    static func layer(of folder: String) -> Int? { layers.firstIndex { $0.contains(folder) } }

    @Test func foldersUseOnlyTheFoldersBelowThem() throws {
        let files = try Self.sources(of: "Ferry")
        var owner: [String: String] = [:]  // type name -> folder
        for file in files {
            for name in Self.declaredTypes(in: file.text) { owner[name] = Self.folder(of: file.path) }
        }
        #expect(owner["FerryDatabase"] == "", "the facade sits at the top of Sources/Ferry")
        #expect(owner["MigrationState"] == "State")
        var violations: [String] = []
        for file in files {
            let from = Self.folder(of: file.path)
            let fromLayer = try #require(Self.layer(of: from), "folder \(from) has no layer: add it to LayeringTests.layers and Docs/Architecture.md")
            for name in Self.identifiers(in: Self.code(file.text)).sorted() {
                guard let to = owner[name], to != from, let toLayer = Self.layer(of: to) else { continue }
                if toLayer <= fromLayer { violations.append("\(file.path) uses \(name) of \(to.isEmpty ? "the facade" : to)/") }
            }
        }
        #expect(violations.isEmpty, "\(violations.joined(separator: "\n"))")
    }

    /// Ferry's persisted tables are named in one place: the state layer (`MigrationState`,
    /// `SchemaMigrationLog`). Everything else, the CLI included, goes through it.
    @Test func catalogTablesAreNamedOnlyByTheStateLayer() throws {
        var offenders: [String] = []
        for module in ["Ferry", "FerryCLI", "FerrySQLite", "FerrySQL"] {
            for file in try Self.sources(of: module) where !(module == "Ferry" && Self.folder(of: file.path) == "State") {
                let code = Self.code(file.text)
                for name in ["ferry_migration_", "ferry_schema_migrations"] where code.contains(name) {
                    offenders.append("\(module)/\(file.path) names \(name)")
                }
            }
        }
        #expect(offenders.isEmpty, "\(offenders.joined(separator: "\n"))")
    }
}
