#if CommandLineTool
import ArgumentParser
import Foundation
import Ferry

/// `ferry shell DB [--key K] [--json]`: runs SQL from standard input through the migrating
/// connection (reads unioned, writes redirected), plus `.step [N|all]` and `.status` commands.
/// A failed statement or command is reported and the shell goes on; it then exits 1.
struct ShellCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shell",
        abstract: "Run SQL from standard input through the migrating connection.",
        discussion: """
            Statements end with `;` and may span lines. Lines starting with `.` are commands:
            `.step [N]`, `.step all`, `.status`. With --json, one JSON object per statement or
            command, in order, and nothing else on standard output. Exits 1 when a statement or
            command failed (each failure is reported where it happened; the rest still run).
            """
    )

    @OptionGroup var target: DatabaseOptions

    @Flag(help: "Print one JSON object per statement or command.")
    var json = false

    func run() async throws {
        try await reportingErrors {
            // `.step` runs batches one by one.
            let opened = try target.open(options: .init(yieldingStepLimit: nil))
            defer { opened.database.close() }
            var shell = Shell(database: opened.database, json: json)
            var buffer = ""
            while let line = readLine(strippingNewline: false) {
                let trimmed = line.trimmingCharacters(in: .whitespacesAndNewlines)
                if buffer.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, trimmed.hasPrefix(".") {
                    buffer = ""
                    shell.command(trimmed)
                    continue
                }
                buffer += line
                if trimmed.hasSuffix(";") {
                    shell.script(buffer)
                    buffer = ""
                }
            }
            if !buffer.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty { shell.script(buffer) }
            if shell.failures > 0 {
                // Not a failed command: what ran stays (and so does the target's WAL mode).
                StandardError.print("error: \(shell.failures) statement(s) or command(s) failed")
                throw ExitCode(1)
            }
        }
    }
}

/// Runs statements and commands and prints their outcomes.
struct Shell {
    let database: FerryDatabase
    let json: Bool
    /// How many statements and commands failed so far (the shell's exit status is 1 if any did).
    private(set) var failures = 0

    /// Runs every statement of `text`, each in its own write transaction, reporting each outcome.
    mutating func script(_ text: String) {
        for sql in SQLScript.statements(text) {
            do {
                let result = try database.write { db in
                    let (columns, rows) = try db.query(sql)
                    return (columns, rows, db.changes, db.lastInsertRowid)
                }
                if json {
                    emit(.object([
                        ("ok", .bool(true)), ("columns", .array(result.0.map(JSON.string))),
                        ("rows", .array(result.1.map { .array($0.values.map(JSON.init)) })),
                        ("changes", .int(Int64(result.2))), ("lastInsertRowid", .int(result.3)),
                    ]))
                } else {
                    printTable(columns: result.0, rows: result.1)
                    print("(\(result.1.count) row(s), changes \(result.2), last rowid \(result.3))")
                }
            } catch {
                report(error)
            }
        }
    }

    /// `.step [N]`, `.step all`, `.status`.
    mutating func command(_ line: String) {
        let words = line.split(separator: " ").map(String.init)
        do {
            switch words.first {
            case ".step":
                var moved = 0
                var deleted = 0
                var batches = 0
                let all = words.count > 1 && words[1] == "all"
                guard all || words.count == 1 || Int(words[1]) != nil else {
                    throw CLIError("usage: .step [N | all]")
                }
                let limit = all ? Int.max : (words.count > 1 ? Int(words[1])! : 1)
                while batches < limit, let report = try database.step() {
                    batches += 1
                    moved += report.rowsMoved
                    deleted += report.sourceRowsDeleted
                }
                let finished = try database.isMigrated
                if json {
                    emit(.object([("ok", .bool(true)), ("command", .string("step")), ("batches", .int(Int64(batches))),
                                  ("rowsMoved", .int(Int64(moved))), ("sourceRowsDeleted", .int(Int64(deleted))), ("finished", .bool(finished))]))
                } else {
                    print("\(batches) batch(es): \(moved) row(s) moved, \(deleted) source row(s) deleted\(finished ? ", migration finished" : "")")
                }
            case ".status":
                let progress = try database.progress()
                if json {
                    let tables = progress.tables.map { table -> JSON in
                        .object([("name", .string(table.name)), ("state", .string("\(table.state)")),
                                 ("rowsMoved", .int(Int64(table.rowsMoved))), ("rowsLeft", .int(Int64(table.rowsLeft)))])
                    }
                    emit(.object([("ok", .bool(true)), ("command", .string("status")), ("finished", .bool(try database.isMigrated)),
                                  ("tables", .array(tables))]))
                } else {
                    for table in progress.tables {
                        print("\(table.name): \(table.state), \(table.rowsMoved) moved, \(table.rowsLeft) left")
                    }
                }
            default:
                throw CLIError("unknown command \(words.first ?? line): use .step [N|all] or .status")
            }
        } catch {
            report(error)
        }
    }

    /// A failure: SQLite's codes where SQLite raised it, code 1 for Ferry's own errors.
    mutating func report(_ error: any Error) {
        failures += 1
        let ferryError = error as? FerryError
        let code = ferryError?.resultCode
        let message = CLIError.describe(error)
        if json {
            let primary = Int64(code?.primary.extendedCode ?? 1)
            let extended = Int64(code?.extendedCode ?? 1)
            emit(.object([("ok", .bool(false)), ("error", .object([("code", .int(primary)), ("extendedCode", .int(extended)),
                                                                   ("message", .string(message))]))]))
        } else {
            print("error: \(message)")
        }
    }

    func emit(_ object: JSON) {
        print(object.text)
    }

    func printTable(columns: [String], rows: [Row]) {
        guard !columns.isEmpty else { return }
        print(columns.joined(separator: " | "))
        for row in rows { print(row.values.map(\.shellText).joined(separator: " | ")) }
    }
}

/// The JSON the shell prints, written by hand so that reals always show a fraction or exponent
/// and object keys keep their order.
indirect enum JSON {
    case null, bool(Bool), int(Int64), real(Double), string(String), array([JSON]), object([(String, JSON)])

    /// A SQL value: integers as integers, reals with `.` or `e`, text as strings, blobs as
    /// `{"blob": "<lowercase hex>"}`, NULL as null.
    init(_ value: Value) {
        switch value {
        case .null: self = .null
        case .integer(let int): self = .int(int)
        case .real(let double): self = .real(double)
        case .text(let text): self = .string(text)
        case .blob(let bytes): self = .object([("blob", .string(hexString(bytes)))])
        }
    }

    var text: String {
        switch self {
        case .null: return "null"
        case .bool(let bool): return bool ? "true" : "false"
        case .int(let int): return String(int)
        case .real(let double):
            guard double.isFinite else { return double < 0 ? "-1e999" : (double.isNaN ? "null" : "1e999") }
            return "\(double)"  // Swift prints 1.0 as "1.0" and 1e20 as "1e+20"
        case .string(let string): return Self.quote(string)
        case .array(let items): return "[" + items.map(\.text).joined(separator: ",") + "]"
        case .object(let members): return "{" + members.map { Self.quote($0.0) + ":" + $0.1.text }.joined(separator: ",") + "}"
        }
    }

    static func quote(_ string: String) -> String {
        var out = "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

extension Value {
    /// The value as the readable shell prints it.
    var shellText: String {
        switch self {
        case .null: return "NULL"
        case .integer(let int): return String(int)
        case .real(let double): return String(double)
        case .text(let text): return text
        case .blob(let bytes): return "x'" + hexString(bytes) + "'"
        }
    }
}

/// Bytes as lowercase hexadecimal.
func hexString(_ bytes: [UInt8]) -> String {
    bytes.map { String(format: "%02x", $0) }.joined()
}
#endif
