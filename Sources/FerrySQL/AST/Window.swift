/// A window definition: `[base] [PARTITION BY ...] [ORDER BY ...] [frame]`.
package struct WindowDefinition: Sendable, Hashable {
    /// The window this one extends.
    package var base: Identifier?
    /// `PARTITION BY` expressions.
    package var partitionBy: [Expression]
    /// `ORDER BY` terms.
    package var orderBy: [OrderingTerm]
    /// The frame, if written.
    package var frame: FrameSpecification?

    /// Creates a window definition.
    package init(base: Identifier? = nil, partitionBy: [Expression] = [], orderBy: [OrderingTerm] = [], frame: FrameSpecification? = nil) {
        self.base = base
        self.partitionBy = partitionBy
        self.orderBy = orderBy
        self.frame = frame
    }
}

/// `name AS (definition)` in a `WINDOW` clause.
package struct NamedWindow: Sendable, Hashable {
    /// The name.
    package var name: Identifier
    /// The definition.
    package var definition: WindowDefinition

    /// Creates a named window.
    package init(name: Identifier, definition: WindowDefinition) {
        self.name = name
        self.definition = definition
    }
}

/// `ROWS`, `RANGE` or `GROUPS`.
package enum FrameUnit: UInt8, Sendable, Hashable {
    /// `ROWS`, `RANGE`, `GROUPS`.
    case rows, range, groups
}

/// One end of a frame.
package enum FrameBound: Sendable, Hashable {
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
package enum FrameExclusion: UInt8, Sendable, Hashable {
    /// `NO OTHERS`, `CURRENT ROW`, `GROUP`, `TIES`.
    case noOthers, currentRow, group, ties
}

/// `unit start` or `unit BETWEEN start AND end`, then `[EXCLUDE ...]`.
package struct FrameSpecification: Sendable, Hashable {
    /// `ROWS`, `RANGE` or `GROUPS`.
    package var unit: FrameUnit
    /// The start bound.
    package var start: FrameBound
    /// The end bound, for the `BETWEEN` form.
    package var end: FrameBound?
    /// The `EXCLUDE` clause, if any.
    package var exclusion: FrameExclusion?

    /// Creates a frame.
    package init(unit: FrameUnit, start: FrameBound, end: FrameBound? = nil, exclusion: FrameExclusion? = nil) {
        self.unit = unit
        self.start = start
        self.end = end
        self.exclusion = exclusion
    }
}
