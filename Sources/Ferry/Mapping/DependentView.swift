import FerrySQLite
import FerrySQL

/// A view of the target database that reads a migrating table (directly or through other views).
///
/// SQLite expands a view inside its own engine, where Ferry's rewriter cannot reach, so a view over
/// a migrating table would show only the rows already moved. The redirector therefore expands such
/// views itself: a read of `v` becomes `(WITH "v"(columns) AS (<rewritten body>) SELECT * FROM "v")`,
/// whose body reads the union of target and pending source rows. Writes through such a view
/// (INSTEAD OF triggers) are refused until the migration finishes.
struct DependentView: Sendable {
    /// The view's name as stored.
    let name: String
    /// Its declared column names, if any (`CREATE VIEW v(a, b) AS ...`).
    let columns: [String]?
    /// The view's query as the app wrote it (SQLite names the view's unaliased result columns
    /// after this text: `a%4`, not a re-print's `a % 4`).
    let body: String
    /// The migrating tables and protected sources (lower-cased) it reads, directly or through
    /// other views: it needs their sources attached.
    var migratingTables: Set<String> = []

    /// The views of `main` that read one of `relations` (lower-cased unqualified names of migrating
    /// tables and protected sources), directly or through each other; and the names of views that
    /// mention one of them but cannot be parsed, so their reads must be refused.
    static func load(on db: Connection, reading relations: Set<String>) throws(FerryError) -> (views: [DependentView], unreadable: Set<String>) {
        guard !relations.isEmpty else { return ([], []) }
        var parsed: [(view: DependentView, reads: Set<String>)] = []
        var unreadable = Set<String>()
        for row in try sqlite(db.fetchAll("SELECT name, sql FROM main.sqlite_master WHERE type = 'view'")) {
            let name: String = try sqlite(row.column(0))
            let sql: String = try sqlite(row.column(1, as: String?.self)) ?? ""
            guard case .createView(let create)? = try? Parser.parseStatement(sql) else {
                let lower = sql.lowercased()
                if relations.contains(where: { lower.contains($0) }) { unreadable.insert(name.lowercased()) }
                continue
            }
            let reads = Set(StatementAnalysis(.select(create.select)).readTables
                .filter { $0.schema == nil || $0.schema?.name.lowercased() == "main" }
                .map { $0.name.name.lowercased() })
            let view = DependentView(name: name, columns: create.columns?.map(\.name), body: Self.bodyText(of: sql) ?? Printer().print(create.select))
            parsed.append((view, reads))
        }
        // Dependence is transitive: iterate until no view is added, nor reads another relation.
        var dependent = relations.union(unreadable)
        var reached: [String: Set<String>] = [:]  // by lower-cased view name: the relations it reads
        var result: [DependentView] = []
        var changed = true
        while changed {
            changed = false
            for (view, reads) in parsed where !reads.isDisjoint(with: dependent) {
                let name = view.name.lowercased()
                if !dependent.contains(name) {
                    dependent.insert(name)
                    result.append(view)
                    changed = true
                }
                let through = reads.reduce(into: reads.intersection(relations)) { $0.formUnion(reached[$1] ?? []) }
                if through != reached[name] {
                    reached[name] = through
                    changed = true
                }
            }
        }
        for index in result.indices { result[index].migratingTables = reached[result[index].name.lowercased()] ?? [] }
        return (result, unreadable)
    }

    /// The text of the query of `CREATE VIEW ... AS <query>`: everything after the first `AS` outside
    /// parentheses (the column list's names are quoted or bare words, never the keyword). Nil when
    /// the text does not tokenize.
    static func bodyText(of createView: String) -> String? {
        guard let tokens = try? Tokenizer.tokenize(createView) else { return nil }
        let source = SourceText(createView)
        var depth = 0
        for (index, token) in tokens.enumerated() {
            switch token.kind {
            case .leftParen: depth += 1
            case .rightParen: depth -= 1
            default: break
            }
            guard depth == 0, token.keyword == .as else { continue }
            let body = tokens[(index + 1)...].filter { $0.kind != .endOfInput && $0.kind != .semicolon }
            guard let first = body.first, let last = body.last else { return nil }
            return source.string(first.range.lowerBound..<last.range.upperBound)
        }
        return nil
    }

    /// The subquery that replaces a read of the view, around its already rewritten body.
    func expansion(rewrittenBody: String) -> String {
        let columnList = columns.map { "(" + $0.map(q).joined(separator: ", ") + ")" } ?? ""
        return "WITH \(q(name))\(columnList) AS (\(rewrittenBody)) SELECT * FROM \(q(name))"
    }
}
