import FerrySQLite
import CFerryFaultVFS
import Foundation
import Testing
@testable import Ferry

/// The fault-injection suites: `swift test --filter Faults` runs them all. See Docs/Testing.md.
@Suite(.timeLimit(.minutes(20)))
enum Faults {}

/// The fault-injecting VFS (`Tests/CFerryFaultVFS`) seen from Swift.
///
/// Open connections with `FaultVFS.configuration` (or set `Connection.Configuration.vfs` to
/// `FaultVFS.name`); arm rules that fail chosen operations on files whose path contains a
/// substring; read the operation counters. Rules and counters are global to the process but
/// scoped by path, so tests in separate sandboxes do not see each other's faults.
enum FaultVFS {
    /// The registered VFS name ("ferry-fault"); registers it on first use.
    static let name: String = {
        let rc = ferry_fault_vfs_register()
        precondition(rc == 0, "cannot register the fault VFS: \(rc)")
        return String(cString: ferry_fault_vfs_name())
    }()

    /// A connection configuration that opens through the fault VFS.
    static func configuration(_ base: Connection.Configuration = .init()) -> Connection.Configuration {
        var configuration = base
        configuration.vfs = name
        return configuration
    }

    /// The operations the VFS counts and can fail.
    enum Operation: Int32, CaseIterable, CustomStringConvertible, Sendable {
        case open = 0, read, write, sync, lock, truncate, fileSize, shmLock, shmMap
        var raw: FerryFaultOp { FerryFaultOp(rawValue: UInt32(rawValue)) }
        var description: String {
            switch self {
            case .open: "open"
            case .read: "read"
            case .write: "write"
            case .sync: "sync"
            case .lock: "lock"
            case .truncate: "truncate"
            case .fileSize: "fileSize"
            case .shmLock: "shmLock"
            case .shmMap: "shmMap"
            }
        }
    }

    /// Kinds of files.
    struct Files: OptionSet, Sendable, Hashable {
        let rawValue: UInt32
        static let database = Files(rawValue: 1)
        static let wal = Files(rawValue: 2)
        static let journal = Files(rawValue: 4)
        static let other = Files(rawValue: 8)
        static let all: Files = [.database, .wal, .journal, .other]
    }

    /// Which matching operations fail (indexes count the rule's matching operations from 0).
    enum Trigger: Sendable {
        case nth(Int64)
        case from(Int64)
        case random(probability: Double, seed: UInt64)
    }

    /// What a failing operation returns.
    enum Failure: Sendable, CustomStringConvertible {
        /// The operation's own `SQLITE_IOERR_*` code (`SQLITE_CANTOPEN` for open).
        case ioError
        /// `SQLITE_FULL`.
        case full
        /// `SQLITE_BUSY`.
        case busy
        /// Any SQLite result code.
        case code(Int32)
        /// For `open`: the file opens read-only, as when its permissions forbid writing.
        case openReadOnly
        var description: String {
            switch self {
            case .ioError: "IOERR"
            case .full: "FULL"
            case .busy: "BUSY"
            case .code(let code): "code \(code)"
            case .openReadOnly: "read-only open"
            }
        }
    }

    /// An armed rule.
    struct Rule: Sendable {
        let id: Int32
        /// Operations the rule matched since it was armed.
        var matched: Int64 { ferry_fault_rule_matched(id) }
        /// Operations it failed.
        var fired: Int64 { ferry_fault_rule_fired(id) }
        /// The file of its latest failure ("" if none).
        var lastPath: String {
            var buffer = [CChar](repeating: 0, count: 1024)
            _ = ferry_fault_rule_last_path(id, &buffer, 1024)
            return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        func disarm() { ferry_fault_disarm(id) }
    }

    /// Arms a rule on the files whose path contains `path`.
    @discardableResult
    static func arm(path: String, files: Files = .all, operations: Set<Operation>, trigger: Trigger, failure: Failure,
                    maxFailures: Int64 = -1) -> Rule {
        _ = name
        var rule = FerryFaultRule()
        rule.fileMask = files.rawValue
        rule.operationMask = operations.reduce(0) { $0 | (1 << UInt32($1.rawValue)) }
        switch trigger {
        case .nth(let n): rule.mode = FERRY_FAULT_NTH; rule.n = n
        case .from(let n): rule.mode = FERRY_FAULT_FROM; rule.n = n
        case .random(let p, let seed): rule.mode = FERRY_FAULT_RANDOM; rule.probability = p; rule.seed = seed
        }
        switch failure {
        case .ioError: rule.failure = FERRY_FAULT_IOERR
        case .full: rule.failure = FERRY_FAULT_FULL
        case .busy: rule.failure = FERRY_FAULT_BUSY
        case .code(let code): rule.failure = FERRY_FAULT_CODE; rule.code = code
        case .openReadOnly: rule.failure = FERRY_FAULT_READONLY_OPEN
        }
        rule.maxFailures = maxFailures
        let id = ferry_fault_arm(path, rule)
        precondition(id >= 0, "every fault rule slot is in use")
        return Rule(id: id)
    }

    /// Disarms every rule whose path contains `path` (a test's directory).
    static func disarm(path: String) { ferry_fault_disarm_matching(path) }

    /// Operations of one kind counted on the files whose path contains `path`.
    static func count(_ operation: Operation, path: String, files: Files = .all) -> Int64 {
        _ = name
        return ferry_fault_count(path, files.rawValue, operation.raw)
    }

    /// Zeroes the counters of the files whose path contains `path`.
    static func resetCounts(path: String) { ferry_fault_reset_counts(path) }

    /// Operations failed by every rule since the process started.
    static var totalFired: Int64 { ferry_fault_total_fired() }
}
