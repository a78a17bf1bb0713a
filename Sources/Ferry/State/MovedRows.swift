/// The source rows one batch accounted for, by rowid (or by row key, `ferry_key`, for a source
/// without rowid), with their digest: the rows it moved into the
/// target, the rows it set aside in quarantine, and the rows app writes had moved ahead of it
/// (pruned from the moved set as the cursor passed them). Recorded in the batch's own transaction
/// (`MigrationState.recordMovedRows`), so that cleanup deletes exactly these rows from the source
/// and never evaluates the mapping's filter again.
///
/// Stored compactly: a tag byte, then the sorted rowids as varint deltas (a batch of scattered rows
/// costs one or two bytes a row), or the sorted keys, each with its length.
struct MovedRows: Sendable, Equatable {
    /// The rowids, ascending, each once (empty for a source without rowid).
    let rowids: [Int64]
    /// The row keys of a source without rowid, in byte order, each once (empty otherwise).
    var keys: [[UInt8]] = []
    /// How many rows.
    var count: Int { rowids.count + keys.count }
    /// The sum (wrapping) of the rows' digests as they were in the source when they moved
    /// (`RowDigest`, over the rowid and every column): cleanup digests them again before it deletes
    /// them, and refuses when the source no longer holds those very rows.
    let digest: UInt64

    /// The rows of `rows` (any order; a row listed twice counts once).
    init(_ rows: [(rowid: Int64, digest: UInt64)]) {
        let sorted = rows.sorted { $0.rowid < $1.rowid }
        var rowids: [Int64] = []
        rowids.reserveCapacity(sorted.count)
        var digest: UInt64 = 0
        for row in sorted where rowids.last != row.rowid {
            rowids.append(row.rowid)
            digest &+= row.digest
        }
        self.rowids = rowids
        self.digest = digest
    }

    /// The rows of a source without rowid, by row key (any order; a key listed twice counts once).
    init(keyed rows: [(key: [UInt8], digest: UInt64)]) {
        let sorted = rows.sorted { $0.key.lexicographicallyPrecedes($1.key) }
        var keys: [[UInt8]] = []
        var digest: UInt64 = 0
        for row in sorted where keys.last != row.key {
            keys.append(row.key)
            digest &+= row.digest
        }
        self.rowids = []
        self.keys = keys
        self.digest = digest
    }

    /// Rows read back: `rowids` ascending, each once, and their recorded digest.
    init(rowids: [Int64], digest: UInt64) {
        self.rowids = rowids
        self.digest = digest
    }

    /// The tag of each encoding.
    private static let rowidTag: UInt8 = 0, keyTag: UInt8 = 1

    /// The encoded form: the first rowid zigzag-encoded, then each difference to the one before
    /// (at least 1), as LEB128 varints.
    var encoded: [UInt8] {
        if !keys.isEmpty {
            var bytes: [UInt8] = [Self.keyTag]
            for key in keys {
                Self.appendVarint(UInt64(key.count), to: &bytes)
                bytes += key
            }
            return bytes
        }
        var bytes: [UInt8] = [Self.rowidTag]
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

    /// The rows of an encoded form and their digest; nil when `bytes` is not one (truncated, or not
    /// ascending).
    init?(decoding bytes: [UInt8], digest: UInt64) {
        guard let tag = bytes.first else { return nil }
        var offset = 1
        if tag == Self.keyTag {
            var keys: [[UInt8]] = []
            while offset < bytes.count {
                guard let length = Self.readVarint(bytes, at: &offset), length <= UInt64(bytes.count - offset) else { return nil }
                keys.append(Array(bytes[offset..<offset + Int(length)]))
                offset += Int(length)
            }
            self.rowids = []
            self.keys = keys
            self.digest = digest
            return
        }
        guard tag == Self.rowidTag else { return nil }
        var rowids: [Int64] = []
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
        self.digest = digest
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
