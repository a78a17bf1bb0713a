import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@testable import Ferry

/// `verify` over a source file whose pages are corrupt names the source, not the target: SQLite's
/// "database disk image is malformed" names no file, and an operator would look at the wrong one.
@Suite(.timeLimit(.minutes(2))) struct CorruptSourceVerifyTests {
    /// Overwrites the b-tree page header of every page of `path` from page 3 on (the schema page
    /// and the table's root stay readable, so the file still attaches).
    static func corruptPages(of path: String) throws {
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        defer { try? handle.close() }
        let size = try handle.seekToEnd()
        let pageSize: UInt64 = 4096
        var page: UInt64 = 3
        while page * pageSize < size {
            try handle.seek(toOffset: page * pageSize)
            try handle.write(contentsOf: Data(repeating: 0xA5, count: 12))
            page += 1
        }
    }

    /// Overwrites the b-tree page header of the page of `path` that holds `marker`.
    static func corruptPage(holding marker: String, of path: String) throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let offset = try #require(data.range(of: Data(marker.utf8))?.lowerBound)
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64(offset / 4096 * 4096))
        try handle.write(contentsOf: Data(repeating: 0xA5, count: 12))
    }

    /// One page of moved rows goes bad between two launches (the source still opens: its identity
    /// check reads other rows): `verify` names the source, and says the target passed its check.
    @Test func verifyNamesTheCorruptSourceFile() throws {
        let box = Sandbox()
        let legacy = try box.makeLegacy(rows: 3000)
        let marker = "marker-of-row-300-" + String(repeating: "x", count: 40)
        let raw = try Connection(path: legacy)
        try raw.execute("UPDATE messages SET body = ? WHERE id = 300", [.text(marker)])
        raw.close()
        let app = box.path("app.db")
        let db = try FerryDatabase(path: app, plan: .messages(from: legacy), options: .fixedBatches(of: 500))
        try db.step()
        #expect(try db.verify().isConsistent)
        db.close()
        try Self.corruptPage(holding: marker, of: legacy)
        let reopened = try FerryDatabase(path: app, plan: .messages(from: legacy), options: .fixedBatches(of: 500))
        defer { reopened.close() }
        #expect { try reopened.verify() } throws: { error in
            guard case FerryError.sourceUnavailable(let path, let reason)? = error as? FerryError else { return false }
            return path == legacy && reason.contains("malformed") && reason.contains("target passed")
        }
        try Self.expectTargetUntouched(app, rows: 500)
    }

    /// The source's pages went bad between two launches: opening the database names the source
    /// (the check of the source's identity reads its rows), as a source that cannot be used now.
    @Test func openingNamesTheCorruptSourceFile() throws {
        let box = Sandbox()
        let legacy = try box.makeLegacy(rows: 3000)
        let app = box.path("app.db")
        let db = try FerryDatabase(path: app, plan: .messages(from: legacy), options: .fixedBatches(of: 500))
        try db.step()
        db.close()
        try Self.corruptPages(of: legacy)
        #expect { try FerryDatabase(path: app, plan: .messages(from: legacy)).close() } throws: { error in
            guard let error = error as? FerryError, case .sourceUnavailable(let path, _) = error else { return false }
            return path == legacy && error.isSourceUnavailable
        }
        try Self.expectTargetUntouched(app, rows: 500)
    }

    static func expectTargetUntouched(_ app: String, rows: Int) throws {
        let target = try Connection(path: app)
        defer { target.close() }
        #expect(try target.scalar("PRAGMA integrity_check", as: String.self) == "ok")
        #expect(try target.scalar("SELECT count(*) FROM messages", as: Int.self) == rows)
    }
}
