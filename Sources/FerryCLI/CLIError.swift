#if CommandLineTool
import ArgumentParser
import Foundation
import Ferry

/// An error the `ferry` tool reports as one line on standard error (`error: <message>`).
struct CLIError: Error, CustomStringConvertible {
    /// What went wrong, on one line.
    let message: String
    /// The process exit status.
    let status: Int32

    /// An error with `message` and exit status 1.
    init(_ message: String, status: Int32 = 1) {
        self.message = message
        self.status = status
    }

    var description: String { message }

    /// A one-line, user-facing description of any error (never a key, never SQL text).
    static func describe(_ error: any Error) -> String {
        let text: String
        switch error {
        case let error as CLIError:
            text = error.message
        case let error as FerryError:
            switch error {
            case .wrongKeyOrNotADatabase(let path):
                text = "wrong key or not a database: \(path)"
            case .fileNotFound(let path):
                text = "no such file: \(path)"
            case .missingSourceKey(let path):
                text = "the migration source \(path) is encrypted: pass --plan PLAN.json to supply its key"
            case .sqlite(_, let message, _):
                // SQLite's messages name no file: say which one the command was working on.
                text = (CommandContext.targetPath.map { "\($0): " } ?? "") + "SQLite error: \(message)"
            case .noSuchTable(let name, let schema):
                // Ferry attaches sources under internal schema names; say which side instead.
                text = schema == "main" ? "no such table in the target database: \(name)"
                    : schema.hasPrefix("ferry_") ? "no such table in the source database: \(name)" : error.description
            case .cancelled:
                text = "interrupted"
            default:
                text = error.description
            }
        case is CancellationError:
            text = "interrupted"
        default:
            text = "\(error)"
        }
        return oneLine(text)
    }

    /// `text` with every run of whitespace (newlines included) collapsed to one space.
    static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
    }
}

/// Standard error output.
enum StandardError {
    /// Writes `text` and a newline to standard error (nothing happens when it cannot be written:
    /// the exit status still reports the failure).
    static func print(_ text: String) {
        TerminalOutput.write(text + "\n", to: 2)
    }
}

/// Runs a command body, turning any error into a one-line `error:` message and an exit status.
func reportingErrors<T>(_ body: () async throws -> T) async throws -> T {
    do {
        return try await body()
    } catch let exit as ExitCode {
        throw exit
    } catch {
        StandardError.print("error: " + CLIError.describe(error))
        CommandContext.restoreAfterFailure()
        throw ExitCode((error as? CLIError)?.status ?? 1)
    }
}
#endif
