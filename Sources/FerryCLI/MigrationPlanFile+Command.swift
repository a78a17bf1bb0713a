#if CommandLineTool
import Ferry

extension MigrationPlanFile {
    /// Reads the plan file at `path` (a `--plan` option or `plan apply`'s argument), with the
    /// tool's one-line messages.
    /// - Throws: `CLIError` for a missing, unreadable, malformed or invalid file.
    static func loadForCommand(_ path: String) throws -> MigrationPlanFile {
        do {
            return try load(path: path)
        } catch .fileNotFound {
            throw CLIError("no such plan file: \(path)")
        } catch {
            throw CLIError(CLIError.describe(error))
        }
    }
}
#endif
