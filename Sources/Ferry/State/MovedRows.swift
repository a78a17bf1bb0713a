/// The source rows one batch accounted for, by rowid: the rows it moved into the target, the rows
/// it set aside in quarantine, and the rows app writes had moved ahead of it (pruned from the moved
/// set as the cursor passed them). Recorded in the batch's own transaction
/// (`MigrationState.recordMovedRows`), so that cleanup deletes exactly these rows from the source
/// and never evaluates the mapping's filter again.
///
/// Stored compactly: the sorted rowids as varint deltas (a batch of scattered rows costs one or
/// two bytes a row).
struct MovedRows: Sendable, Equatable {
    /// The rowids, ascending, each once.
    let rowids: [Int64]

    /// The rowids of `identities` (any order, repeats allowed).
    init(_ rowids: [Int64]) {
        var sorted = rowids.sorted()
        var unique = 0
        for index in sorted.indices where index == 0 || sorted[index] != sorted[unique - 1] {
            sorted[unique] = sorted[index]
            unique += 1
        }
        sorted.removeLast(sorted.count - unique)
        self.rowids = sorted
    }

    /// The encoded form: the first rowid zigzag-encoded, then each difference to the one before
    /// (at least 1), as LEB128 varints.
    var encoded: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(rowids.count * 2 + 8)
        var previous: Int64?
        for rowid in rowids {
            if let previous {
                Self.appendVarint(UInt64(bitPattern: rowid &- previous), to: &bytes)
            } else {
                Self.appendVarint(UInt64(bitPattern: (rowid << 1) ^ (rowid >> 63)), to: &bytes)
            }
            previous = rowid
        }
        return bytes
    }

    /// The rows of an encoded form; nil when `bytes` is not one (truncated, or not ascending).
    init?(decoding bytes: [UInt8]) {
        var rowids: [Int64] = []
        var offset = 0
        while offset < bytes.count {
            guard let value = Self.readVarint(bytes, at: &offset) else { return nil }
            if let previous = rowids.last {
                let next = previous &+ Int64(bitPattern: value)
                guard value > 0, next > previous else { return nil }
                rowids.append(next)
            } else {
                rowids.append(Int64(bitPattern: value >> 1) ^ -Int64(bitPattern: value & 1))
            }
        }
        self.rowids = rowids
    }

    private static func appendVarint(_ value: UInt64, to bytes: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(value & 0x7f) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    private static func readVarint(_ bytes: [UInt8], at offset: inout Int) -> UInt64? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while offset < bytes.count, shift < 64 {
            let byte = bytes[offset]
            offset += 1
            value |= UInt64(byte & 0x7f) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
        return nil
    }
}
