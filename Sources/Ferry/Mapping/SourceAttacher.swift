import FerrySQLite
import Foundation
import Synchronization

/// Attaches each connection's source files, as the published catalog says it needs them: the
/// files that still feed or await a table, each with its key, checked to be the registered file
/// (`SourceFingerprint`), and detaches the ones nothing needs any more. Every Ferry connection runs
/// `attachSources(on:checkingFilesAfter:)` before each use; steps attach the one source they need
/// with `attachRequiredSource`.
final class SourceAttacher: Sendable {
    let paths: SourcePaths
    let ciphers: SourceCiphers
    private let catalog: PublishedCatalog
    /// The `journal_size_limit` of the sources (the target's, `FerryDatabase.Options.walSizeLimit`).
    let journalSizeLimit: Int
    /// Per connection, the sources its latest use could not attach (see `unavailableSources`).
    private let failures = Mutex<[ObjectIdentifier: [String: FerryError]]>([:])
    /// Per source (by id), the stamp of its file when a fingerprint check last passed: a step
    /// checks again only when the file changed since (`attachRequiredSource`).
    private let verifiedStamps = Mutex<[Int64: SourceFileStamp]>([:])
    /// How many times a source's fingerprint was read (tests).
    let fingerprintReads = Atomic<Int>(0)

    init(paths: SourcePaths, ciphers: SourceCiphers, catalog: PublishedCatalog, journalSizeLimit: Int) {
        self.paths = paths
        self.ciphers = ciphers
        self.catalog = catalog
        self.journalSizeLimit = journalSizeLimit
    }

    /// Attaches every source file that still feeds an unfinished table (or is needed to clean one),
    /// and detaches the sources nothing needs any more. Runs on every Ferry connection before each
    /// use, so readers let go of a finished source as the writer does.
    ///
    /// A source whose file was deleted or renamed since it was attached is detached and attached
    /// again from its path, so a file that came back is used again (checked at most once per
    /// `interval`).
    /// A source that cannot be attached (missing, moved away, unreadable) does not stop the
    /// connection: it is recorded (`unavailableSources(on:)`), and the app's statements that need
    /// it, and the steps that need it, fail with `FerryError.sourceUnavailable`.
    /// - Throws: other attach errors (a missing or wrong key).
    /// - Parameter interval: how long after its last check `db` may go on reading the files it has
    ///   attached without checking that they are still at their paths (one `stat` each). Zero:
    ///   checked at every use.
    func attachSources(on db: Connection, checkingFilesAfter interval: Duration = .zero) throws(FerryError) {
        let files = catalog.read(\.attachedFiles)
        let failedBefore = failures.withLock { $0[ObjectIdentifier(db)] != nil }
        let now = ContinuousClock.now
        let checkDue = interval == .zero || db.attachedFilesCheckedAt.map { now - $0 >= interval } ?? true
        if !failedBefore, try isAttachedAsNeeded(files, on: db, checkingFiles: checkDue) {
            if checkDue { db.attachedFilesCheckedAt = now }
            return
        }
        let list = catalog.read { Array($0.sources.values) }
        var failed: [String: FerryError] = [:]
        _ = try attachSources(list, required: [], on: db, failures: &failed)
        failures.withLock { $0[ObjectIdentifier(db)] = failed.isEmpty ? nil : failed }
        db.attachedFilesCheckedAt = now
    }

    /// True when `db` has exactly the source files of `files` attached (besides main and temp),
    /// none of them deleted or renamed since (when `checkingFiles`): nothing to attach or detach.
    /// The common case, checked without allocating (one `stat` of each file, for the rename check).
    private func isAttachedAsNeeded(_ files: [SourceRecord], on db: Connection, checkingFiles: Bool) throws(FerryError) -> Bool {
        guard try sqlite(db.schemaCount()) == 2 + files.count else { return false }
        for source in files {
            guard try sqlite(db.hasSchema(source.schema)) else { return false }
            if checkingFiles, try sqlite(db.fileHasMoved(schema: source.schema)) { return false }
        }
        return true
    }

    /// The resolved paths of the registered source files (thread-safe; same-file sources have none).
    var sourceFilePaths: [String] {
        catalog.read { $0.sources.values.compactMap(\.path) }.map(paths.resolvedPath)
    }

    /// The sources that could not be attached to `db` at its latest use (by schema name), with
    /// the `FerryError.sourceUnavailable` that says why. Statements that need one are refused.
    func unavailableSources(on db: Connection) -> [String: FerryError] {
        failures.withLock { $0[ObjectIdentifier(db)] ?? [:] }
    }

    /// Attaches one source for a step that needs it (a batch, cleanup), and checks that the file
    /// attached is still the registered one (a file overwritten in place keeps its inode): when the
    /// file changed since a check passed (`SourceFileStamp`), its fingerprint is read again.
    /// - Throws: `FerryError.sourceUnavailable` when it cannot be attached,
    ///   `FerryError.sourceMismatch` when another file is in its place.
    func attachRequiredSource(_ source: SourceRecord, on db: Connection) throws(FerryError) {
        var failures: [String: FerryError] = [:]
        _ = try attachSources([source], required: [source.id], on: db, failures: &failures, detachingOthers: false)
        if let path = source.path { try checkFingerprint(of: source, path: paths.resolvedPath(path), unlessUnchanged: true, on: db) }
    }

    /// Throws `FerryError.sourceMismatch` when the file attached for `source` is not the registered one.
    /// Read in one snapshot: a finished table of the file may be dropped meanwhile (`SourceRetirer`).
    /// - Parameter migrating: the source's tables no cleanup touched yet (nil: as published).
    /// - Parameter unlessUnchanged: skip the check when the file's stamp is the one it had when a
    ///   check last passed (the stamp is taken before the check, so a change during it counts).
    private func checkFingerprint(of source: SourceRecord, path: String, migrating: Set<String>? = nil, unlessUnchanged: Bool = false,
                                  on db: Connection) throws(FerryError) {
        guard let fingerprint = source.fingerprint else { return }
        let stamp = SourceFileStamp(path: path)
        if unlessUnchanged, let stamp, verifiedStamps.withLock({ $0[source.id] }) == stamp { return }
        fingerprintReads.add(1, ordering: .relaxed)
        let migrating = migrating ?? catalog.read { $0.migratingSourceTables[source.id] } ?? []
        let check = { () throws(FerryError) -> String? in
            try fingerprint.mismatch(path: path, encrypted: source.encrypted, schema: source.schema, migrating: migrating, on: db)
        }
        if let reason = try db.isInTransaction ? check() : db.transaction(.deferred, check) {
            verifiedStamps.withLock { _ = $0.removeValue(forKey: source.id) }
            throw .sourceMismatch(path: path, reason: reason)
        }
        verifiedStamps.withLock { $0[source.id] = stamp }
    }

    /// Attaches the sources in `list`; returns the ids of those in `list` but not in `required`
    /// that could not be attached (missing or unreadable files), and adds their errors to `failures`.
    /// - Parameter migratingSourceTables: the source tables no cleanup touched yet, by source id,
    ///   when a load has not published them yet (nil: the published catalog's).
    func attachSources(_ list: [SourceRecord], required: Set<Int64>, on db: Connection, failures: inout [String: FerryError],
                       detachingOthers: Bool = true, migratingSourceTables: [Int64: Set<String>]? = nil) throws(FerryError) -> Set<Int64> {
        var attached = Set(try sqlite(db.schemaNames()))
        let needed = Set(list.map(\.schema))
        if detachingOthers && !db.isInTransaction {
            // Best effort: a failed detach (a statement still open on it) is retried next time.
            for schema in attached where schema.hasPrefix(SourceRecord.schemaPrefix) && !needed.contains(schema) { try? db.detach(schema) }
        }
        var unavailable: Set<Int64> = []
        for source in list.sorted(by: { $0.id < $1.id }) {
            guard let stored = source.path else { continue }
            // Resolved only when needed: a source attached and in place costs one stat, and this
            // runs at every use of a connection.
            lazy var path = paths.resolvedPath(stored)
            do throws(FerryError) {
                if attached.contains(source.schema) {
                    guard try sqlite(db.fileHasMoved(schema: source.schema)) else { continue }
                    guard !db.isInTransaction else {
                        throw .sourceUnavailable(path: path, reason: "the file was deleted or renamed while attached")
                    }
                    do throws(FerryError) { try sqlite(db.detach(source.schema)) } catch {
                        throw .sourceUnavailable(path: path, reason: "the file was deleted or renamed while attached, and cannot be detached: \(error)")
                    }
                    attached.remove(source.schema)
                }
                try attachSource(source, path: path, on: db, migrating: migratingSourceTables.map { $0[source.id] ?? [] })
            } catch {
                guard error.isSourceUnavailable, !required.contains(source.id) else { throw error }
                unavailable.insert(source.id)
                failures[source.schema] = error
            }
        }
        return unavailable
    }

    /// The source files whose read lock is worth holding (`SourceReadPins`): files of their own
    /// with a table that migrates, each with the cipher it opens with (a file whose key is
    /// missing is left out). Ferry writes a source file only to clean it up, and cleanup begins
    /// once no table migrates (`Stepper.step`).
    var pinnableSourceFiles: [(path: String, cipher: Cipher?)] {
        let candidates = catalog.read { snapshot in
            let migrating = Set(snapshot.mappings.map(\.source.id))
            return snapshot.attachedFiles.filter { migrating.contains($0.id) }
        }
        var files: [(path: String, cipher: Cipher?)] = []
        for source in candidates {
            guard let stored = source.path else { continue }
            let path = paths.resolvedPath(stored)
            do throws(FerryError) { files.append((path, try ciphers.cipher(of: source, path: path))) } catch { continue }
        }
        return files
    }

    private func attachSource(_ source: SourceRecord, path: String, on db: Connection, migrating: Set<String>?) throws(FerryError) {
        let cipher = try ciphers.cipher(of: source, path: path)
        do throws(FerryError) {
            try sqlite(db.attach(path: path, as: source.schema, cipher: cipher))
        } catch {
            throw Self.sourceError(error, path: path)
        }
        do throws(FerryError) {
            try checkFingerprint(of: source, path: path, migrating: migrating, on: db)
        } catch {
            try? db.detach(source.schema)
            throw Self.sourceError(error, path: path)  // a corrupt page read by the check names the source
        }
        try sqlite(db.execute("PRAGMA \(q(source.schema)).journal_size_limit = \(journalSizeLimit)"))
        let cacheSize = db.configuration.readOnly ? MigrationEngine.cacheSize : MigrationEngine.writingSourceCacheSize
        try sqlite(db.execute("PRAGMA \(q(source.schema)).cache_size = \(cacheSize)"))
    }

    /// The schemas of attached sources that no unfinished table needs any more.
    func unneededSourceSchemas(on db: Connection) throws(FerryError) -> [String] {
        let needed = catalog.read { Set($0.sources.values.map(\.schema)) }
        var unneeded: [String] = []
        for name in try sqlite(db.schemaNames()) where name.hasPrefix(SourceRecord.schemaPrefix) && !needed.contains(name) {
            unneeded.append(name)
        }
        return unneeded
    }

    /// A failure to open or read a source file as `FerryError.sourceUnavailable` (other errors, such
    /// as a wrong key, stay as they are).
    static func sourceError(_ error: FerryError, path: String) -> FerryError {
        switch error {
        case .fileNotFound:
            return .sourceUnavailable(path: path, reason: "no such file (deleted or renamed?)")
        case .sqlite(let code, _, _) where [.cantOpen, .ioError, .perm].contains(code.primary):
            return .sourceUnavailable(path: path, reason: "\(error)")
        case .sqlite(let code, let message, _) where code.primary == .corrupt:
            return .sourceUnavailable(path: path, reason: message)
        default:
            return error
        }
    }
}
