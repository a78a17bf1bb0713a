import FerrySQLite

/// A place in a source table's order: a rowid, or the row key (`ferry_key` of the primary key) of
/// a source without rowid. Cursors, batch ends, count positions and cleanup positions are all
/// positions, whatever the kind of source.
enum SourcePosition: Hashable, Sendable {
    case rowid(Int64)
    case key([UInt8])

    /// The position as a statement argument.
    var value: Value {
        switch self {
        case .rowid(let rowid): .integer(rowid)
        case .key(let key): .blob(key)
        }
    }

    /// The position a value read back from a source identity stands for (nil for another type).
    init?(_ value: Value) {
        switch value {
        case .integer(let rowid): self = .rowid(rowid)
        case .blob(let key): self = .key(key)
        default: return nil
        }
    }
}
