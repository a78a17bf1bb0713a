#if SQLCipher
internal import CSQLCipher
#else
internal import CSQLite
#endif

/// A 64-bit digest of one row's values, with their storage classes: what `ferry_row_digest(v1, ...,
/// vn)` (every connection has it) returns, and what a row recorder keeps of each row it records
/// (`Connection.defineRowRecorder`). Two rows digest alike when they hold the same values of the
/// same classes, in the same order (up to 64-bit collisions): a batch's rows digested when they
/// moved and again before they are deleted tell whether the source still holds those very rows.
///
/// A multiply-and-shift mix of each value's class tag and bytes (integers and reals as their 8
/// bytes, text and blobs with their length, 8 bytes at a time, little-endian), then a final mix, so
/// that the digests of many rows can be added up (wrapping) into one digest that does not depend on
/// their order.
package enum RowDigest {
    /// The name of the SQL function.
    package static let function = "ferry_row_digest"

    /// The digest of the `count` values at `values`.
    static func digest(_ count: Int, _ values: UnsafeMutablePointer<OpaquePointer?>) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        // One 64-bit word at a time (a multiply and a shift each): a row's text costs a few
        // nanoseconds, not one step per byte.
        func mix(_ word: UInt64) {
            hash = (hash ^ word) &* 0x0000_0100_0000_01b3
            hash ^= hash >> 29
        }
        for index in 0..<count {
            let value = values[index]!
            let type = sqlite3_value_type(value)
            mix(UInt64(truncatingIfNeeded: type))
            switch type {
            case SQLITE_INTEGER: mix(UInt64(bitPattern: sqlite3_value_int64(value)))
            case SQLITE_FLOAT: mix(sqlite3_value_double(value).bitPattern)
            case SQLITE_TEXT, SQLITE_BLOB:
                let pointer = type == SQLITE_TEXT ? sqlite3_value_text(value).map(UnsafeRawPointer.init) : sqlite3_value_blob(value)
                let length = Int(sqlite3_value_bytes(value))
                mix(UInt64(length))
                guard let pointer else { break }
                var offset = 0
                while offset + 8 <= length {
                    mix(UInt64(littleEndian: pointer.loadUnaligned(fromByteOffset: offset, as: UInt64.self)))
                    offset += 8
                }
                var tail: UInt64 = 0
                for shift in 0..<(length - offset) {
                    tail |= UInt64(pointer.load(fromByteOffset: offset + shift, as: UInt8.self)) << UInt64(8 * shift)
                }
                if offset < length { mix(tail) }
            default: break
            }
        }
        // A final mix (splitmix64's): sums of digests stay well spread.
        hash = (hash ^ (hash >> 30)) &* 0xbf58_476d_1ce4_e5b9
        hash = (hash ^ (hash >> 27)) &* 0x94d0_49bb_1331_11eb
        return hash ^ (hash >> 31)
    }
}

extension Connection {
    func registerRowDigestFunction() throws(SQLiteError) {
        guard let db = handle else { throw .connectionClosed }
        let flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS
        let rc = sqlite3_create_function_v2(db, RowDigest.function, -1, flags, nil, { context, count, arguments in
            sqlite3_result_int64(context, Int64(bitPattern: RowDigest.digest(Int(count), arguments!)))
        }, nil, nil, nil)
        guard rc == SQLITE_OK else { throw .sqlite(code: ResultCode(rawValue: rc), message: "cannot register \(RowDigest.function)", sql: nil) }
    }
}
