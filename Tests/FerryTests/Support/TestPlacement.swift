import FerryTestSupport
import FerrySQLite
import Testing
@testable import Ferry

/// Where a scenario's source table lives, the tests that run on every placement: in a file of its
/// own, in the target's file, or in a file of its own with both files encrypted (SQLCipher 4, a
/// cheap key derivation).
enum TestPlacement: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case otherFile, sameFile, encrypted

    var testDescription: String { rawValue }

    /// Every placement this build supports (no encrypted one without SQLCipher).
    static var available: [TestPlacement] { SQLiteEngine.supportsEncryption ? allCases : [.otherFile, .sameFile] }

    /// The key of the encrypted placement's files.
    static let key = Cipher.passphrase("k", settings: CipherSettings(compatibility: 4, kdfIterations: 2))

    /// The cipher of every file of the scenario (nil: plain).
    var cipher: Cipher? { self == .encrypted ? Self.key : nil }

    /// The scenario's files in `box`: the app's database `app.db`; the source table `table` in
    /// `legacy.db`, or `sameFileTable` in `app.db` for the same-file placement.
    func files(in box: Sandbox, table: String, sameFileTable: String) -> PlacementFiles {
        let appPath = box.path("app.db")
        return PlacementFiles(placement: self, appPath: appPath, sourcePath: self == .sameFile ? appPath : box.path("legacy.db"),
                              sourceTable: self == .sameFile ? sameFileTable : table)
    }
}

/// The files of one scenario on a placement (`TestPlacement.files(in:table:sameFileTable:)`).
struct PlacementFiles {
    let placement: TestPlacement
    /// The app's database, the target.
    let appPath: String
    /// The file that holds the source table (`appPath` on the same-file placement).
    let sourcePath: String
    /// The source table's name.
    let sourceTable: String

    /// The cipher of every file.
    var cipher: Cipher? { placement.cipher }

    /// The plan's source of `mappings` on this placement.
    func source(_ mappings: [TableMapping]) -> MigrationSource {
        placement == .sameFile ? MigrationSource(.targetFile, tables: mappings) : MigrationSource(.file(sourcePath), cipher: cipher, tables: mappings)
    }

    /// A plan that migrates `sourceTable` into `target`.
    func plan(target: String, filter: String? = nil) -> MigrationPlan {
        MigrationPlan(sources: [source([TableMapping(target: target, source: sourceTable, filter: filter)])])
    }

    /// A plain SQLite connection to the source's file.
    func openSource() throws -> Connection { try Connection(path: sourcePath, configuration: .init(cipher: cipher)) }

    /// A plain SQLite connection to the app's database.
    func openApp() throws -> Connection { try Connection(path: appPath, configuration: .init(cipher: cipher)) }
}
