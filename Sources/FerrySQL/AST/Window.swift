/// A window definition: `[base] [PARTITION BY ...] [ORDER BY ...] [frame]`.
public struct WindowDefinition: Sendable, Hashable {
    /// The window this one extends.
    public var base: Identifier?
    /// `PARTITION BY` expressions.
    public var partitionBy: [Expression]
    /// `ORDER BY` terms.
    public var orderBy: [OrderingTerm]
    /// The frame, if written.
    public var frame: FrameSpecification?

    /// Creates a window definition.
    public init(base: Identifier? = nil, partitionBy: [Expression] = [], orderBy: [OrderingTerm] = [], frame: FrameSpecification? = nil) {
        self.base = base
        self.partitionBy = partitionBy
        self.orderBy = orderBy
        self.frame = frame
    }
}

/// `name AS (definition)` in a `WINDOW` clause.
public struct NamedWindow: Sendable, Hashable {
    /// The name.
    public var name: Identifier
    /// The definition.
    public var definition: WindowDefinition

    /// Creates a named window.
    public init(name: Identifier, definition: WindowDefinition) {
        self.name = name
        self.definition = definition
    }
}

/// `ROWS`, `RANGE` or `GROUPS`.
public enum FrameUnit: UInt8, Sendable, Hashable {
    /// `ROWS`, `RANGE`, `GROUPS`.
    case rows, range, groups
}

/// One end of a frame.
public enum FrameBound: Sendable, Hashable {
    /// `UNBOUNDED PRECEDING`
    case unboundedPreceding
    /// `expr PRECEDING`
    case preceding(Expression)
    /// `CURRENT ROW`
    case currentRow
    /// `expr FOLLOWING`
    case following(Expression)
    /// `UNBOUNDED FOLLOWING`
    case unboundedFollowing
}

/// `EXCLUDE ...`
public enum FrameExclusion: UInt8, Sendable, Hashable {
    /// `NO OTHERS`, `CURRENT ROW`, `GROUP`, `TIES`.
    case noOthers, currentRow, group, ties
}

/// `unit start` or `unit BETWEEN start AND end`, then `[EXCLUDE ...]`.
public struct FrameSpecification: Sendable, Hashable {
    /// `ROWS`, `RANGE` or `GROUPS`.
    public var unit: FrameUnit
    /// The start bound.
    public var start: FrameBound
    /// The end bound, for the `BETWEEN` form.
    public var end: FrameBound?
    /// The `EXCLUDE` clause, if any.
    public var exclusion: FrameExclusion?

    /// Creates a frame.
    public init(unit: FrameUnit, start: FrameBound, end: FrameBound? = nil, exclusion: FrameExclusion? = nil) {
        self.unit = unit
        self.start = start
        self.end = end
        self.exclusion = exclusion
    }
}
