import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@testable import Ferry
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The ownership lock file (`<target>-ferry.lock`) is never a way to touch another file: a
/// symbolic link in its place is refused, it gets the target's permissions, and targets that are
/// not one regular file with one name are refused before anything is created.
@Suite(.timeLimit(.minutes(2))) struct LockFileTests {
    func expectCantOpen(_ body: () throws -> Void, mentioning fragment: String, sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            try body()
            Issue.record("accepted", sourceLocation: sourceLocation)
        } catch FerryError.sqlite(let code, let message, _) {
            #expect(code.primary == .cantOpen && message.contains(fragment), "\(message)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("\(error)", sourceLocation: sourceLocation)
        }
    }

    @Test func aSymbolicLinkAtTheLockPathIsRefusedAndItsTargetUntouched() throws {
        let box = Sandbox()
        let target = box.path("app.db")
        try Connection(path: target).execute("CREATE TABLE t(x)")
        let victim = box.path("precious.txt")
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: victim))
        try FileManager.default.createSymbolicLink(atPath: target + "-ferry.lock", withDestinationPath: victim)
        expectCantOpen({ _ = try FerryDatabase(path: target) }, mentioning: "symbolic link")
        #expect(try Data(contentsOf: URL(fileURLWithPath: victim)) == Data("keep me".utf8))
        // A lock path that is a directory or a pipe is refused too.
        try FileManager.default.removeItem(atPath: target + "-ferry.lock")
        #expect(mkfifo(target + "-ferry.lock", 0o600) == 0)
        expectCantOpen({ _ = try FerryDatabase(path: target) }, mentioning: "not a regular file")
    }

    @Test func theLockFileHasTheTargetsPermissions() throws {
        let box = Sandbox()
        for mode in [0o600, 0o640, 0o644] as [mode_t] {
            let target = box.path("app-\(mode).db")
            try Connection(path: target).execute("CREATE TABLE t(x)")
            #expect(chmod(target, mode) == 0)
            let db = try FerryDatabase(path: target)
            var info = stat()
            #expect(stat(target + "-ferry.lock", &info) == 0)
            #expect(info.st_mode & 0o777 == mode, "lock file of a \(String(mode, radix: 8)) target is \(String(info.st_mode & 0o777, radix: 8))")
            db.close()
        }
    }

    @Test func targetsThatAreNotOneRegularFileAreRefusedBeforeAnythingIsCreated() throws {
        let box = Sandbox()
        let directory = box.path("dir.db")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        let fifo = box.path("fifo.db")
        #expect(mkfifo(fifo, 0o600) == 0)
        for target in ["/dev/null", directory, fifo] {
            expectCantOpen({ _ = try FerryDatabase(path: target) }, mentioning: "not a regular file")
            #expect(!FileManager.default.fileExists(atPath: target + "-ferry.lock"), "\(target)")
        }
        // Two names for one database: refused under both, nothing created.
        let target = box.path("app.db")
        try Connection(path: target).execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)")
        let link = box.path("other-name.db")
        try FileManager.default.linkItem(atPath: target, toPath: link)
        for name in [target, link] {
            expectCantOpen({ _ = try FerryDatabase(path: name) }, mentioning: "hard links")
            #expect(!FileManager.default.fileExists(atPath: name + "-ferry.lock"))
        }
        // One name again: it opens.
        try FileManager.default.removeItem(atPath: link)
        let db = try FerryDatabase(path: target)
        #expect(try db.read { try $0.scalar("SELECT x FROM t", as: Int.self) } == 1)
    }
}
