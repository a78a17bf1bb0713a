#if CommandLineTool
import ArgumentParser
import Foundation
import Ferry

/// The options of every command that opens a target database: `DB [--key K]`, or `--plan PLAN.json`
/// which names the target, supplies every key and cipher setting, and registers the plan.
struct DatabaseOptions: ParsableArguments {
    @Argument(help: "The target database file (or use --plan).")
    var database: String?

    @Option(help: "The passphrase of the target database.")
    var key: String?

    @Option(name: .customLong("key-env"), help: "Read the target's passphrase from this environment variable.")
    var keyEnvironment: String?

    @Option(help: ArgumentHelp("A plan file (JSON) in place of DB: supplies the target, the keys and cipher settings of every database, and registers the plan.", valueName: "PLAN.json"))
    var plan: String?

    @OptionGroup var diagnostics: DiagnosticsOptions

    /// Checks that exactly one of DB and --plan is given.
    func validate() throws {
        if database == nil && plan == nil {
            throw ValidationError("give a database file or --plan PLAN.json")
        }
        if database != nil && plan != nil {
            throw ValidationError("give either a database file or --plan PLAN.json, not both")
        }
        if plan != nil && (key != nil || keyEnvironment != nil) {
            throw ValidationError("--plan supplies the keys; do not combine it with --key or --key-env")
        }
        if key != nil && keyEnvironment != nil {
            throw ValidationError("give either --key or --key-env, not both")
        }
    }

    /// The target's cipher from `--key` / `--key-env`.
    func targetCipher() throws -> Cipher? {
        if let key { return .passphrase(key) }
        if let keyEnvironment {
            guard let value = ProcessInfo.processInfo.environment[keyEnvironment] else {
                throw CLIError("environment variable \(keyEnvironment) is not set")
            }
            return .passphrase(value)
        }
        return nil
    }

    /// Opens the target: from the plan file (registering the plan) or from DB (which must exist).
    func open(options: FerryDatabase.Options = .init()) throws -> OpenedDatabase {
        if let plan {
            let file = try MigrationPlanFile.loadForCommand(plan)
            let database = try PlanRegistration.open(file, options: options)
            return OpenedDatabase(database: database, path: file.targetPath, cipher: file.targetCipher, planFile: file)
        }
        guard let path = database else { throw CLIError("no database given") }
        try Self.requireDatabaseFile(path)
        let cipher = try targetCipher()
        CommandContext.opening(path, cipher: cipher)
        let database = try FerryDatabase(path: path, configuration: .init(cipher: cipher), options: options)
        return OpenedDatabase(database: database, path: path, cipher: cipher, planFile: nil)
    }

    /// Throws unless `path` is an existing regular file.
    static func requireDatabaseFile(_ path: String) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw CLIError("no such database: \(path)")
        }
        guard !isDirectory.boolValue else { throw CLIError("not a database file but a directory: \(path)") }
    }
}

/// A target database opened by a command, with what opened it.
struct OpenedDatabase {
    /// The open database.
    let database: FerryDatabase
    /// The target path, as given (DB) or resolved (plan file).
    let path: String
    /// The target's cipher.
    let cipher: Cipher?
    /// The plan file, when the database was opened with `--plan`.
    let planFile: MigrationPlanFile?
}

/// Registers a plan file's plan in its target so that a failed registration changes nothing.
///
/// `FerryDatabase` registers a plan in one transaction (a refused plan leaves no catalog behind),
/// but opening creates the target file when it is missing: on failure this removes a file it created.
enum PlanRegistration {
    /// Opens the plan's target and registers the plan.
    static func open(_ file: MigrationPlanFile, options: FerryDatabase.Options = .init()) throws -> FerryDatabase {
        let path = file.targetPath
        let existed = FileManager.default.fileExists(atPath: path)
        CommandContext.opening(path, cipher: file.targetCipher)
        // A wrong key fails here, on a read-only open, before anything is written.
        if existed { _ = try registeredTargets(path: path, cipher: file.targetCipher) }
        do {
            return try FerryDatabase(path: path, configuration: .init(cipher: file.targetCipher), plan: file.plan, options: options)
        } catch {
            if !existed {
                for suffix in ["", "-wal", "-shm", "-journal", "-ferry.lock"] { try? FileManager.default.removeItem(atPath: path + suffix) }
            }
            throw error
        }
    }

    /// The target tables registered in the database at `path` (lowercased), or nil when it has no
    /// catalog. Opens the file read-only: a wrong key fails here, before anything is written.
    static func registeredTargets(path: String, cipher: Cipher?) throws -> Set<String>? {
        try FerryDatabase.registeredTables(atPath: path, configuration: .init(cipher: cipher))
    }
}
#endif
