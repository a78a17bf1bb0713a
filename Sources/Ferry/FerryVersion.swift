import FerrySQLite
/// Ferry's own version and the versions of the SQLite engine it runs on.
public enum FerryVersion {
    /// The version of the Ferry library.
    public static let version = "0.1.0"

    /// A multi-line report: Ferry, the SQLite engine of this build, and its SQLite version.
    public static var report: String {
        var lines = ["Ferry \(version)"]
        lines.append("engine: \(SQLiteEngine.versionDescription)")
        lines.append("encryption: \(SQLiteEngine.supportsEncryption ? "available" : "not available (built with the SystemSQLite trait)")")
        return lines.joined(separator: "\n")
    }
}
