import Foundation

/// Where a target's source files are: paths are stored relative to the target's directory when
/// they lie below it (a database moved with its sources keeps working), absolute otherwise.
struct SourcePaths: Sendable {
    /// The target database's path, as the app gave it.
    let targetPath: String
    /// The target's directory, standardized once (`resolvedPath` runs at every step).
    private let targetDirectory: URL

    init(targetPath: String) {
        self.targetPath = targetPath
        targetDirectory = URL(fileURLWithPath: targetPath).standardizedFileURL.deletingLastPathComponent()
    }

    /// The absolute path of a stored source path.
    func resolvedPath(_ stored: String) -> String {
        if stored.hasPrefix("/") { return stored }
        return targetDirectory.appendingPathComponent(stored).standardizedFileURL.path
    }

    /// The path to store for a source: relative to the target's directory when below it.
    func storedPath(for path: String) -> String {
        let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
        let directory = targetDirectory.path.hasSuffix("/") ? targetDirectory.path : targetDirectory.path + "/"
        if absolute.hasPrefix(directory) { return String(absolute.dropFirst(directory.count)) }
        return absolute
    }
}
