import Foundation
import Testing
@testable import Ferry

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

    /// The text of a file without its comments (`//` to the end of the line, `/* ... */`), string
    /// literals kept whole: what the catalog-name and reserved-name rules read (SQL lives in strings).
    static func withoutComments(_ text: String) -> String {
        var output = ""
        var inString = false, inLineComment = false, blockDepth = 0
        var previous: Character = " "
        for character in text {
            defer { previous = previous == "\\" && character == "\\" ? " " : character }
            if inLineComment {
                if character == "\n" { inLineComment = false; output.append(character) }
                continue
            }
            if blockDepth > 0 {
                if previous == "/" && character == "*" { blockDepth += 1 }
                if previous == "*" && character == "/" { blockDepth -= 1 }
                continue
            }
            if inString {
                if character == "\"" && previous != "\\" { inString = false }
                output.append(character)
                continue
            }
            if previous == "/" && character == "/" { output.removeLast(); inLineComment = true; continue }
            if previous == "/" && character == "*" { output.removeLast(); blockDepth = 1; continue }
            if character == "\"" { inString = true }
            output.append(character)
        }
        return output
    }

    /// The types a file declares at its top level.
    /// The types, functions and constants a file declares at its top level, and the types nested
    /// in its declarations and extensions (at any depth).
    static func declarations(in text: String) -> (topLevel: [String], nested: [String]) {
        let attributes = #"(?:@[\w.]+(?:\([^)]*\))?\s+)*"#
        let modifiers = #"(?:(?:public|internal|fileprivate|private|package|final|indirect|nonisolated)(?:\(set\))?\s+)*"#
        let topLevel = "(?m)^" + attributes + modifiers + #"(?:struct|enum|class|protocol|actor|typealias|func|let|var)\s+(\w+)"#
        let nested = "(?m)^[ \\t]+" + attributes + modifiers + #"(?:struct|enum|class|protocol|actor|typealias)\s+(\w+)"#
        let range = NSRange(text.startIndex..., in: text)
        func names(_ pattern: String) -> [String] {
            try! NSRegularExpression(pattern: pattern).matches(in: text, range: range)
                .compactMap { Range($0.range(at: 1), in: text).map { String(text[$0]) } }
        }
        return (names(topLevel), names(nested))
    }

    /// Every type name a file declares (top-level or nested).
    static func declaredTypes(in text: String) -> [String] {
        let (top, nested) = declarations(in: text)
        return top + nested
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

    /// Every use of a type of a folder that `path`'s folder may not use, given every file.
    /// - Parameter imported: type names the imported modules declare: a nested type of the same
    ///   name (`SchemaLint.ParsedStatement`) does not make them a folder's.
    static func layeringViolations(_ files: [(path: String, text: String)], imported: Set<String> = []) throws -> [String] {
        var owner: [String: String] = [:]  // type name -> folder
        var nested: [String: Set<String>] = [:]  // nested type name -> folders declaring one
        for file in files {
            let (top, inner) = declarations(in: file.text)
            for name in top { owner[name] = folder(of: file.path) }
            for name in inner { nested[name, default: []].insert(folder(of: file.path)) }
        }
        // A nested type names its folder when no top-level declaration has its name and one folder
        // alone declares one (`MigrationProgress.Table` and a lint rule's `Table` say nothing).
        for (name, folders) in nested where owner[name] == nil && folders.count == 1 && !imported.contains(name) { owner[name] = folders.first }
        var violations: [String] = []
        for file in files {
            let from = folder(of: file.path)
            let fromLayer = try #require(layer(of: from), "folder \(from) has no layer: add it to LayeringTests.layers and Docs/Architecture.md")
            for name in identifiers(in: code(file.text)).sorted() {
                guard let to = owner[name], to != from, let toLayer = layer(of: to) else { continue }
                if toLayer <= fromLayer { violations.append("\(file.path) uses \(name) of \(to.isEmpty ? "the facade" : to)/") }
            }
        }
        return violations
    }

    /// Files outside the state layer that name a catalog table, in code or in a string (SQL).
    static func catalogOffenders(_ files: [(module: String, path: String, text: String)]) -> [String] {
        var offenders: [String] = []
        for file in files where !(file.module == "Ferry" && folder(of: file.path) == "State") {
            let text = withoutComments(file.text)
            for name in ["ferry_migration_", "ferry_schema_migrations"] where text.contains(name) {
                offenders.append("\(file.module)/\(file.path) names \(name)")
            }
        }
        return offenders
    }

    /// The names of the objects Ferry's SQL creates (`CREATE [TEMP] TABLE|TRIGGER|INDEX|VIEW [IF NOT
    /// EXISTS] [schema.]name`) that the authorizer does not reserve. A name written as an
    /// interpolation of a string constant (`\(suspendTable)`, `\(MigrationState.movedRowsTable)`) is
    /// read from that constant's declaration (`static let suspendTable = "ferry_..."`); names that
    /// are neither (the app's, a variable) are not checked. Quarantine tables are the app's to read
    /// and empty.
    static func unreservedCreatedObjects(_ files: [(path: String, text: String)], isReserved: (String) -> Bool) -> (created: [String], unreserved: [String]) {
        let constantPattern = try! NSRegularExpression(pattern: #"static let (\w+)(?:: String)? = "([^"\\]*)""#)
        var constants: [String: String] = [:]
        for file in files {
            let text = withoutComments(file.text)
            for match in constantPattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                guard let name = Range(match.range(at: 1), in: text), let value = Range(match.range(at: 2), in: text) else { continue }
                constants[String(text[name])] = String(text[value])
            }
        }
        let create = #"(?i)CREATE\s+(?:TEMP\s+|TEMPORARY\s+|UNIQUE\s+)?(?:TABLE|TRIGGER|INDEX|VIEW)\s+(?:IF\s+NOT\s+EXISTS\s+)?(?:(?:main|temp)\.)?"#
        let regex = try! NSRegularExpression(pattern: create + #"(?:"?(ferry_\w*)|\\\((?:[\w]+\.)*(\w+)\))"#)
        var created: [String] = []
        var unreserved: [String] = []
        for file in files {
            let text = withoutComments(file.text)
            for match in regex.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                let name: String
                if let literal = Range(match.range(at: 1), in: text) {
                    name = String(text[literal])
                } else if let constant = Range(match.range(at: 2), in: text), let value = constants[String(text[constant])], value.hasPrefix("ferry_") {
                    name = value
                } else {
                    continue
                }
                created.append(name)
                if !name.lowercased().hasPrefix("ferry_quarantine") && !isReserved(name) { unreserved.append("\(file.path) creates \(name)") }
            }
        }
        return (created, unreserved)
    }

    @Test func foldersUseOnlyTheFoldersBelowThem() throws {
        let files = try Self.sources(of: "Ferry")
        let owners = Set(files.flatMap { Self.declaredTypes(in: $0.text) })
        #expect(owners.isSuperset(of: ["FerryDatabase", "MigrationState", "StatementPlan", "RowMovePlan", "SchemaEffect"]))
        let imported = Set(try ["FerrySQL", "FerrySQLite"].flatMap { try Self.sources(of: $0) }.flatMap { Self.declarations(in: $0.text).topLevel })
        let violations = try Self.layeringViolations(files, imported: imported)
        #expect(violations.isEmpty, "\(violations.joined(separator: "\n"))")
    }

    /// Ferry's persisted tables are named in one place: the state layer (`MigrationState`,
    /// `SchemaMigrationLog`). Everything else, the CLI included, goes through it, in its code and
    /// in the SQL it writes in strings.
    @Test func catalogTablesAreNamedOnlyByTheStateLayer() throws {
        var files: [(module: String, path: String, text: String)] = []
        for module in ["Ferry", "FerryCLI", "FerrySQLite", "FerrySQL"] {
            files += try Self.sources(of: module).map { (module, $0.path, $0.text) }
        }
        let offenders = Self.catalogOffenders(files)
        #expect(offenders.isEmpty, "\(offenders.joined(separator: "\n"))")
    }

    /// Every object Ferry's SQL creates is in the authorizer's one list of reserved names
    /// (`AccessPolicy.reservedObjectPrefixes`).
    @Test func everyObjectFerryCreatesIsReserved() throws {
        let files = try Self.sources(of: "Ferry")
        let (created, unreserved) = Self.unreservedCreatedObjects(files, isReserved: AccessPolicy.isReservedObject)
        #expect(unreserved.isEmpty, "\(unreserved.joined(separator: "\n"))")
        // The scan finds the write path's temp tables and the catalogs (it reads what it checks).
        #expect(Set(created).isSuperset(of: MigratingTableSQL.temporaryTables + [MigrationState.tablesTable]), "\(created)")
    }

    /// Each rule fails on a planted violation: a layer using one above it through a nested type
    /// and an extension, a catalog name inside a string, a created object nobody reserved.
    @Test func eachRuleFailsOnAPlantedViolation() throws {
        let planted: [(path: String, text: String)] = [
            ("FerryDatabase.swift", "public final class FerryDatabase {}\n"),
            ("Access/Planner.swift", "enum Planning {\n    struct PlannedThing {}\n}\nstruct Planner {}\n"),
            ("State/Record.swift", "struct Record {\n    let thing: PlannedThing  // nested type of Access\n}\n"),
            ("Mapping/Mapper.swift", "struct Mapper { let planner: Planner }\n"),
            ("Support/Quote.swift", "func quote() {}\n"),
        ]
        let violations = try Self.layeringViolations(planted)
        #expect(violations.contains("State/Record.swift uses PlannedThing of Access/"), "\(violations)")
        #expect(violations.contains("Mapping/Mapper.swift uses Planner of Access/"), "\(violations)")
        #expect(violations.count == 2, "a folder may use the folders below it: \(violations)")

        let sql: [(module: String, path: String, text: String)] = [
            ("Ferry", "Stepping/Sneaky.swift", "let sql = \"DELETE FROM ferry_migration_tables\"\n"),
            ("Ferry", "Stepping/Commented.swift", "// ferry_migration_tables in a comment is fine\nlet x = 1 /* ferry_schema_migrations */\n"),
            ("Ferry", "State/Owner.swift", "let sql = \"DELETE FROM ferry_migration_tables\"\n"),
        ]
        #expect(Self.catalogOffenders(sql) == ["Ferry/Stepping/Sneaky.swift names ferry_migration_"])

        let creating: [(path: String, text: String)] = [
            ("Access/New.swift", "let sql = \"CREATE TEMP TABLE IF NOT EXISTS ferry_new_scratch(x)\"\n"),
            ("Access/Old.swift", "let sql = \"CREATE TEMP TABLE IF NOT EXISTS ferry_move_rows(r)\"\n"),
            ("Access/Named.swift", "static let scratch = \"ferry_scratch_rows\"\nlet sql = \"CREATE TEMP TABLE \\(Self.scratch)(r)\"\n"),
        ]
        #expect(Self.unreservedCreatedObjects(creating, isReserved: AccessPolicy.isReservedObject).unreserved
                == ["Access/New.swift creates ferry_new_scratch", "Access/Named.swift creates ferry_scratch_rows"])
    }
}
