import Foundation

/// A fresh directory for one test, removed when the value is released: the one temporary-directory
/// helper of every test target.
public final class Sandbox: @unchecked Sendable {
    /// The directory.
    public let url: URL

    /// - Parameter preferringMemory: put the directory on a tmpfs (`/dev/shm`, Linux) when there is
    ///   one (fsync costs nothing there), else in the temporary directory.
    public init(preferringMemory: Bool = false) {
        var base = FileManager.default.temporaryDirectory
        #if os(Linux)
        var isDirectory: ObjCBool = false
        if preferringMemory, FileManager.default.fileExists(atPath: "/dev/shm", isDirectory: &isDirectory), isDirectory.boolValue,
           FileManager.default.isWritableFile(atPath: "/dev/shm") {
            base = URL(fileURLWithPath: "/dev/shm")
        }
        #endif
        url = base.appendingPathComponent("ferry-tests-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    /// A path inside the directory.
    public func path(_ name: String) -> String { url.appendingPathComponent(name).path }
}
