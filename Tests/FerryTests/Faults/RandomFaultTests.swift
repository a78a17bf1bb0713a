import Foundation
import Testing
@testable import Ferry

extension Faults {
    /// Random faults over a longer scenario: a filtered migration of 1000 rows with a seeded random
    /// mix of steps, app writes (inserts, replaces, updates, deletes, multi-statement transactions,
    /// transactions that catch an error and go on),
    /// reads and reopenings, while every I/O operation on the target's and the source's files may fail
    /// (IOERR on anything, FULL on writes, BUSY on locks). The run goes on after every error. At the
    /// end the faults stop and the same checks as the systematic test apply. Reads that succeed
    /// during the run must already show exactly the expected rows.
    ///
    /// `FERRY_FAULT_ITERATIONS=N` runs N seeds (default 6).
    @Suite(.timeLimit(.minutes(20)))
    struct RandomFaultTests {
        static var seeds: [UInt64] { Array(1...UInt64(FaultSettings.longModeIterations ?? 6)) }

        @Test func randomFaultsOverALongerScenario() async throws {
            let plain = try ScenarioTemplate(sourceRows: 1000, filter: "conversation_id <> 2", batchRows: 50)
            // Every other seed runs on an encrypted source and target when the engine can.
            let encrypted = SQLiteEngine.supportsEncryption
                ? try ScenarioTemplate(sourceRows: 1000, filter: "conversation_id <> 2", batchRows: 50,
                                       sourceCipher: ScenarioTemplate.cipher("source-key"), targetCipher: ScenarioTemplate.cipher("target-key"))
                : plain
            var injected: Int64 = 0
            var errors = 0
            var actions = 0
            var succeeded: [String: Int] = [:]
            for seed in Self.seeds {
                let template = seed % 2 == 0 ? encrypted : plain
                var random = SeededGenerator(state: seed)
                let files = try template.makeRun()
                let probability = [0.002, 0.005, 0.01, 0.02][Int(seed % 4)]
                let rules = [
                    FaultVFS.arm(path: files.directory + "/", operations: Set(FaultVFS.Operation.allCases),
                                 trigger: .random(probability: probability, seed: seed), failure: .ioError),
                    FaultVFS.arm(path: files.directory + "/", operations: [.write, .truncate],
                                 trigger: .random(probability: probability, seed: seed &* 31), failure: .full),
                    FaultVFS.arm(path: files.directory + "/", operations: [.lock, .shmLock],
                                 trigger: .random(probability: probability * 4, seed: seed &* 37), failure: .busy),
                ]
                let run = ScenarioRun(template: template, files: files, recovery: .continueInProcess)
                run.open()
                for _ in 0..<160 {
                    await Task.yield()
                    actions += 1
                    let id = Int64.random(in: 1...1100, using: &random)
                    switch Int.random(in: 0..<100, using: &random) {
                    case 0..<30: run.step()
                    case 30..<42: run.insert(conversation: Int64.random(in: 0...9, using: &random))
                    case 42..<48: run.replace(id: id, conversation: Int64.random(in: 0...9, using: &random))
                    case 48..<60: run.appendToBody(ids: [id, Int64.random(in: 1...1100, using: &random)])
                    case 60..<66: run.setConversation(Int64.random(in: 0...9, using: &random), ids: id...(id + Int64.random(in: 0...20, using: &random)))
                    case 66..<76: run.delete(ids: [id])
                    case 76..<80: run.transaction(insert: 5, thenDelete: id, thenAppendTo: Int64.random(in: 1...1100, using: &random))
                    case 80..<85: run.catchingTransaction(appendTo: [id, Int64.random(in: 1...1100, using: &random)], thenInsert: 6)
                    case 85..<96: run.readAndCompare()
                    default:
                        run.close()
                        run.open()
                    }
                }
                run.stepUntilDone(limit: 400)
                let fired = rules.reduce(0) { $0 + $1.fired }
                for rule in rules { rule.disarm() }
                let problems = run.check()
                injected += fired
                errors += run.errors.count
                succeeded.merge(run.succeeded, uniquingKeysWith: +)
                #expect(problems.isEmpty, "seed \(seed) (p = \(probability), \(fired) faults): \(problems.joined(separator: "; "))")
                template.discard(files)
            }
            print("random faults: \(injected) injected and survived over \(Self.seeds.count) seeds, \(actions) actions; \(errors) typed errors surfaced; actions that succeeded under faults: \(succeeded.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))")
            #expect(injected > 0)
        }
    }
}
