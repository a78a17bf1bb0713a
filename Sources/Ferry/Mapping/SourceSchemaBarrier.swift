/// What changes a source file's schema off the writer (a source table retired on a connection of
/// its own, `SourceRetirer`), as the engine sees it: a load or a registration reads the sources'
/// schemas statement by statement, and waits first until no such change runs.
protocol SourceSchemaBarrier: Sendable {
    /// Returns once no change of a source's schema runs off the writer.
    func waitUntilNoSchemaChanges()
}
