import Ferry

/// The `ferry` tool's reading of a plan file (`MigrationPlanFile`, in the library).
typealias PlanFile = MigrationPlanFile

extension MigrationPlanFile {
    /// Reads the plan file at `path`, with the tool's one-line messages.
    /// - Throws: `CLIError` for a missing, unreadable, malformed or invalid file.
    static func load(_ path: String) throws -> MigrationPlanFile {
        do {
            return try load(path: path)
        } catch .fileNotFound {
            throw CLIError("no such plan file: \(path)")
        } catch {
            throw CLIError(CLIError.describe(error))
        }
    }
}
