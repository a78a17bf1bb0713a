import Foundation
import FerrySQLite

/// A migration plan as a JSON file: the target database, its sources (with their keys and cipher
/// settings) and, optionally, the pacing of auto-migration. The `ferry` tool's `--plan` reads it,
/// and so can a service (see Docs/Services.md).
///
/// ```json
/// { "target": { "path": "app.db", "key": "optional passphrase", "cipher": { "compatibility": 4 } },
///   "sources": [ { "path": "legacy.db", "keyEnv": "LEGACY_KEY", "cipher": { "compatibility": 3 },
///       "tables": [ { "source": "messages", "target": "messages", "filter": "conversation_id < 1000",
///                     "columns": [ { "column": "sent_at", "from": "CAST(sent AS REAL)" } ] } ] } ],
///   "schedule": { "budgetMilliseconds": 10 } }
/// ```
/// Decoding is strict: an unknown field is an error, and so are a field named twice in one object
/// and a path holding a NUL byte. Relative paths are relative to the plan file's directory. A source whose `path` is `null` (or the target's path) is the target file itself.
/// A key comes as `key` (a passphrase), `rawKey` (hexadecimal) or `keyEnv` (the name of an
/// environment variable holding the passphrase, so that no secret sits in the file).
/// `"keepJournalMode": true` on a source leaves its file in rollback-journal mode
/// (`MigrationSource.keepsJournalMode`).
public struct MigrationPlanFile: Sendable {
    /// The target database's absolute path.
    public var targetPath: String
    /// The target's cipher (nil: a plain database).
    public var targetCipher: Cipher?
    /// The plan to register.
    public var plan: MigrationPlan
    /// The pacing given in the file, if any.
    public var schedule: Schedule

    /// The optional `schedule` object of a plan file: each field is nil when the file leaves it out.
    public struct Schedule: Sendable, Hashable {
        /// The time budget of one batch (`budgetMilliseconds`).
        public var budget: Duration?
        /// The pause between batches (`intervalMilliseconds`).
        public var interval: Duration?
        /// Run batches back to back (`drain`).
        public var drain: Bool?
    }

    /// Reads and resolves the plan file at `path`.
    /// - Parameters:
    ///   - path: the plan file; relative paths inside it are relative to its directory.
    ///   - environment: where `keyEnv` keys are looked up.
    /// - Throws: `FerryError.fileNotFound` when there is no such file; `FerryError.invalidPlanFile`
    ///   with a one-line reason (naming the offending field) for an unreadable, malformed or
    ///   invalid one.
    public static func load(path: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws(FerryError) -> MigrationPlanFile {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else {
            throw .fileNotFound(path: path)
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .invalidPlanFile(path: path, reason: "cannot read the file")
        }
        let document: Document
        do {
            document = try JSONDecoder().decode(Document.self, from: data)
        } catch let error as Problem {
            throw .invalidPlanFile(path: path, reason: error.message)
        } catch let error as DecodingError {
            throw .invalidPlanFile(path: path, reason: describe(error))
        } catch {
            throw .invalidPlanFile(path: path, reason: "\(error)")
        }
        if let duplicate = JSONDuplicateFields.first(in: data) {
            throw .invalidPlanFile(path: path, reason: "\(duplicate.location): duplicate field \"\(duplicate.field)\"")
        }
        let directory = URL(fileURLWithPath: path).standardizedFileURL.deletingLastPathComponent()
        do {
            return try document.resolve(relativeTo: directory, environment: environment)
        } catch let error as Problem {
            throw .invalidPlanFile(path: path, reason: error.message)
        } catch {
            throw .invalidPlanFile(path: path, reason: "\(error)")
        }
    }

    /// What is wrong with a plan file, on one line (becomes `FerryError.invalidPlanFile`).
    struct Problem: Error {
        let message: String
        init(_ message: String) { self.message = message }
    }

    /// A one-line description of a decoding error, with the JSON path of the offending value.
    static func describe(_ error: DecodingError) -> String {
        switch error {
        case .typeMismatch(let type, let context):
            return "\(location(context.codingPath)): expected \(typeName(type))"
        case .valueNotFound(let type, let context):
            return "\(location(context.codingPath)): expected \(typeName(type)), found null"
        case .keyNotFound(let key, let context):
            return "\(location(context.codingPath)): missing field \"\(key.stringValue)\""
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty { return "malformed JSON" }
            return "\(location(context.codingPath)): \(context.debugDescription)"
        @unknown default:
            return "\(error)"
        }
    }

    /// `sources[0].tables[1]`, or `the document` for the root.
    static func location(_ path: [any CodingKey]) -> String {
        var text = ""
        for key in path {
            if let index = key.intValue { text += "[\(index)]" } else { text += (text.isEmpty ? "" : ".") + key.stringValue }
        }
        return text.isEmpty ? "the document" : text
    }

    private static func typeName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: return "a string"
        case is Int.Type: return "an integer"
        case is Bool.Type: return "true or false"
        case is Array<Any>.Type: return "an array"
        default:
            let name = "\(type)"
            if name.hasPrefix("Array") { return "an array" }
            if name.hasPrefix("Dictionary") { return "an object" }
            return "an object"
        }
    }
}

// MARK: - The JSON document

extension MigrationPlanFile {
    /// A coding key for any field name, used to reject unknown fields.
    struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int?
        init(_ string: String) { stringValue = string }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { stringValue = String(intValue); self.intValue = intValue }
    }

    /// Throws when the object being decoded has a field outside `allowed`.
    static func rejectUnknownFields(_ decoder: any Decoder, allowed: Set<String>) throws {
        let container = try decoder.container(keyedBy: AnyKey.self)
        for key in container.allKeys where !allowed.contains(key.stringValue) {
            let known = allowed.sorted().map { "\"\($0)\"" }.joined(separator: ", ")
            throw Problem("\(location(decoder.codingPath)): unknown field \"\(key.stringValue)\" (known fields: \(known))")
        }
    }

    /// The root object.
    struct Document: Decodable {
        var target: DatabaseSpec
        var sources: [SourceSpec]
        var schedule: ScheduleSpec?

        init(from decoder: any Decoder) throws {
            try MigrationPlanFile.rejectUnknownFields(decoder, allowed: ["target", "sources", "schedule"])
            let c = try decoder.container(keyedBy: AnyKey.self)
            target = try c.decode(DatabaseSpec.self, forKey: AnyKey("target"))
            sources = try c.decode([SourceSpec].self, forKey: AnyKey("sources"))
            schedule = try c.decodeIfPresent(ScheduleSpec.self, forKey: AnyKey("schedule"))
        }

        func resolve(relativeTo directory: URL, environment: [String: String]) throws -> MigrationPlanFile {
            guard let targetPathText = target.path, !targetPathText.isEmpty else {
                throw Problem("target: \"path\" must be a file path")
            }
            let targetPath = MigrationPlanFile.absolute(targetPathText, relativeTo: directory)
            let targetCipher = try target.cipher(context: "target", environment: environment)
            var plan = MigrationPlan()
            guard !sources.isEmpty else { throw Problem("sources: the plan has no source") }
            for (index, source) in sources.enumerated() {
                let context = "sources[\(index)]"
                let location: MigrationSourceLocation
                var cipher: Cipher?
                if let path = source.path, !path.isEmpty {
                    let absolute = MigrationPlanFile.absolute(path, relativeTo: directory)
                    if MigrationPlanFile.sameFile(absolute, targetPath) {
                        location = .targetFile
                    } else {
                        location = .file(absolute)
                    }
                } else if source.path == nil {
                    location = .targetFile
                } else {
                    throw Problem("\(context): \"path\" is empty (use null for the target file)")
                }
                if location == .targetFile {
                    if source.hasKey || source.cipherSpec != nil {
                        throw Problem("\(context): the source is the target file, which uses the target's key; give it no key or cipher")
                    }
                } else {
                    cipher = try source.database.cipher(context: context, environment: environment)
                }
                guard !source.tables.isEmpty else { throw Problem("\(context): \"tables\" is empty") }
                let tables = source.tables.map(\.mapping)
                plan.add(MigrationSource(location, cipher: cipher, tables: tables, keepsJournalMode: source.keepJournalMode))
            }
            var schedule = Schedule()
            if let spec = self.schedule {
                schedule = Schedule(budget: spec.budgetMilliseconds.map { .milliseconds($0) }, interval: spec.intervalMilliseconds.map { .milliseconds($0) },
                                    drain: spec.drain)
            }
            return MigrationPlanFile(targetPath: targetPath, targetCipher: targetCipher, plan: plan, schedule: schedule)
        }
    }

    /// `{ "path", "key" | "rawKey" | "keyEnv", "cipher" }`: a database file and how to open it.
    struct DatabaseSpec: Decodable {
        static let fields: Set<String> = ["path", "key", "rawKey", "keyEnv", "cipher"]
        var path: String?
        var key: String?
        var rawKey: String?
        var keyEnv: String?
        var cipherSpec: CipherSpec?
        var hasKey: Bool { key != nil || rawKey != nil || keyEnv != nil }

        init(from decoder: any Decoder) throws {
            try MigrationPlanFile.rejectUnknownFields(decoder, allowed: Self.fields)
            try self.init(decoding: decoder)
        }

        /// Decodes the fields without checking for unknown ones (sources add `tables`).
        init(decoding decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: AnyKey.self)
            guard c.contains(AnyKey("path")) else {
                throw DecodingError.keyNotFound(AnyKey("path"), .init(codingPath: decoder.codingPath, debugDescription: ""))
            }
            path = try c.decodeIfPresent(String.self, forKey: AnyKey("path"))
            if let path, path.utf8.contains(0) {
                // No file path holds one: the file would be opened under a mangled name (`app.db%00...`).
                throw Problem("\(MigrationPlanFile.location(decoder.codingPath + [AnyKey("path")])): contains a NUL byte (\\u0000), which no file path can hold")
            }
            key = try c.decodeIfPresent(String.self, forKey: AnyKey("key"))
            rawKey = try c.decodeIfPresent(String.self, forKey: AnyKey("rawKey"))
            keyEnv = try c.decodeIfPresent(String.self, forKey: AnyKey("keyEnv"))
            cipherSpec = try c.decodeIfPresent(CipherSpec.self, forKey: AnyKey("cipher"))
        }

        /// The cipher these fields describe, or nil for a plain database.
        func cipher(context: String, environment: [String: String]) throws -> Cipher? {
            let given = [key != nil, rawKey != nil, keyEnv != nil].filter { $0 }.count
            guard given <= 1 else { throw Problem("\(context): give at most one of \"key\", \"rawKey\" and \"keyEnv\"") }
            let settings = try cipherSpec?.settings(context: context + ".cipher") ?? CipherSettings()
            let cipherKey: CipherKey
            if let key {
                cipherKey = .passphrase(key)
            } else if let rawKey {
                do { cipherKey = try .raw(hex: rawKey) } catch { throw Problem("\(context).rawKey: must be 64 hexadecimal digits (96 with the salt)") }
            } else if let keyEnv {
                guard let value = environment[keyEnv] else {
                    throw Problem("\(context).keyEnv: environment variable \(keyEnv) is not set")
                }
                cipherKey = .passphrase(value)
            } else {
                if cipherSpec != nil { throw Problem("\(context): \"cipher\" settings need a key") }
                return nil
            }
            return Cipher(key: cipherKey, settings: settings)
        }
    }

    /// A source: a database (`path` may be null: the target file), its table mappings, and
    /// `keepJournalMode` (`MigrationSource.keepsJournalMode`).
    struct SourceSpec: Decodable {
        var database: DatabaseSpec
        var tables: [TableSpec]
        var keepJournalMode: Bool
        var path: String? { database.path }
        var hasKey: Bool { database.hasKey }
        var cipherSpec: CipherSpec? { database.cipherSpec }

        init(from decoder: any Decoder) throws {
            try MigrationPlanFile.rejectUnknownFields(decoder, allowed: DatabaseSpec.fields.union(["tables", "keepJournalMode"]))
            database = try DatabaseSpec(decoding: decoder)
            let c = try decoder.container(keyedBy: AnyKey.self)
            tables = try c.decode([TableSpec].self, forKey: AnyKey("tables"))
            keepJournalMode = try c.decodeIfPresent(Bool.self, forKey: AnyKey("keepJournalMode")) ?? false
        }
    }

    /// `{ "source", "target", "filter", "columns" }`: one table mapping; `target` defaults to
    /// `source`; `columns` is a list of `{ "column", "from" }` feeds.
    struct TableSpec: Decodable {
        var source: String
        var target: String?
        var filter: String?
        var columns: [ColumnSpec]

        init(from decoder: any Decoder) throws {
            try MigrationPlanFile.rejectUnknownFields(decoder, allowed: ["source", "target", "filter", "columns"])
            let c = try decoder.container(keyedBy: AnyKey.self)
            source = try c.decode(String.self, forKey: AnyKey("source"))
            target = try c.decodeIfPresent(String.self, forKey: AnyKey("target"))
            filter = try c.decodeIfPresent(String.self, forKey: AnyKey("filter"))
            columns = try c.decodeIfPresent([ColumnSpec].self, forKey: AnyKey("columns")) ?? []
        }

        /// The mapping it describes.
        var mapping: TableMapping {
            TableMapping(target: target ?? source, source: source, filter: filter, columns: columns.map { ColumnFeed($0.column, from: $0.from) })
        }
    }

    /// `{ "column", "from" }`: a target column fed by an SQL expression over the source row.
    struct ColumnSpec: Decodable {
        var column: String
        var from: String

        init(from decoder: any Decoder) throws {
            try MigrationPlanFile.rejectUnknownFields(decoder, allowed: ["column", "from"])
            let c = try decoder.container(keyedBy: AnyKey.self)
            column = try c.decode(String.self, forKey: AnyKey("column"))
            from = try c.decode(String.self, forKey: AnyKey("from"))
        }
    }

    /// `{ "compatibility", "pageSize", "kdfIterations", ... }`: SQLCipher settings (`CipherSettings`).
    struct CipherSpec: Decodable {
        var compatibility: Int?
        var pageSize: Int?
        var kdfIterations: Int?
        var hmacAlgorithm: String?
        var kdfAlgorithm: String?
        var useHMAC: Bool?
        var plaintextHeaderSize: Int?

        init(from decoder: any Decoder) throws {
            try MigrationPlanFile.rejectUnknownFields(decoder, allowed: [
                "compatibility", "pageSize", "kdfIterations", "hmacAlgorithm", "kdfAlgorithm", "useHMAC", "plaintextHeaderSize",
            ])
            let c = try decoder.container(keyedBy: AnyKey.self)
            compatibility = try c.decodeIfPresent(Int.self, forKey: AnyKey("compatibility"))
            pageSize = try c.decodeIfPresent(Int.self, forKey: AnyKey("pageSize"))
            kdfIterations = try c.decodeIfPresent(Int.self, forKey: AnyKey("kdfIterations"))
            hmacAlgorithm = try c.decodeIfPresent(String.self, forKey: AnyKey("hmacAlgorithm"))
            kdfAlgorithm = try c.decodeIfPresent(String.self, forKey: AnyKey("kdfAlgorithm"))
            useHMAC = try c.decodeIfPresent(Bool.self, forKey: AnyKey("useHMAC"))
            plaintextHeaderSize = try c.decodeIfPresent(Int.self, forKey: AnyKey("plaintextHeaderSize"))
        }

        /// The `CipherSettings`, validated.
        func settings(context: String) throws -> CipherSettings {
            func algorithm<T: RawRepresentable>(_ text: String?, _ field: String, prefix: String) throws -> T? where T.RawValue == String {
                guard let text else { return nil }
                let upper = text.uppercased()
                if let value = T(rawValue: upper) ?? T(rawValue: prefix + upper) { return value }
                throw Problem("\(context).\(field): unknown algorithm \"\(text)\" (use sha1, sha256 or sha512)")
            }
            let settings = CipherSettings(
                compatibility: compatibility, pageSize: pageSize, kdfIterations: kdfIterations,
                hmacAlgorithm: try algorithm(hmacAlgorithm, "hmacAlgorithm", prefix: "HMAC_"),
                kdfAlgorithm: try algorithm(kdfAlgorithm, "kdfAlgorithm", prefix: "PBKDF2_HMAC_"),
                useHMAC: useHMAC, plaintextHeaderSize: plaintextHeaderSize)
            do { try settings.validate() } catch { throw Problem("\(context): \(error)") }
            return settings
        }
    }

    /// `{ "budgetMilliseconds", "intervalMilliseconds", "drain" }`: the pacing of `ferry run`.
    struct ScheduleSpec: Decodable {
        var budgetMilliseconds: Int?
        var intervalMilliseconds: Int?
        var drain: Bool?

        init(from decoder: any Decoder) throws {
            try MigrationPlanFile.rejectUnknownFields(decoder, allowed: ["budgetMilliseconds", "intervalMilliseconds", "drain"])
            let c = try decoder.container(keyedBy: AnyKey.self)
            budgetMilliseconds = try c.decodeIfPresent(Int.self, forKey: AnyKey("budgetMilliseconds"))
            intervalMilliseconds = try c.decodeIfPresent(Int.self, forKey: AnyKey("intervalMilliseconds"))
            drain = try c.decodeIfPresent(Bool.self, forKey: AnyKey("drain"))
            if let budgetMilliseconds, budgetMilliseconds < 1 {
                throw Problem("schedule.budgetMilliseconds: must be at least 1")
            }
            if let intervalMilliseconds, intervalMilliseconds < 0 {
                throw Problem("schedule.intervalMilliseconds: must not be negative")
            }
        }
    }

    // MARK: Paths

    /// `path` made absolute against `directory`.
    static func absolute(_ path: String, relativeTo directory: URL) -> String {
        if path.hasPrefix("/") { return URL(fileURLWithPath: path).standardizedFileURL.path }
        return directory.appendingPathComponent(path).standardizedFileURL.path
    }

    /// True when both paths name the same file (after resolving symbolic links).
    static func sameFile(_ a: String, _ b: String) -> Bool {
        URL(fileURLWithPath: a).standardizedFileURL.resolvingSymlinksInPath().path
            == URL(fileURLWithPath: b).standardizedFileURL.resolvingSymlinksInPath().path
    }
}
