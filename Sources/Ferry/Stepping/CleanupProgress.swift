/// Where a finished table's cleanup stands in this process (the catalog records only whether it
/// was checked and whether the source was cleaned; a new process starts over, which deletes
/// nothing twice).
struct CleanupProgress: Sendable {
    /// The last source row a committed chunk deleted through (a table cleaned by range).
    var cleanedTo: SourcePosition?
    /// Where the count before cleaning stands (`Stepper.countBeforeCleaning`): the last row
    /// counted, and the rows counted so far; nil before the count or once it is complete.
    var counted: (position: SourcePosition, count: Int64)?
    /// The source rows retired early (`MigrationState.rowsRetiredEarly`) when the count began: a
    /// count during which more were retired starts over.
    var countedRetiredEarly: Int64 = 0
    /// The recorded batch the cleanup deletes next, and how far into it (a table that records its
    /// moves, `Stepper.cleanRecordedChunk`).
    var recorded: RecordedCleanupPosition?
}
