/// The rows one move batch takes: its span (the rows the cursor had not passed, up to the batch's
/// last matching row), that last row, and where the cursor stands once the batch has moved.
struct SourceBatch: Sendable {
    let span: SourceSpan
    let last: SourcePosition
    /// The cursor after the batch: the last row itself (a rowid cursor: every row at or below it
    /// passed), or the first source row after it (a key cursor: the first row not passed; nil
    /// when none is left).
    let cursorAfter: SourcePosition?
}
