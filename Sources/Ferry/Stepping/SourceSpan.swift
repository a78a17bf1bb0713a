/// The source rows between two positions, in the source's order; an end left nil is open.
struct SourceSpan: Sendable {
    /// Where a span begins.
    enum Lower: Sendable {
        /// After this position (the row at it excluded).
        case after(SourcePosition)
        /// At this position (the row at it included).
        case from(SourcePosition)
    }

    /// Where a span ends.
    enum Upper: Sendable {
        /// At this position (the row at it included).
        case through(SourcePosition)
        /// Before this position (the row at it excluded).
        case before(SourcePosition)
    }

    var lower: Lower?
    var upper: Upper?

    /// This span, ending at `position` (included).
    func through(_ position: SourcePosition) -> SourceSpan {
        SourceSpan(lower: lower, upper: .through(position))
    }

    /// This span, beginning after `position` when one is given.
    func after(_ position: SourcePosition?) -> SourceSpan {
        guard let position else { return self }
        return SourceSpan(lower: .after(position), upper: upper)
    }
}
