import Foundation

/// An executable this package builds (`ferry`, `ferry-test-child`), found next to the running test
/// bundle, or in `.build/debug`.
public func builtExecutable(named name: String, packageRoot: URL) -> URL {
    var candidates: [URL] = []
    if let url = Bundle.main.executableURL { candidates.append(url.deletingLastPathComponent()) }
    candidates.append(URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent())
    candidates.append(packageRoot.appendingPathComponent(".build/debug"))
    for directory in candidates {
        var url = directory
        // Inside a bundle directory (macOS): climb to the build directory.
        while url.path != "/" && (url.pathExtension == "xctest" || ["Contents", "MacOS"].contains(url.lastPathComponent)) {
            url = url.deletingLastPathComponent()
        }
        let binary = url.appendingPathComponent(name)
        if FileManager.default.isExecutableFile(atPath: binary.path) { return binary }
    }
    return packageRoot.appendingPathComponent(".build/debug/\(name)")
}
