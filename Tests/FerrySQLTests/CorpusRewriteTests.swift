import Foundation
import Testing
@testable import FerrySQL

@Suite struct CorpusRewriteTests {
    /// Rewrites every valid DML statement of the corpus that names t1, t2 or t3, replacing reads by `<name>_shadow`,
    /// and checks that the result parses and reads none of the listed tables any more.
    @Test(.enabled(if: Corpus.isAvailable, Corpus.unavailable))
    func rewritingTheCorpusLeavesNoListedReads() async throws {
        let outcome = try await Corpus.runSerially { () throws -> (rewritten: Int, unchanged: Int, refused: Int, problems: [String])? in
            guard let entries = try Corpus.load() else { return nil }
            return Self.rewrite(entries)
        }
        guard let outcome else { Issue.record("the corpus went away during the run"); return }
        for problem in outcome.problems { Issue.record(Comment(rawValue: problem)) }
        print("corpus rewrite: \(outcome.rewritten) rewritten, \(outcome.unchanged) unchanged, \(outcome.refused) refused (INDEXED BY)")
        #expect(outcome.rewritten > 1000)
    }

    static func rewrite(_ entries: [CorpusEntry]) -> (rewritten: Int, unchanged: Int, refused: Int, problems: [String]) {
        let listed = TableSet(["t1", "t2", "t3"])
        let policy = RewritePolicy(tables: listed, replacementForRead: { .table(QualifiedName(Identifier($0 + "_shadow"))) })
        let rewriter = Rewriter(policy: policy)
        var rewritten = 0, unchanged = 0, refused = 0
        var problems: [String] = []
        for entry in entries where entry.valid == "ok" && ["select", "insert", "update", "delete", "replace", "with"].contains(entry.kind) {
            let result: RewriteResult
            do {
                result = try rewriter.rewrite(entry.sql)
            } catch .unsupported {
                refused += 1
                continue
            } catch {
                problems.append("\(error) for \(entry.sql)")
                continue
            }
            if result.isUnchanged { unchanged += 1; continue }
            rewritten += 1
            for sql in result.statements {
                guard let statement = try? Parser.parseStatement(sql) else {
                    problems.append("rewritten SQL does not parse: \(sql)")
                    continue
                }
                let leftover = StatementAnalysis(statement).tables.filter {
                    $0.kind == .read && $0.resolution == .table && listed.match($0.name) != nil
                }
                if !leftover.isEmpty { problems.append("still reads a listed table: \(entry.sql) => \(sql)") }
            }
        }
        return (rewritten, unchanged, refused, problems)
    }
}
