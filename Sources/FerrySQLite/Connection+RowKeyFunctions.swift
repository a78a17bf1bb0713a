#if SQLCipher
internal import CSQLCipher
#else
internal import CSQLite
#endif

/// Two deterministic SQL functions every connection has, for tables identified by a primary key
/// instead of a rowid (`WITHOUT ROWID`): one value stands for a row's whole key, exactly.
///
/// - `ferry_key(v1, ..., vn)` returns a BLOB that encodes its arguments with their storage
///   classes and exact bytes (an integer's 8 bytes, a real's IEEE bits, text and blob bytes with
///   their length): two keys give the same blob exactly when they hold the same values of the same
///   classes. The blob compares for equality only; its order is not the table's.
/// - `ferry_key_part(key, i)` returns the `i`-th value (from 0) of such a blob, with its class, so
///   a query can compare a table's key columns with it and SQLite can use the table's index:
///   `(a, b) IN (SELECT ferry_key_part(k, 0), ferry_key_part(k, 1) FROM keys)`. NULL when `key` is
///   NULL, not such a blob, or shorter.
extension Connection {
    /// The name of the encoding function.
    package static let rowKeyFunction = "ferry_key"
    /// The name of the decoding function.
    package static let rowKeyPartFunction = "ferry_key_part"

    /// The values a `ferry_key` blob encodes, with their classes, in order; nil when `key` is not
    /// such a blob.
    package static func rowKeyValues(_ key: [UInt8]) -> [Value]? {
        var values: [Value] = []
        var offset = 0
        func read(_ count: Int) -> UInt64? {
            guard offset + count <= key.count else { return nil }
            defer { offset += count }
            return key[offset..<offset + count].reduce(0) { $0 << 8 | UInt64($1) }
        }
        while offset < key.count {
            let tag = key[offset]
            offset += 1
            switch tag {
            case RowKeyCoding.nullTag:
                values.append(.null)
            case RowKeyCoding.integerTag:
                guard let bits = read(8) else { return nil }
                values.append(.integer(Int64(bitPattern: bits)))
            case RowKeyCoding.realTag:
                guard let bits = read(8) else { return nil }
                values.append(.real(Double(bitPattern: bits)))
            case RowKeyCoding.textTag, RowKeyCoding.blobTag:
                guard let length = read(4).map(Int.init), offset + length <= key.count else { return nil }
                let bytes = Array(key[offset..<offset + length])
                offset += length
                values.append(tag == RowKeyCoding.textTag ? .text(String(decoding: bytes, as: UTF8.self)) : .blob(bytes))
            default:
                return nil
            }
        }
        return values
    }

    func registerRowKeyFunctions() throws(SQLiteError) {
        guard let db = handle else { throw .connectionClosed }
        let flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS
        var rc = sqlite3_create_function_v2(db, Self.rowKeyFunction, -1, flags, nil, { context, count, arguments in
            var bytes: [UInt8] = []
            for index in 0..<Int(count) { RowKeyCoding.append(arguments![index], to: &bytes) }
            bytes.withUnsafeBytes { buffer in
                sqlite3_result_blob(context, buffer.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(buffer.count), SQLITE_TRANSIENT)
            }
        }, nil, nil, nil)
        guard rc == SQLITE_OK else { throw .sqlite(code: ResultCode(rawValue: rc), message: "cannot register \(Self.rowKeyFunction)", sql: nil) }
        rc = sqlite3_create_function_v2(db, Self.rowKeyPartFunction, 2, flags, nil, { context, _, arguments in
            RowKeyCoding.resultPart(of: arguments![0], index: sqlite3_value_int64(arguments![1]), context: context)
        }, nil, nil, nil)
        guard rc == SQLITE_OK else { throw .sqlite(code: ResultCode(rawValue: rc), message: "cannot register \(Self.rowKeyPartFunction)", sql: nil) }
    }
}

/// The byte layout of a row key: per value, a class tag, then 8 big-endian bytes (integer, real
/// bits) or a 4-byte big-endian length and the bytes (text, blob); NULL is its tag alone.
enum RowKeyCoding {
    static let nullTag: UInt8 = 0, integerTag: UInt8 = 1, realTag: UInt8 = 2, textTag: UInt8 = 3, blobTag: UInt8 = 4

    static func append(_ value: OpaquePointer?, to bytes: inout [UInt8]) {
        switch sqlite3_value_type(value) {
        case SQLITE_INTEGER:
            bytes.append(integerTag)
            appendBigEndian(UInt64(bitPattern: sqlite3_value_int64(value)), count: 8, to: &bytes)
        case SQLITE_FLOAT:
            bytes.append(realTag)
            appendBigEndian(sqlite3_value_double(value).bitPattern, count: 8, to: &bytes)
        case SQLITE_TEXT:
            bytes.append(textTag)
            let text = sqlite3_value_text(value)
            let length = Int(sqlite3_value_bytes(value))
            appendBigEndian(UInt64(length), count: 4, to: &bytes)
            if let text { bytes.append(contentsOf: UnsafeBufferPointer(start: text, count: length)) }
        case SQLITE_BLOB:
            bytes.append(blobTag)
            let blob = sqlite3_value_blob(value)
            let length = Int(sqlite3_value_bytes(value))
            appendBigEndian(UInt64(length), count: 4, to: &bytes)
            if let blob { bytes.append(contentsOf: UnsafeRawBufferPointer(start: blob, count: length)) }
        default:
            bytes.append(nullTag)
        }
    }

    private static func appendBigEndian(_ value: UInt64, count: Int, to bytes: inout [UInt8]) {
        for shift in stride(from: (count - 1) * 8, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    private static func readBigEndian(_ buffer: UnsafeRawBufferPointer, at offset: Int, count: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in 0..<count { value = value << 8 | UInt64(buffer[offset + index]) }
        return value
    }

    /// Sets the result of `ferry_key_part(key, index)`.
    static func resultPart(of key: OpaquePointer?, index: Int64, context: OpaquePointer?) {
        guard sqlite3_value_type(key) == SQLITE_BLOB, index >= 0, let base = sqlite3_value_blob(key) else {
            sqlite3_result_null(context)
            return
        }
        let buffer = UnsafeRawBufferPointer(start: base, count: Int(sqlite3_value_bytes(key)))
        var offset = 0
        var current: Int64 = 0
        while offset < buffer.count {
            let tag = buffer[offset]
            offset += 1
            var length = 0
            switch tag {
            case nullTag: length = 0
            case integerTag, realTag: length = 8
            case textTag, blobTag:
                guard offset + 4 <= buffer.count else { sqlite3_result_null(context); return }
                length = Int(readBigEndian(buffer, at: offset, count: 4))
                offset += 4
            default:
                sqlite3_result_null(context)
                return
            }
            guard offset + length <= buffer.count else { sqlite3_result_null(context); return }
            if current == index {
                switch tag {
                case integerTag: sqlite3_result_int64(context, Int64(bitPattern: readBigEndian(buffer, at: offset, count: 8)))
                case realTag: sqlite3_result_double(context, Double(bitPattern: readBigEndian(buffer, at: offset, count: 8)))
                case textTag:
                    sqlite3_result_text(context, base.advanced(by: offset).assumingMemoryBound(to: CChar.self), Int32(length), SQLITE_TRANSIENT)
                case blobTag:
                    sqlite3_result_blob(context, length == 0 ? UnsafeRawPointer(bitPattern: 1) : base.advanced(by: offset), Int32(length), SQLITE_TRANSIENT)
                default: sqlite3_result_null(context)
                }
                return
            }
            offset += length
            current += 1
        }
        sqlite3_result_null(context)
    }
}
