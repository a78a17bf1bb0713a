import Foundation
import Testing
@testable import FerrySQL

@Suite struct CorpusTests {
    struct Counts {
        var ok = 0, okParsed = 0, bad = 0, badRejected = 0, roundTripped = 0, parsed = 0, unknown = 0, unknownParsed = 0
    }

    /// What parsing and printing the corpus found, by statement kind.
    struct Outcome: Sendable {
        var counts: [String: Counts] = [:]
        var failures: [String] = []
        var printedPairs: [String] = []
    }

    @Test(.enabled(if: Corpus.isAvailable, Corpus.unavailable))
    func corpusParsesAndRoundTrips() async throws {
        let dumpPrinted = ProcessInfo.processInfo.environment["FERRY_CORPUS_PRINTED"]
        let outcome = try await Corpus.runSerially { () throws -> Outcome? in
            guard let entries = try Corpus.load() else { return nil }
            return Self.parseAndPrint(entries, keepingPrinted: dumpPrinted != nil)
        }
        guard let outcome else { Issue.record("the corpus went away during the run"); return }
        let counts = outcome.counts
        let failures = outcome.failures
        var summary = "corpus:"
        var total = Counts()
        for kind in counts.keys.sorted() {
            let c = counts[kind]!
            summary += " \(kind) \(c.okParsed)/\(c.ok) ok, \(c.badRejected)/\(c.bad) rejected, \(c.roundTripped)/\(c.parsed) round-tripped;"
            total.ok += c.ok; total.okParsed += c.okParsed; total.bad += c.bad; total.badRejected += c.badRejected
            total.roundTripped += c.roundTripped; total.parsed += c.parsed
            total.unknown += c.unknown; total.unknownParsed += c.unknownParsed
        }
        summary += " total \(total.okParsed)/\(total.ok) ok, \(total.badRejected)/\(total.bad) rejected, \(total.roundTripped)/\(total.parsed) round-tripped"
        summary += "; labelled unknown: \(total.unknownParsed)/\(total.unknown) parsed"
        print(summary)
        if let dumpPrinted {
            try outcome.printedPairs.joined(separator: "\n").write(toFile: dumpPrinted, atomically: true, encoding: .utf8)
        }
        if let path = ProcessInfo.processInfo.environment["FERRY_CORPUS_FAILURES"] {
            try failures.joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
        }
        for kind in ["select", "insert", "update", "delete", "replace", "with"] {
            let c = counts[kind] ?? Counts()
            #expect(c.okParsed == c.ok, "every valid \(kind) statement parses")
        }
        #expect(total.roundTripped == total.parsed, "every parsed statement round-trips")
    }

    /// Parses every corpus statement, checks SQLite's verdict, and prints and re-parses what parsed.
    static func parseAndPrint(_ entries: [CorpusEntry], keepingPrinted: Bool) -> Outcome {
        var counts: [String: Counts] = [:]
        var failures: [String] = []
        var printedPairs: [String] = []
        for entry in entries {
            var c = counts[entry.kind] ?? Counts()
            let result = Result { () throws(SQLSyntaxError) -> Statement in try Parser.parseStatement(entry.sql) }
            switch entry.valid {
            case "ok":
                c.ok += 1
                switch result {
                case .success: c.okParsed += 1
                case .failure(let error): failures.append("OK-FAIL [\(entry.kind)] \(error.message) | \(entry.sql)")
                }
            case "syntax_error":
                c.bad += 1
                if case .failure = result { c.badRejected += 1 } else { failures.append("ACCEPTED [\(entry.kind)] \(entry.sql)") }
            default:
                c.unknown += 1
                switch result {
                case .success: c.unknownParsed += 1
                case .failure(let error): failures.append("UNKNOWN-REJECTED [\(entry.kind)] \(error.message) | \(entry.sql)")
                }
            }
            if case .success(let statement) = result {
                c.parsed += 1
                let printed = Printer().print(statement)
                if keepingPrinted, entry.valid == "ok",
                   let data = try? JSONEncoder().encode([entry.sql, printed]), let line = String(data: data, encoding: .utf8) {
                    printedPairs.append(line)
                }
                if let again = try? Parser.parseStatement(printed), again == statement {
                    c.roundTripped += 1
                } else {
                    failures.append("ROUNDTRIP [\(entry.kind)] \(entry.sql)\n   => \(printed)")
                }
            }
            counts[entry.kind] = c
        }
        return Outcome(counts: counts, failures: failures, printedPairs: printedPairs)
    }
}
