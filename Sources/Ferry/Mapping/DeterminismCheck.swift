import FerrySQL
import FerrySQLite

/// Filters and column feeds must mean the same thing every time Ferry evaluates them.
///
/// A filter is evaluated when a row moves, when the union reads pending rows, and again when
/// cleanup decides which source rows may go. A filter whose value changes between those moments
/// (`sent < unixepoch()`, `random() % 2 = 0`) moves some rows and then deletes others that never
/// moved. So every function a filter or feed calls must be one SQLite itself flags deterministic
/// (`PRAGMA function_list`, `SQLITE_DETERMINISTIC`), and date and time functions must not read
/// the clock or the time zone (`'now'`, no time value, `'localtime'`, `'utc'`, `CURRENT_*`).
enum DeterminismCheck {
    /// SQLite's `SQLITE_DETERMINISTIC` flag in `PRAGMA function_list`.
    static let deterministicFlag = 0x800

    /// The date and time functions, which SQLite flags deterministic although `'now'`,
    /// `'localtime'` and `'utc'` make them read the clock or the time zone.
    static let dateFunctions: Set<String> = ["date", "time", "datetime", "julianday", "unixepoch", "strftime", "timediff"]

    /// Throws `FerryError.invalidFilter` naming the first function or keyword of `text` whose
    /// value may change over time. A text that does not parse is left to the syntax checks.
    /// - Parameter role: what `text` is, for the message ("a filter", "the feed of column x").
    static func check(_ text: String, role: String = "a filter", on db: Connection) throws(FerryError) {
        guard let expression = try? Parser.parseExpression(text) else { return }
        if let problem = clockProblem(in: expression) {
            throw .invalidFilter(filter: text, reason: "\(problem): \(role) must mean the same at every step and at cleanup, "
                + "or rows are deleted from the source without reaching the target; use a literal instead (e.g. `sent < 1764000000`, not `sent < unixepoch()`)")
        }
        let calls = expression.functionCalls
        guard !calls.isEmpty else { return }
        let flags = try functionFlags(on: db)
        for call in calls {
            let name = call.name.lowercased()
            // Overloads of this name that take this many arguments (-1: any number).
            let candidates = flags[name, default: []].filter { $0.arguments == call.argumentCount || $0.arguments == -1 }
            guard !candidates.isEmpty else { continue }  // unknown: SQLite refuses it when the filter compiles
            if !candidates.contains(where: { $0.flags & deterministicFlag != 0 }) {
                throw .invalidFilter(filter: text, reason: "\(call.name)() is not deterministic (SQLite does not flag it so): \(role) "
                    + "must give the same result for a row at every step and at cleanup, or rows are lost or copied twice; "
                    + "use a literal or a deterministic expression of the row's columns instead")
            }
        }
    }

    /// The first use of the clock or the time zone in `expression`, described, if any.
    static func clockProblem(in expression: Expression) -> String? {
        var problem: String?
        expression.forEachSubexpression { node in
            guard problem == nil else { return }
            switch node {
            case .literal(.currentTime): problem = "CURRENT_TIME changes with time"
            case .literal(.currentDate): problem = "CURRENT_DATE changes with time"
            case .literal(.currentTimestamp): problem = "CURRENT_TIMESTAMP changes with time"
            case .function(let call):
                let name = call.name.name.lowercased()
                guard dateFunctions.contains(name) else { return }
                let arguments: [Expression]
                if case .list(let list) = call.arguments { arguments = list } else { arguments = [] }
                // strftime(format, time, modifiers...); the others (time, modifiers...); timediff(a, b).
                let timeIndexes = name == "strftime" ? [1] : name == "timediff" ? [0, 1] : [0]
                if arguments.count <= timeIndexes.max()! {
                    problem = "\(call.name.name)() without a time value reads the clock (it means 'now')"
                    return
                }
                for (index, argument) in arguments.enumerated() {
                    let isFormat = name == "strftime" && index == 0
                    if case .literal(.string(let value)) = argument {
                        let word = value.trimmingCharacters(in: .whitespaces).lowercased()
                        if word == "now" {
                            problem = "\(call.name.name)('now') reads the clock"
                        } else if !isFormat && (word == "localtime" || word == "utc") {
                            problem = "\(call.name.name)(..., '\(word)') depends on the machine's time zone, which may change between steps"
                        }
                    } else if !isFormat && !timeIndexes.contains(index) {
                        if case .literal = argument { continue }
                        problem = "the modifiers of \(call.name.name)() must be literals (a computed modifier may be 'now' or 'localtime')"
                    }
                    if problem != nil { return }
                }
            default:
                break
            }
        }
        return problem
    }

    /// SQLite's flags of every function the connection knows, by lower-cased name.
    private static func functionFlags(on db: Connection) throws(FerryError) -> [String: [(arguments: Int, flags: Int)]] {
        var result: [String: [(arguments: Int, flags: Int)]] = [:]
        for row in try sqlite(db.fetchAll("SELECT name, narg, flags FROM pragma_function_list")) {
            let name: String = try sqlite(row.column(0))
            result[name.lowercased(), default: []].append((try sqlite(row.column(1, as: Int.self)), try sqlite(row.column(2, as: Int.self))))
        }
        return result
    }
}
