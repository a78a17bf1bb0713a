import Foundation
import Testing
@testable import Ferry

/// Fault settings shared by the fault suites.
enum FaultSettings {
    /// `FERRY_FAULT_ITERATIONS=N` turns on the long mode: the systematic test fails every
    /// operation index instead of a spread sample, and the random test runs N seeds.
    static var longModeIterations: Int? {
        ProcessInfo.processInfo.environment["FERRY_FAULT_ITERATIONS"].flatMap(Int.init).flatMap { $0 > 0 ? $0 : nil }
    }
}

extension Faults {
    /// Systematic fault injection: a small migration scenario runs once without faults while the fault
    /// VFS counts its I/O operations, then again from fresh files for each operation index of each kind
    /// (on the target's files, then on the source's), with that one operation failing. After every
    /// run: only typed errors surfaced, every file passes `integrity_check`, the reopened database
    /// shows exactly the expected rows (app writes that threw had no effect, those that returned are
    /// visible), nothing is quarantined, and the migration and cleanup complete.
    @Suite(.timeLimit(.minutes(20)))
    struct SystematicFaultTests {
        /// The scenario: register a plan on a 200-row source, step, app writes of every kind through
        /// the migrating table (some move pending source rows first), a read, step to completion and
        /// through cleanup (the source table is dropped), a write on the finished table.
        static func smallScenario(_ run: ScenarioRun) {
            run.open()
            run.step()
            run.step()
            run.insert(conversation: 7)
            run.appendToBody(ids: [5, 150])
            run.readAndCompare()
            run.step()
            run.delete(ids: [20, 170])
            run.transaction(insert: 8, thenDelete: 130, thenAppendTo: 100)
            run.replace(id: 190, conversation: 1)
            run.setConversation(9, ids: 95...99)
            run.stepUntilDone()
            run.insert(conversation: 7)
            run.readAndCompare()
            run.close()
        }

        struct Category: Hashable, CustomStringConvertible {
            var file: String  // "target" or "source"
            var operation: FaultVFS.Operation
            var failure: String
            var description: String { "\(file) \(operation) \(failure)" }
        }

        struct Tally {
            var runs = 0
            var injected = 0
            var surfaced = 0
            var absorbed = 0
            var codes: [String: Int] = [:]
        }

        // Async, yielding between runs: a long synchronous test would hold one of the few threads
        // Swift Testing runs every suite on, and starve the others' time limits.
        enum Files: String, CaseIterable, CustomStringConvertible {
            case plain, encrypted
            var description: String { rawValue }
            /// Encrypted runs need SQLCipher.
            static var available: [Files] { SQLiteEngine.supportsEncryption ? allCases : [.plain] }
        }

        @Test(arguments: Files.available)
        func everyOperationOfASmallScenarioFailsInTurn(files kind: Files) async throws {
            let template = kind == .plain
                ? try ScenarioTemplate(sourceRows: 200, batchRows: 40)
                : try ScenarioTemplate(sourceRows: 200, batchRows: 40, sourceCipher: ScenarioTemplate.cipher("source-key"),
                                       targetCipher: ScenarioTemplate.cipher("target-key"))

            // The fault-free run, counting operations.
            let baseline = try template.makeRun()
            let clean = ScenarioRun(template: template, files: baseline, recovery: .reopen)
            Self.smallScenario(clean)
            #expect(clean.errors.isEmpty, "the fault-free run failed: \(clean.errors)")
            let cleanProblems = clean.check()
            #expect(cleanProblems.isEmpty, "fault-free run: \(cleanProblems)")
            let fileSubstrings = ["target": "/app.db", "source": "/legacy.db"]
            var counts: [String: [FaultVFS.Operation: Int64]] = [:]
            for (file, suffix) in fileSubstrings {
                for operation in FaultVFS.Operation.allCases {
                    counts[file, default: [:]][operation] = FaultVFS.count(operation, path: baseline.directory + suffix)
                }
            }
            print("fault-free scenario operations (\(kind) files): " + counts.sorted { $0.key > $1.key }.map { file, ops in
                "\(file) " + ops.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            }.joined(separator: "; "))
            template.discard(baseline)

            let failures: [FaultVFS.Operation: [FaultVFS.Failure]] = [
                .open: [.ioError], .read: [.ioError], .write: [.ioError, .full], .sync: [.ioError],
                .lock: [.ioError, .busy], .truncate: [.ioError, .full], .fileSize: [.ioError],
                .shmLock: [.ioError, .busy], .shmMap: [.ioError],
            ]
            // The plain files get the larger sample in the normal run; the long mode tries every index.
            let sample = FaultSettings.longModeIterations != nil ? Int.max : kind == .plain ? 24 : 8
            var tallies: [Category: Tally] = [:]
            var recoveryIndex = 0
            for file in ["target", "source"] {
                for operation in FaultVFS.Operation.allCases {
                    let total = counts[file]?[operation] ?? 0
                    guard total > 0 else { continue }
                    for failure in failures[operation] ?? [] {
                        let category = Category(file: file, operation: operation, failure: "\(failure)")
                        for index in Self.indexes(total, sample: sample) {
                            await Task.yield()
                            let files = try template.makeRun()
                            let recovery = Recovery.allCases[recoveryIndex % 2]
                            recoveryIndex += 1
                            let rule = FaultVFS.arm(path: files.directory + fileSubstrings[file]!, operations: [operation],
                                                    trigger: .nth(index), failure: failure)
                            let run = ScenarioRun(template: template, files: files, recovery: recovery)
                            run.onFirstError = { rule.disarm() }
                            Self.smallScenario(run)
                            rule.disarm()
                            let fired = rule.fired > 0
                            let problems = run.check()
                            var tally = tallies[category] ?? Tally()
                            tally.runs += 1
                            if fired {
                                tally.injected += 1
                                if let first = run.errors.first {
                                    tally.surfaced += 1
                                    let code = Self.label(first.error)
                                    tally.codes[code, default: 0] += 1
                                } else {
                                    tally.absorbed += 1
                                }
                            }
                            tallies[category] = tally
                            if !problems.isEmpty {
                                Issue.record(Comment(rawValue: "\(category) #\(index) (\(recovery)), errors \(run.errors.map { "\($0.action): \($0.error)" }): \(problems.joined(separator: "; "))"))
                            }
                            template.discard(files)
                        }
                    }
                }
            }
            let injected = tallies.values.reduce(0) { $0 + $1.injected }
            let surfaced = tallies.values.reduce(0) { $0 + $1.surfaced }
            print("systematic faults (\(kind) files): \(injected) injected and survived (\(surfaced) surfaced as typed errors, \(injected - surfaced) absorbed by SQLite's retries or at close) in \(tallies.values.reduce(0) { $0 + $1.runs }) runs")
            for (category, tally) in tallies.sorted(by: { $0.key.description < $1.key.description }) {
                print("  \(category): \(tally.injected) injected (\(tally.surfaced) surfaced, \(tally.absorbed) absorbed) of \(tally.runs) runs; first errors \(tally.codes.sorted { $0.key < $1.key }.map { "\($0.key) ×\($0.value)" }.joined(separator: ", "))")
            }
            #expect(injected > 0)
        }

        /// A short name for an error: SQLite's primary code, or the FerryError case.
        static func label(_ error: any Error) -> String {
            switch error as? FerryError {
            case .sqlite(let code, _, _)?: return "SQLITE \(code.primaryCode)"
            case .sourceUnavailable(_, let reason)?:
                return "sourceUnavailable" + (reason.contains("SQLite error") ? " (\(reason.split(separator: " ").dropFirst(2).first ?? ""))" : "")
            case .wrongKeyOrNotADatabase?: return "wrongKeyOrNotADatabase"
            case let other?: return "\(other)".prefix(40) + ""
            case nil: return "\(type(of: error))"
            }
        }

        /// Every index below `total`, or `sample` of them spread evenly (always the first and last).
        static func indexes(_ total: Int64, sample: Int) -> [Int64] {
            guard total > Int64(sample) else { return Array(0..<total) }
            return (0..<sample).map { Int64((Double($0) * Double(total - 1) / Double(sample - 1)).rounded()) }
        }
    }
}
