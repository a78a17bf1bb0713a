/// One statement of SQL text, tokenized and parsed once, with what a rewrite needs beside its
/// syntax tree: where its result columns and stars stand in the text, and its analysis.
///
/// Built by ``Rewriter/resolve(_:)`` when the statement names a listed table; a caller that needs
/// the statement again (to find a pinned key, say) reads it here instead of parsing the text again,
/// and ``Rewriter/resolve(parsed:)`` rewrites it under another policy without parsing it.
package struct ParsedStatement: Sendable {
    /// The statement's text.
    package let sql: String
    /// The text as bytes, for slicing by token range.
    package let source: SourceText
    /// Its tokens.
    package let tokens: [Token]
    /// Its syntax tree.
    package let statement: Statement
    /// Its tables, columns and FROM items.
    package let analysis: StatementAnalysis
    /// Where each result column stands (for keeping the names SQLite gives them).
    let resultColumns: [ResultColumnSpan]
    /// Where each `*` and `table.*` stands.
    let starColumns: [StarColumnSpan]

    /// Parses `sql` (already tokenized as `tokens`).
    /// - Throws: `RewriteError.syntax` when it is not exactly one statement.
    package init(sql: String, tokens: [Token], options: ParserOptions = .default) throws(RewriteError) {
        let source = SourceText(sql)
        do {
            let parsed = try Parser.parseStatementWithColumnSpans(source: source, tokens: tokens, options: options)
            self.init(sql: sql, source: source, tokens: tokens, statement: parsed.statement,
                      resultColumns: parsed.resultColumns, starColumns: parsed.starColumns)
        } catch {
            throw .syntax(error)
        }
    }

    init(sql: String, source: SourceText, tokens: [Token], statement: Statement,
         resultColumns: [ResultColumnSpan], starColumns: [StarColumnSpan]) {
        self.sql = sql
        self.source = source
        self.tokens = tokens
        self.statement = statement
        self.analysis = StatementAnalysis(statement)
        self.resultColumns = resultColumns
        self.starColumns = starColumns
    }
}

/// What a statement becomes under a policy, before the policy's write and schema handlers ran: the
/// caller decides writes and schema statements itself, with the parsed statement in hand, and
/// returns its own typed plan (``Rewriter/rewrite(_:)`` hands them to the policy's closures).
package enum RewriteAction: Sendable {
    /// The statement names no listed table: it runs as written.
    case unchanged
    /// A read (or a write of an unlisted table) with every read of a listed table replaced.
    case rewritten(String)
    /// A statement that writes a listed table.
    case write(WriteRequest)
    /// A schema statement, pragma or other statement naming a listed table.
    case other(OtherStatementRequest)
}

/// The outcome of ``Rewriter/resolve(_:)``: what to do with the statement, and what it touches.
package struct RewriteOutcome: Sendable {
    /// What the statement becomes.
    package var action: RewriteAction
    /// The listed tables it reads (lower-cased).
    package var reads: Set<String>
    /// The listed tables it writes (lower-cased).
    package var writes: Set<String>
    /// The statement as parsed, when it names a listed table (nil: it was not parsed).
    package var parsed: ParsedStatement?
}
