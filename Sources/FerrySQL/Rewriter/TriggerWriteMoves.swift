/// The app's triggers whose body writes or reads rows of a migrating table, made to meet its
/// pending rows as on the finished table:
/// - before each body statement that updates or deletes rows of a migrating table, a call of
///   Ferry's procedure (`SELECT ferry_trigger_moves('main', 'trigger', i, NEW.a, OLD.b);`) moves
///   the pending rows the statement may touch into the target first, as the app's own UPDATE or
///   DELETE does;
/// - each body statement that reads a migrating table (or a view over one), whatever it writes, is
///   replaced by a call (`SELECT ferry_trigger_run('main', 'trigger', i, NEW.a);`) that runs it
///   through the rewriter, as the app's own statement runs, reading the pending rows too;
/// - a statement `SELECT RAISE(...) [FROM ...] WHERE ...` that reads one keeps its `RAISE` (only a
///   trigger can run it) under `WHERE ferry_trigger_any('main', 'trigger', i, NEW.a)`: whether the
///   app's statement yields a row, read through the rewriter (other shapes of `RAISE` stay as
///   written);
/// - a `WHEN` that reads one becomes `ferry_trigger_when('main', 'trigger', NEW.a)`.
///
/// A trigger's body runs inside SQLite, out of the rewriter's reach; the procedures bring it back:
/// they read statement `i` of the trigger as the app wrote it (Ferry records that text when it adds
/// the calls), with each `NEW.x`/`OLD.x` replaced by a parameter bound to the value the call
/// passes.
///
/// Text in, text out: the calls are inserted before, or in place of, statements of the app's
/// text; the app's text itself is what Ferry puts back (`withoutCalls` serves only a text SQLite
/// rewrote since, and only when no statement was replaced).
package enum TriggerWriteMoves {
    /// The procedure the calls before a write name.
    package static let procedure = "ferry_trigger_moves"
    /// The procedure the calls in place of a read name.
    package static let runProcedure = "ferry_trigger_run"
    /// The function that stands for a `WHEN` condition that reads a migrating table: it evaluates
    /// the app's condition through the rewriter.
    package static let conditionFunction = "ferry_trigger_when"
    /// The function that stands for the rows of a body statement `SELECT RAISE(...) [FROM ...]
    /// [WHERE ...]` that reads a migrating table: whether the app's statement yields a row, read
    /// through the rewriter; the statement keeps its `RAISE`, which only a trigger can run.
    package static let rowsFunction = "ferry_trigger_any"
    /// The function in the `WHEN` of a trigger with such calls: false while that trigger's own
    /// call runs a statement, unless recursive triggers are on (see `withCalls`).
    package static let firesFunction = "ferry_trigger_fires"
    /// Every function the calls name (the authorizer decides them alike).
    package static let callFunctions: Set<String> = [procedure, runProcedure, conditionFunction, rowsFunction, firesFunction]

    /// One statement of a trigger's body: its tokens (no `;`), the byte offset where it starts,
    /// and the statement as the parser read it with the trigger.
    struct BodyStatement {
        var tokens: ArraySlice<Token>
        var start: Int
        var parsed: Statement
        /// For a call of `procedure` or `runProcedure`, the trigger it names (its first two
        /// arguments, string literals): `schema.name`, the name lower-cased.
        var callOwner: String?
        /// True for a call of `runProcedure` (a statement replaced).
        var isRunCall = false
    }

    /// The trigger `sql`, stored with Ferry's calls for trigger `name` in `schema` and rewritten by
    /// SQLite since (a renamed table or column), without those calls: the app's text as SQLite
    /// rewrote it. Only calls that name this trigger are removed. (Ferry records the app's text
    /// when it adds the calls, `AppTriggerWrites`; this serves only once SQLite changed the text.)
    /// Unchanged when it has none (or does not tokenize).
    /// Nil when a statement or the condition of the app's was replaced by a call (its text is in
    /// Ferry's record only).
    package static func withoutCalls(_ sql: String, schema: String, name: String) -> String? {
        let lowered = sql.lowercased()
        guard [procedure, runProcedure, conditionFunction, rowsFunction].contains(where: { lowered.contains($0) }),
              let (bytes, statements) = try? body(of: sql)
        else { return sql }
        var result = bytes
        let owner = schema + "." + name.lowercased()
        if statements.contains(where: { $0.callOwner == owner && $0.isRunCall }) || lowered.contains(conditionFunction)
            || lowered.contains(rowsFunction) { return nil }
        // Each call runs from its first token to the next statement's first token (its `;` and the
        // space after it), exactly the text `withCalls` inserted.
        for (index, statement) in statements.enumerated().reversed() where statement.callOwner == owner && index + 1 < statements.count {
            result.removeSubrange(statement.start..<statements[index + 1].start)
        }
        return String(decoding: result, as: UTF8.self)
    }

    /// The trigger `sql` (without calls) with a call in place of each body statement that reads a
    /// relation `isRead` accepts (a migrating table or a view over one, given its name,
    /// lower-cased, and its schema when qualified) and holds no `RAISE`, and a call before each
    /// other body statement that updates or deletes a table `isMigrating` accepts (same
    /// arguments); a `WHEN` that reads such a relation becomes a call of `conditionFunction`.
    /// `schema` and `name` say which trigger the calls belong to. Nil when nothing needs one.
    /// - Throws: `SQLSyntaxError` when the trigger does not tokenize or parse.
    package static func withCalls(_ sql: String, schema: String, name: String,
                                  isMigrating: (_ table: String, _ schema: String?) -> Bool,
                                  isRead: (_ relation: String, _ schema: String?) -> Bool = { _, _ in false }) throws(SQLSyntaxError) -> String? {
        let (bytes, statements, condition) = try parts(of: sql)
        var edits: [(range: Range<Int>, text: String)] = []
        for (index, statement) in statements.enumerated() {
            // A statement that reads (an UPDATE or DELETE of `T` whose subquery reads one too) runs
            // through the call, moves included; one that only updates or deletes gets its moves.
            let readsRelation = reads(statement, isRead)
            if readsRelation, let raise = raiseOnRows(statement) {
                // SELECT RAISE(...) WHERE <the app's statement yields a row, read by Ferry>.
                let call = "SELECT " + String(decoding: bytes[raise], as: UTF8.self) + " WHERE \(rowsFunction)(\(literal(schema)), "
                    + "\(literal(name)), \(index)" + arguments(of: statement.tokens, bytes: bytes) + ")"
                edits.append((statement.start..<statement.tokens.last!.range.upperBound, call))
                continue
            }
            let reads = readsRelation && !statement.tokens.contains { $0.keyword == .raise }
            let writes = !reads && (writtenTable(statement).map { isMigrating($0.name, $0.schema) } ?? false)
            guard writes || reads else { continue }
            let call = "SELECT \(reads ? runProcedure : procedure)(\(literal(schema)), \(literal(name)), \(index)"
                + arguments(of: statement.tokens, bytes: bytes) + ")"
            if reads {
                edits.append((statement.start..<statement.tokens.last!.range.upperBound, call))
            } else {
                edits.append((statement.start..<statement.start, call + "; "))
            }
        }
        // A condition that reads a migrating table: evaluated through the rewriter, by a function.
        var conditionCall: String?
        if let start = condition.start, let select = standalone(condition.tokens, bytes: bytes).map({ "SELECT (\($0))" }),
           case let parsed? = try? Parser.parseStatement(select),
           StatementAnalysis(parsed).readTables.contains(where: { isRead($0.name.name.lowercased(), $0.schema?.name.lowercased()) }) {
            conditionCall = "\(conditionFunction)(\(literal(schema)), \(literal(name))" + arguments(of: condition.tokens, bytes: bytes) + ")"
            edits.append((start..<condition.begin, " \(conditionCall!) "))
        }
        guard !edits.isEmpty else { return nil }
        if edits.contains(where: { $0.text.hasPrefix("SELECT \(runProcedure)(") }) {
            // A statement the call runs is a statement of its own: SQLite would fire this trigger
            // again for what it writes, where it fires none from the trigger's own body (unless
            // recursive triggers are on). The guard keeps it quiet then.
            let fires = "\(firesFunction)(\(literal(schema)), \(literal(name)))"
            if let start = condition.start {
                if let conditionCall {
                    edits.removeAll { $0.text == " \(conditionCall) " }
                    edits.append((start..<condition.begin, " \(fires) AND \(conditionCall) "))
                } else {
                    edits.append((condition.begin..<condition.begin, ") "))
                    edits.append((start..<start, " \(fires) AND ("))
                }
            } else {
                edits.append((condition.begin..<condition.begin, "WHEN \(fires) "))
            }
        }
        var result = bytes
        for edit in edits.sorted(by: { $0.range.lowerBound < $1.range.lowerBound }).reversed() {
            result.replaceSubrange(edit.range, with: Array(edit.text.utf8))
        }
        return String(decoding: result, as: UTF8.self)
    }

    /// Body statement `index` of the trigger `sql` as the app wrote it (without Ferry's calls) as a statement
    /// of its own: each distinct `NEW.x`/`OLD.x` becomes `?1`, `?2`, ... in the order the call
    /// passes their values. Nil when the body has no such statement.
    /// - Throws: `SQLSyntaxError` when the trigger does not tokenize or parse.
    package static func standaloneStatement(_ sql: String, index: Int) throws(SQLSyntaxError) -> String? {
        let (bytes, statements) = try body(of: sql)
        guard statements.indices.contains(index) else { return nil }
        return standalone(statements[index].tokens, bytes: bytes)
    }

    /// The body statements of the trigger `sql` that read a relation `isRead` accepts and would
    /// still run inside SQLite with Ferry's calls in place: a statement with `RAISE` of another
    /// shape than `SELECT RAISE(...) [FROM ...] [WHERE ...]` (see `withCalls`), by index.
    /// - Throws: `SQLSyntaxError` when the trigger does not tokenize or parse.
    package static func readsLeftToSQLite(_ sql: String, isRead: (_ relation: String, _ schema: String?) -> Bool) throws(SQLSyntaxError) -> [Int] {
        let (_, statements) = try body(of: sql)
        return statements.indices.filter { index in
            let statement = statements[index]
            return statement.tokens.contains { $0.keyword == .raise } && raiseOnRows(statement) == nil && reads(statement, isRead)
        }
    }

    /// Whether `statement` reads a relation `isRead` accepts (its name lower-cased, and its schema
    /// when qualified).
    private static func reads(_ statement: BodyStatement, _ isRead: (_ relation: String, _ schema: String?) -> Bool) -> Bool {
        StatementAnalysis(statement.parsed).readTables.contains { isRead($0.name.name.lowercased(), $0.schema?.name.lowercased()) }
    }

    /// Body statement `index` of the trigger `sql`, a `SELECT RAISE(...) ...`, as the query
    /// `SELECT EXISTS (SELECT 1 ...)`: whether it yields a row (its `NEW.x`/`OLD.x` numbered as
    /// `standaloneStatement` numbers them). Nil when the body has no such statement.
    /// - Throws: `SQLSyntaxError` when the trigger does not tokenize or parse.
    package static func standaloneExistence(_ sql: String, index: Int) throws(SQLSyntaxError) -> String? {
        guard let text = try standaloneStatement(sql, index: index),
              case .select(var select) = try Parser.parseStatement(text), case .select(var clause) = select.first else { return nil }
        clause.columns = [.expression(.literal(.integer("1")), alias: nil)]
        select.first = .select(clause)
        return "SELECT EXISTS (\(Printer().print(select)))"
    }

    /// The bytes of the `RAISE(...)` of a statement `SELECT RAISE(...) [FROM ...] [WHERE ...]`:
    /// one result column, that RAISE, and no other (not compound). Nil for any other statement.
    private static func raiseOnRows(_ statement: BodyStatement) -> Range<Int>? {
        guard case .select(let select) = statement.parsed, select.compounds.isEmpty, case .select(let clause) = select.first,
              clause.columns.count == 1, case .expression(.raise, _) = clause.columns[0],
              statement.tokens.filter({ $0.keyword == .raise }).count == 1,
              let start = statement.tokens.firstIndex(where: { $0.keyword == .raise }) else { return nil }
        var depth = 0
        for index in statement.tokens.indices[(start + 1)...] {
            switch statement.tokens[index].kind {
            case .leftParen: depth += 1
            case .rightParen:
                depth -= 1
                if depth == 0 { return statement.tokens[start].range.lowerBound..<statement.tokens[index].range.upperBound }
            default: break
            }
        }
        return nil
    }

    /// The `WHEN` condition of the trigger `sql` as the app wrote it, as a query of its own,
    /// `SELECT (<condition>)`, its `NEW.x`/`OLD.x` numbered as `standaloneStatement` numbers them.
    /// Nil when the trigger has none.
    /// - Throws: `SQLSyntaxError` when the trigger does not tokenize or parse.
    package static func standaloneCondition(_ sql: String) throws(SQLSyntaxError) -> String? {
        let (bytes, _, condition) = try parts(of: sql)
        return standalone(condition.tokens, bytes: bytes).map { "SELECT (\($0))" }
    }

    /// The text of `tokens` with each distinct `NEW.x`/`OLD.x` replaced by `?1`, `?2`, ...; nil
    /// when there are no tokens.
    private static func standalone(_ tokens: ArraySlice<Token>, bytes: [UInt8]) -> String? {
        guard let first = tokens.first, let last = tokens.last else { return nil }
        var numbers: [String: Int] = [:]
        var text = bytes[first.range.lowerBound..<last.range.upperBound].map { $0 }
        let base = first.range.lowerBound
        let references = rowReferences(in: tokens, bytes: bytes)
        for reference in references where numbers[reference.key] == nil { numbers[reference.key] = numbers.count + 1 }
        for reference in references.reversed() {
            let range = (reference.range.lowerBound - base)..<(reference.range.upperBound - base)
            text.replaceSubrange(range, with: Array("?\(numbers[reference.key]!)".utf8))
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// `, NEW.a, OLD.b`: the distinct row references among `tokens`, in the order `standalone`
    /// numbers them, as a call's arguments after its first ones.
    private static func arguments(of tokens: ArraySlice<Token>, bytes: [UInt8]) -> String {
        var seen: Set<String> = []
        var arguments: [String] = []
        for reference in rowReferences(in: tokens, bytes: bytes) where seen.insert(reference.key).inserted { arguments.append(reference.text) }
        return arguments.map { ", " + $0 }.joined()
    }

    /// The statements of the trigger's body, with the trigger's bytes.
    private static func body(of sql: String) throws(SQLSyntaxError) -> ([UInt8], [BodyStatement]) {
        let (bytes, statements, _) = try parts(of: sql)
        return (bytes, statements)
    }

    /// Where a trigger's `WHEN` condition starts (after the keyword) and ends (the body's `BEGIN`),
    /// in bytes; `start` nil when it has none.
    struct Condition {
        var start: Int?
        var begin: Int
        /// The condition's tokens (empty when it has none).
        var tokens: ArraySlice<Token> = []
    }

    /// `body(of:)` with the trigger's condition.
    private static func parts(of sql: String) throws(SQLSyntaxError) -> ([UInt8], [BodyStatement], Condition) {
        let bytes = Array(sql.utf8)
        let tokens = try Tokenizer.tokenize(utf8: bytes)
        guard case .createTrigger(let trigger) = try Parser.parseStatement(sql) else {
            throw unsplittable("not a CREATE TRIGGER statement")
        }
        // The body starts after the header's BEGIN: the first BEGIN keyword after ON's table that is
        // not a column name (`NEW.begin`). A WHEN condition holds no other BEGIN.
        let tableOffset = trigger.tableLocation.range?.lowerBound ?? 0
        var position = tokens.firstIndex { $0.range.lowerBound >= tableOffset } ?? tokens.endIndex
        while position < tokens.count, !(tokens[position].is(.begin) && (position == 0 || tokens[position - 1].kind != .dot)) { position += 1 }
        var slices: [ArraySlice<Token>] = []
        var start = position + 1
        for index in (position + 1)..<max(position + 1, tokens.count) where tokens[index].kind == .semicolon {
            if index > start { slices.append(tokens[start..<index]) }
            start = index + 1
        }
        guard slices.count == trigger.body.count, position < tokens.count else {
            throw unsplittable("the trigger's body does not split into its \(trigger.body.count) statements")
        }
        // WHEN comes after ON's table and before BEGIN (a column named so is quoted, or follows a dot).
        var condition = Condition(start: nil, begin: tokens[position].range.lowerBound)
        if trigger.when != nil, let when = tokens[..<position].lastIndex(where: { $0.keyword == .when && $0.range.lowerBound >= tableOffset }) {
            condition.start = tokens[when].range.upperBound
            condition.tokens = tokens[(when + 1)..<position]
        }
        return (bytes, zip(slices, trigger.body).map { statement($0, bytes: bytes, parsed: $1) }, condition)
    }

    private static func statement(_ tokens: ArraySlice<Token>, bytes: [UInt8], parsed: Statement) -> BodyStatement {
        let head = Array(tokens.prefix(6))
        let text = { (token: Token) in String(decoding: bytes[token.range], as: UTF8.self) }
        var owner: String?
        var isRunCall = false
        if head.count == 6, head[0].kind == .identifier, text(head[0]).lowercased() == "select", head[1].kind == .identifier,
           [procedure, runProcedure].contains(text(head[1]).lowercased()), head[2].kind == .leftParen, head[3].kind == .string,
           head[5].kind == .string {
            owner = SQLName.unquoted(text(head[3])) + "." + SQLName.unquoted(text(head[5])).lowercased()
            isRunCall = text(head[1]).lowercased() == runProcedure
        }
        return BodyStatement(tokens: tokens, start: tokens.first!.range.lowerBound, parsed: parsed, callOwner: owner, isRunCall: isRunCall)
    }

    /// The table an UPDATE or DELETE statement writes (lower-cased name, and schema when written),
    /// from the statement the parser read with the trigger.
    private static func writtenTable(_ statement: BodyStatement) -> (name: String, schema: String?)? {
        switch statement.parsed {
        case .update(let update): return (update.table.name.name.name.lowercased(), update.table.name.schema?.name.lowercased())
        case .delete(let delete): return (delete.table.name.name.name.lowercased(), delete.table.name.schema?.name.lowercased())
        default: return nil
        }
    }

    /// A reference to the trigger's row (`NEW.x`, `OLD.x`): its byte range, its text, and a key
    /// that names it whatever its spelling (`new.x` and `"NEW"."X"` are one value).
    private struct RowReference {
        var range: Range<Int>
        var text: String
        var key: String
    }

    /// The `NEW.x`/`OLD.x` references among `tokens`, in order.
    private static func rowReferences(in tokens: ArraySlice<Token>, bytes: [UInt8]) -> [RowReference] {
        var references: [RowReference] = []
        let tokens = Array(tokens)
        var index = 0
        while index + 2 < tokens.count {
            defer { index += 1 }
            let row = tokens[index]
            guard row.kind == .identifier || row.kind == .quotedIdentifier,
                  index == 0 || tokens[index - 1].kind != .dot,
                  tokens[index + 1].kind == .dot,
                  tokens[index + 2].kind == .identifier || tokens[index + 2].kind == .quotedIdentifier || tokens[index + 2].kind == .string
            else { continue }
            let rowName = SQLName.unquoted(String(decoding: bytes[row.range], as: UTF8.self)).lowercased()
            guard rowName == "new" || rowName == "old" else { continue }
            let range = row.range.lowerBound..<tokens[index + 2].range.upperBound
            references.append(RowReference(range: range, text: String(decoding: bytes[range], as: UTF8.self),
                                           key: rowName + "." + SQLName.unquoted(String(decoding: bytes[tokens[index + 2].range], as: UTF8.self)).lowercased()))
            index += 2
        }
        return references
    }

    private static func unsplittable(_ message: String) -> SQLSyntaxError {
        SQLSyntaxError(kind: .invalidConstruct, message: message, token: "", range: 0..<0, line: 1, column: 1, excerpt: "")
    }

    /// `text` as an SQL string literal.
    private static func literal(_ text: String) -> String {
        "'" + text.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "''") + "'"
    }
}
