/// What replaces a read reference to a listed table.
package enum TableReplacement: Sendable, Hashable {
    /// Another table or view.
    case table(QualifiedName)
    /// A query given as SQL text (without parentheses); it is put in parentheses.
    case subquery(String)
    /// A query given as an AST; it is printed and put in parentheses.
    case select(SelectStatement)
}

/// A statement produced by a rewrite.
package enum RewrittenStatement: Sendable, Hashable {
    /// SQL text.
    case sql(String)
    /// An AST, printed with the default printer.
    case statement(Statement)
}

/// A statement that writes a listed table, handed to ``RewritePolicy/rewriteWrite``.
package struct WriteRequest: Sendable {
    /// The parsed statement.
    package var statement: Statement
    /// The statement's original text.
    package var originalSQL: String
    /// The text with every read of a listed table already replaced (the written target left as it is).
    package var sqlWithReadsRewritten: String
    /// The listed table written (lower-cased name).
    package var table: String
    /// `.insert`, `.update` or `.delete`.
    package var kind: TableAccessKind
    /// The analysis of the statement.
    package var analysis: StatementAnalysis
}

/// A statement other than SELECT/INSERT/UPDATE/DELETE that names a listed table (DDL, triggers, views, PRAGMA,
/// EXPLAIN, ...), handed to ``RewritePolicy/rewriteOther``.
package struct OtherStatementRequest: Sendable {
    /// The parsed statement.
    package var statement: Statement
    /// The statement's original text.
    package var originalSQL: String
    /// The listed tables it names (lower-cased).
    package var tables: Set<String>
    /// The analysis of the statement.
    package var analysis: StatementAnalysis
}

/// Why a rewrite failed.
package enum RewriteError: Error, Sendable, Equatable {
    /// The SQL does not parse.
    case syntax(SQLSyntaxError)
    /// A reference to a listed table that the rewriter cannot replace (e.g. one with `INDEXED BY`), or a statement
    /// kind the policy does not handle: `table` is the listed table it is about (lower-cased), when there is one.
    case unsupported(table: String?, reason: String)
    /// The policy refused the statement: `table` is the listed table it is about, `reason` says why. A policy
    /// throws this itself (the rewriter passes it on as it is), so the caller gets both as values.
    case refused(table: String, reason: String)
}

/// What the caller decides: which tables are migrating and how reads and writes of them become new SQL.
package struct RewritePolicy: Sendable {
    /// The listed tables.
    package var tables: TableSet
    /// The replacement for reads of a listed table (given its lower-cased name).
    package var replacementForRead: @Sendable (String) throws(RewriteError) -> TableReplacement
    /// The replacement for a read that carries `INDEXED BY` / `NOT INDEXED` (the hint is removed from the
    /// statement: a subquery cannot carry it, so the replacement applies it where it belongs). Nil refuses such
    /// reads with ``RewriteError/unsupported(table:reason:)``. A `.table` replacement keeps the hint as written.
    package var replacementForHintedRead: (@Sendable (String, IndexHint) throws(RewriteError) -> TableReplacement)?
    /// The name to write instead of an unqualified written target that is a listed table (given its lower-cased
    /// name), applied with the reads (``WriteRequest/sqlWithReadsRewritten``): say, `main.t`, so that SQLite never
    /// resolves the name in another schema. Nil (the default, or for a table) leaves the target as written.
    package var qualifiedWriteTarget: (@Sendable (String) -> QualifiedName?)?
    /// The statements to run instead of one that writes a listed table. The default keeps the statement with its
    /// reads rewritten.
    package var rewriteWrite: @Sendable (WriteRequest) throws(RewriteError) -> [RewrittenStatement]
    /// The statements to run instead of a schema or other statement naming a listed table. The default throws
    /// ``RewriteError/unsupported(_:)``: nothing is passed through silently.
    package var rewriteOther: @Sendable (OtherStatementRequest) throws(RewriteError) -> [RewrittenStatement]
    /// The columns `*` shows on a listed table (given its lower-cased name), when its replacement shows more (a
    /// rowid exposed as a column, say): `*` and `table.*` over the replacement are then spelled out as these
    /// columns, qualified. Nil (the default, or for a table) when the replacement shows exactly the table's columns.
    package var starColumns: (@Sendable (String) -> [String]?)?
    /// The name SQLite gives a result column that reads the rowid (`rowid`, `oid`, `_rowid_`) of a listed table
    /// (given its lower-cased name and the spelling, lower-cased): its INTEGER PRIMARY KEY column's declared name,
    /// or `rowid`. Nil keeps the name the replacement gives (say, for a real column of that name).
    package var rowidResultName: (@Sendable (_ table: String, _ spelling: String) -> String?)?
    /// The arms of a listed table (given its lower-cased name) over which a whole-table aggregate
    /// query is computed arm by arm and combined (see ``AggregateArms``); nil (the default, or for a
    /// table) reads such queries through the replacement like any other.
    package var aggregateArms: (@Sendable (String) throws(RewriteError) -> AggregateArms?)?
    /// The listed tables' columns whose replacement has no affinity, and how to give comparisons
    /// with them the finished column's (``AffinityComparisons``). Nil: comparisons stay as written.
    package var reshapedColumns: ReshapedColumns?

    /// Creates a policy.
    package init(tables: TableSet,
                replacementForRead: @escaping @Sendable (String) throws(RewriteError) -> TableReplacement,
                rewriteWrite: @escaping @Sendable (WriteRequest) throws(RewriteError) -> [RewrittenStatement] = { [.sql($0.sqlWithReadsRewritten)] },
                rewriteOther: @escaping @Sendable (OtherStatementRequest) throws(RewriteError) -> [RewrittenStatement] = { request throws(RewriteError) in
                    throw .unsupported(table: request.tables.sorted().first,
                                       reason: "statement naming \(request.tables.sorted().joined(separator: ", ")) is not handled by the policy")
                }) {
        self.tables = tables
        self.replacementForRead = replacementForRead
        self.rewriteWrite = rewriteWrite
        self.rewriteOther = rewriteOther
    }
}

/// The outcome of rewriting one statement.
package struct RewriteResult: Sendable, Hashable {
    /// The statements to run, in order (the original text when nothing changed).
    package var statements: [String]
    /// The listed tables the statement reads (lower-cased).
    package var reads: Set<String>
    /// The listed tables the statement writes (lower-cased).
    package var writes: Set<String>
    /// Whether the statement was returned as it was.
    package var isUnchanged: Bool
}

/// Rewrites statements that touch listed tables, editing the original text in place (so everything else, comments
/// and result-column names included, stays byte for byte as written).
package struct Rewriter: Sendable {
    /// The caller's policy.
    package var policy: RewritePolicy
    /// Parser options.
    package var parserOptions: ParserOptions

    /// Creates a rewriter.
    package init(policy: RewritePolicy, parserOptions: ParserOptions = .default) {
        self.policy = policy
        self.parserOptions = parserOptions
    }

    /// Rewrites one statement.
    package func rewrite(_ sql: String) throws(RewriteError) -> RewriteResult {
        let source = SourceText(sql)
        let tokens: [Token]
        do { tokens = try Tokenizer.tokenize(source) } catch { throw .syntax(error) }
        return try rewrite(sql, source: source, tokens: tokens)
    }

    /// Rewrites every statement of a script.
    package func rewrite(script: String) throws(RewriteError) -> [RewriteResult] {
        let source = SourceText(script)
        let slices: [StatementSlice]
        do { slices = ScriptSplitter.split(tokens: try Tokenizer.tokenize(source)) } catch { throw .syntax(error) }
        var results: [RewriteResult] = []
        for slice in slices {
            let text = source.string(slice.range)
            let shifted = slice.tokens.map { token -> Token in
                var t = token
                t.range = token.range.lowerBound - slice.range.lowerBound..<token.range.upperBound - slice.range.lowerBound
                return t
            }
            results.append(try rewrite(text, source: SourceText(text), tokens: shifted))
        }
        return results
    }

    func rewrite(_ sql: String, source: SourceText, tokens: [Token]) throws(RewriteError) -> RewriteResult {
        try result(of: resolve(sql, source: source, tokens: tokens), sql: sql)
    }

    /// The statements the policy's closures make of an outcome.
    private func result(of outcome: RewriteOutcome, sql: String) throws(RewriteError) -> RewriteResult {
        let statements: [String]
        switch outcome.action {
        case .unchanged: statements = [sql]
        case .rewritten(let text): statements = [text]
        case .write(let request): statements = render(try policy.rewriteWrite(request))
        case .other(let request): statements = render(try policy.rewriteOther(request))
        }
        let unchanged: Bool
        switch outcome.action {
        case .unchanged: unchanged = true
        case .rewritten(let text): unchanged = text == sql
        case .write, .other: unchanged = false
        }
        return RewriteResult(statements: statements, reads: outcome.reads, writes: outcome.writes, isUnchanged: unchanged)
    }

    /// What one statement becomes, without calling the policy's `rewriteWrite` and `rewriteOther`:
    /// a write or schema statement naming a listed table comes back as its request, for the caller
    /// to turn into its own plan. The statement is parsed once, and only when a listed table may
    /// be mentioned.
    package func resolve(_ sql: String) throws(RewriteError) -> RewriteOutcome {
        let source = SourceText(sql)
        let tokens: [Token]
        do { tokens = try Tokenizer.tokenize(source) } catch { throw .syntax(error) }
        return try resolve(sql, source: source, tokens: tokens)
    }

    /// ``resolve(_:)`` of a text already tokenized as `tokens`.
    package func resolve(_ sql: String, tokens: [Token]) throws(RewriteError) -> RewriteOutcome {
        try resolve(sql, source: SourceText(sql), tokens: tokens)
    }

    func resolve(_ sql: String, source: SourceText, tokens: [Token]) throws(RewriteError) -> RewriteOutcome {
        if !policy.tables.mayBeMentioned(in: tokens, source: source) {
            return RewriteOutcome(action: .unchanged, reads: [], writes: [], parsed: nil)
        }
        let parsed: ParsedStatement
        do {
            let (statement, resultColumns, starColumns) = try Parser.parseStatementWithColumnSpans(source: source, tokens: tokens, options: parserOptions)
            parsed = ParsedStatement(sql: sql, source: source, tokens: tokens, statement: statement,
                                     resultColumns: resultColumns, starColumns: starColumns)
        } catch {
            throw .syntax(error)
        }
        return try resolve(parsed: parsed)
    }

    /// ``resolve(_:)`` of a statement already parsed (under another policy, say).
    package func resolve(parsed: ParsedStatement) throws(RewriteError) -> RewriteOutcome {
        if let reshaped = policy.reshapedColumns, let converted = try convertingComparisons(parsed, reshaped: reshaped) {
            // The statement as written, with its comparisons converting as the finished table's
            // columns would; what follows works on that text.
            let outcome = try resolve(parsed: converted)
            if case .unchanged = outcome.action { return RewriteOutcome(action: .rewritten(converted.sql), reads: outcome.reads,
                                                                         writes: outcome.writes, parsed: converted) }
            return outcome
        }
        let (sql, source, statement, analysis) = (parsed.sql, parsed.source, parsed.statement, parsed.analysis)
        var reads = Set<String>()
        var writes = Set<String>()
        var mentioned = Set<String>()
        for access in analysis.tables where access.resolution == .table {
            guard let key = policy.tables.match(access.name) else { continue }
            mentioned.insert(key)
            if access.kind == .read { reads.insert(key) } else if access.kind.isWrite { writes.insert(key) }
        }
        func outcome(_ action: RewriteAction) -> RewriteOutcome {
            RewriteOutcome(action: action, reads: reads, writes: writes, parsed: parsed)
        }
        if mentioned.isEmpty { return outcome(.unchanged) }
        switch statement {
        case .select, .insert, .update, .delete:
            break
        default:
            return outcome(.other(OtherStatementRequest(statement: statement, originalSQL: sql, tables: mentioned, analysis: analysis)))
        }
        if let aggregateArms = policy.aggregateArms, writes.isEmpty,
           let split = try AggregateSplit.rewrite(statement, source: source, resultColumns: parsed.resultColumns, tables: policy.tables,
                                                  armsOf: aggregateArms) {
            return outcome(.rewritten(split))
        }
        let rewritten = try replaceReads(sql, source: source, analysis: analysis, resultColumns: parsed.resultColumns,
                                         starColumns: parsed.starColumns)
        if let target = analysis.tables.first(where: { $0.kind.isWrite }), let key = policy.tables.match(target.name) {
            return outcome(.write(WriteRequest(statement: statement, originalSQL: sql, sqlWithReadsRewritten: rewritten, table: key,
                                               kind: target.kind, analysis: analysis)))
        }
        return outcome(rewritten == sql ? .unchanged : .rewritten(rewritten))
    }

    /// The statement with ``AffinityComparisons``' insertions, parsed again; nil when it has none.
    /// An unaliased result column whose text changes is named after its original text.
    /// Only statements that run now are converted: a view's or a trigger's text is stored, and must
    /// stay the app's (a view is expanded, and converted, when it is read).
    private func convertingComparisons(_ parsed: ParsedStatement, reshaped: ReshapedColumns) throws(RewriteError) -> ParsedStatement? {
        switch parsed.statement {
        case .select, .insert, .update, .delete: break
        default: return nil
        }
        let insertions = AffinityComparisons.insertions(tokens: parsed.tokens, source: parsed.source, analysis: parsed.analysis,
                                                        tables: policy.tables, reshaped: reshaped)
        guard !insertions.isEmpty else { return nil }
        var edits = insertions
        for column in parsed.resultColumns where !column.hasAlias && insertions.contains(where: { column.range.contains($0.0.lowerBound) }) {
            var writer = SQLWriter(options: PrinterOptions(identifierQuoting: .always))
            writer.identifier(Identifier(parsed.source.string(column.range)))
            edits.append((column.range.upperBound..<column.range.upperBound, " AS " + writer.output))
        }
        var bytes = parsed.source.bytes
        for (range, text) in edits.enumerated().sorted(by: { ($0.element.0.lowerBound, $0.offset) > ($1.element.0.lowerBound, $1.offset) }).map(\.element) {
            bytes.replaceSubrange(range, with: Array(text.utf8))
        }
        let sql = String(decoding: bytes, as: UTF8.self)
        let tokens: [Token]
        do { tokens = try Tokenizer.tokenize(sql) } catch { throw .syntax(error) }
        return try ParsedStatement(sql: sql, tokens: tokens, options: parserOptions)
    }

    func render(_ statements: [RewrittenStatement]) -> [String] {
        statements.map {
            switch $0 {
            case .sql(let text): return text
            case .statement(let statement): return Printer().print(statement)
            }
        }
    }

    /// Replaces every read of a listed table in `sql`; throws if one cannot be replaced. Result columns keep the
    /// names SQLite gives them in the original statement (see `keepResultColumnNames`).
    func replaceReads(_ sql: String, source: SourceText, analysis: StatementAnalysis,
                      resultColumns: [ResultColumnSpan] = [], starColumns: [StarColumnSpan] = []) throws(RewriteError) -> String {
        var edits: [(Range<Int>, String)] = []
        var replacedTables = Set<Int>()
        for (index, access) in analysis.tables.enumerated() where access.kind == .read && access.resolution == .table {
            guard let key = policy.tables.match(access.name) else { continue }
            guard let range = access.location.range else {
                throw .unsupported(table: key, reason: "a reference to \(key) has no source location")
            }
            let replacement: TableReplacement
            var hintRange: Range<Int>?
            if let hint = access.indexHint {
                guard let hinted = policy.replacementForHintedRead, let range = access.indexHintLocation.range else {
                    throw .unsupported(table: key, reason: "cannot replace \(access.name) carrying INDEXED BY / NOT INDEXED")
                }
                replacement = try hinted(key, hint)
                hintRange = range
            } else {
                replacement = try policy.replacementForRead(key)
            }
            var text: String
            var isTable = false
            switch replacement {
            case .table(let name):
                var writer = SQLWriter(options: PrinterOptions())
                writer.qualifiedName(name)
                text = writer.output
                isTable = true
                hintRange = nil  // a table keeps its hint
            case .subquery(let query):
                text = "(" + query + ")"
            case .select(let select):
                text = "(" + Printer().print(select) + ")"
            }
            if let hintRange { edits.append((hintRange, "")) }
            if access.context == .from && access.alias == nil {
                var writer = SQLWriter(options: PrinterOptions())
                writer.identifier(access.name.name)
                if !(isTable && writer.output == text) { text += " AS " + writer.output }
            }
            edits.append((range, text))
            replacedTables.insert(index)
        }
        if let qualifiedWriteTarget = policy.qualifiedWriteTarget {
            for access in analysis.tables where access.kind.isWrite && access.resolution == .table && access.name.schema == nil {
                guard let key = policy.tables.match(access.name), let name = qualifiedWriteTarget(key), let range = access.location.range else { continue }
                var writer = SQLWriter(options: PrinterOptions())
                writer.qualifiedName(name)
                edits.append((range, writer.output))
            }
        }
        // `schema.table.column` must lose its schema once the table is replaced (the replacement is named `table`).
        for use in analysis.columns where use.reference.schema != nil {
            guard case .item(let item) = use.binding, let table = analysis.fromItems[item].table, replacedTables.contains(table),
                  let range = use.reference.location.range else { continue }
            var writer = SQLWriter(options: PrinterOptions())
            writer.identifier(use.reference.table!)
            writer.output += "."
            writer.identifier(use.reference.column)
            edits.append((range, writer.output))
        }
        edits += try expandStars(starColumns, analysis: analysis, replacedTables: replacedTables)
        if edits.isEmpty { return sql }
        edits += keepResultColumnNames(resultColumns, edits: edits, source: source, analysis: analysis, replacedTables: replacedTables)
        edits.sort { $0.0.lowerBound < $1.0.lowerBound }
        var output: [UInt8] = []
        output.reserveCapacity(source.count + edits.reduce(0) { $0 + $1.1.utf8.count })
        var cursor = 0
        for (range, text) in edits {
            guard range.lowerBound >= cursor else { throw .unsupported(table: nil, reason: "overlapping rewrites") }
            output.append(contentsOf: source.bytes[cursor..<range.lowerBound])
            output.append(contentsOf: text.utf8)
            cursor = range.upperBound
        }
        output.append(contentsOf: source.bytes[cursor...])
        return String(decoding: output, as: UTF8.self)
    }

    /// Spells out `*` and `table.*` where they cover a replaced table whose replacement shows more columns than the
    /// table (``RewritePolicy/starColumns``): `*` becomes every FROM item's columns in order (`t."a", t."b", u.*`),
    /// `t.*` the table's. Throws when a star cannot be spelled out exactly: over a NATURAL or USING join (which
    /// shows shared columns once), or beside an item that has no name to qualify with.
    func expandStars(_ stars: [StarColumnSpan], analysis: StatementAnalysis, replacedTables: Set<Int>) throws(RewriteError) -> [(Range<Int>, String)] {
        guard let starColumns = policy.starColumns, !stars.isEmpty else { return [] }
        var widened: [Range<Int>: (key: String, columns: [String])] = [:]
        for index in replacedTables {
            let access = analysis.tables[index]
            guard let range = access.location.range, let key = policy.tables.match(access.name), let columns = starColumns(key) else { continue }
            widened[range] = (key, columns)
        }
        if widened.isEmpty { return [] }
        func table(_ item: StarFromItem) -> (key: String, columns: [String])? { item.tableLocation.range.flatMap { widened[$0] } }
        func contains(_ item: StarFromItem) -> Bool {
            table(item) != nil || item.nestedTableLocations.contains { $0.range.map { widened[$0] != nil } ?? false }
        }
        func spelled(_ name: Identifier, _ columns: [String]) -> String {
            var qualifier = SQLWriter(options: PrinterOptions())
            qualifier.identifier(name)
            return columns.map { column in
                var writer = SQLWriter(options: PrinterOptions(identifierQuoting: .always))
                writer.identifier(Identifier(column))
                return qualifier.output + "." + writer.output
            }.joined(separator: ", ")
        }
        var edits: [(Range<Int>, String)] = []
        for star in stars {
            guard let involved = star.fromItems.first(where: contains) else { continue }
            let key = table(involved)?.key
            if let name = star.table {
                guard let item = star.fromItems.first(where: { $0.exposedName.map { SQLName.equal($0.name, name.name) } ?? false }),
                      contains(item) else { continue }
                guard let widenedTable = table(item), let exposed = item.exposedName else {
                    throw .unsupported(table: key, reason: "`\(name.name).*` covers a parenthesized join with a migrating table: name the columns")
                }
                edits.append((star.range, spelled(exposed, widenedTable.columns)))
                continue
            }
            if star.joinsByName {
                throw .unsupported(table: key, reason: "`*` over a NATURAL or USING join with a migrating table whose rowid the statement uses: name the columns")
            }
            var parts: [String] = []
            for item in star.fromItems {
                if let widenedTable = table(item), let exposed = item.exposedName {
                    parts.append(spelled(exposed, widenedTable.columns))
                } else if !contains(item), let exposed = item.exposedName {
                    var writer = SQLWriter(options: PrinterOptions())
                    writer.identifier(exposed)
                    parts.append(writer.output + ".*")
                } else {
                    throw .unsupported(table: key, reason: "`*` over a migrating table whose rowid the statement uses, beside an item without a name: name the columns")
                }
            }
            edits.append((star.range, parts.joined(separator: ", ")))
        }
        return edits
    }

    /// Aliases that keep result column names as SQLite gives them on the original statement: an unaliased
    /// expression whose text an edit changes is named after its original text (`AS "(SELECT max(a) FROM t)"`);
    /// an unaliased read of a replaced table's rowid gets the name the policy says SQLite gives it. Each alias is
    /// an insertion right after the expression.
    func keepResultColumnNames(_ resultColumns: [ResultColumnSpan], edits: [(Range<Int>, String)], source: SourceText,
                               analysis: StatementAnalysis, replacedTables: Set<Int>) -> [(Range<Int>, String)] {
        var aliases: [(Range<Int>, String)] = []
        for column in resultColumns where !column.hasAlias {
            let name: String
            if let reference = column.columnReference {
                let spelling = reference.column.name.lowercased()
                guard spelling == "rowid" || spelling == "oid" || spelling == "_rowid_", let rowidResultName = policy.rowidResultName,
                      let use = analysis.columns.first(where: { use in
                          use.reference.location.range.map { column.range.lowerBound <= $0.lowerBound && $0.upperBound <= column.range.upperBound } ?? false
                      }),
                      case .item(let item) = use.binding, let table = analysis.fromItems[item].table, replacedTables.contains(table),
                      let key = policy.tables.match(analysis.tables[table].name), let rowidName = rowidResultName(key, spelling)
                else { continue }
                name = rowidName
            } else {
                guard edits.contains(where: { $0.0.overlaps(column.range) }) else { continue }
                name = source.string(column.range)
            }
            var writer = SQLWriter(options: PrinterOptions(identifierQuoting: .always))
            writer.identifier(Identifier(name))
            aliases.append((column.range.upperBound..<column.range.upperBound, " AS " + writer.output))
        }
        return aliases
    }
}
