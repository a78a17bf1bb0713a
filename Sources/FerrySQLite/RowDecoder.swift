/// Decodes a `Row` into a `Decodable` type: keyed by column name, or a single value for one column.
struct RowDecoder: Decoder {
    let row: Row
    var keys: ColumnKeys = .asWritten
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(KeyedContainer<Key>(row: row, keys: keys, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw SQLiteError.decodingFailed("a row decodes as a keyed container or a single value, not an array")
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        guard row.count == 1 else {
            throw SQLiteError.decodingFailed("a single value needs a one-column row, this one has \(row.count) columns")
        }
        return ValueDecoder(value: row[0], codingPath: codingPath)
    }

    struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let row: Row
        let keys: ColumnKeys
        var codingPath: [any CodingKey]
        var allKeys: [Key] {
            row.columnNames.compactMap { column in
                keys == .asWritten ? Key(stringValue: column) : nil
            }
        }

        func contains(_ key: Key) -> Bool { row.columnIndex(named: keys.column(for: key.stringValue)) != nil }

        private func value(_ key: Key) throws -> Value {
            let column = keys.column(for: key.stringValue)
            guard let v = row[column] else {
                throw SQLiteError.decodingFailed("no column named \(column) (columns: \(row.columnNames.joined(separator: ", ")))")
            }
            return v
        }

        func decodeNil(forKey key: Key) throws -> Bool { try value(key).isNull }

        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            try ValueDecoder(value: value(key), codingPath: codingPath + [key]).decode(T.self)
        }

        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
            throw SQLiteError.decodingFailed("nested containers are not supported (column \(key.stringValue))")
        }

        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            throw SQLiteError.decodingFailed("nested containers are not supported (column \(key.stringValue))")
        }

        func superDecoder() throws -> any Decoder { RowDecoder(row: row, keys: keys, codingPath: codingPath) }
        func superDecoder(forKey key: Key) throws -> any Decoder { RowDecoder(row: row, keys: keys, codingPath: codingPath) }
    }
}

/// Decodes one `Value` (a column) into a `Decodable` type.
struct ValueDecoder: Decoder, SingleValueDecodingContainer {
    let value: Value
    var codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        throw SQLiteError.decodingFailed("column \(pathDescription) holds a single value")
    }
    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw SQLiteError.decodingFailed("column \(pathDescription) holds a single value")
    }
    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    private var pathDescription: String { codingPath.map(\.stringValue).joined(separator: ".") }

    func decodeNil() -> Bool { value.isNull }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        if let convertible = T.self as? any SQLValueConvertible.Type {
            guard let result = convertible.fromSQLValue(value) as? T else {
                throw SQLiteError.decodingFailed("column \(pathDescription) holds \(value.storageClass), not \(T.self)")
            }
            return result
        }
        return try T(from: self)
    }

    func decode(_ type: Bool.Type) throws -> Bool { try convert() }
    func decode(_ type: String.Type) throws -> String { try convert() }
    func decode(_ type: Double.Type) throws -> Double { try convert() }
    func decode(_ type: Float.Type) throws -> Float { Float(try convert() as Double) }
    func decode(_ type: Int.Type) throws -> Int { try convert() }
    func decode(_ type: Int8.Type) throws -> Int8 { try narrow() }
    func decode(_ type: Int16.Type) throws -> Int16 { try narrow() }
    func decode(_ type: Int32.Type) throws -> Int32 { try convert() }
    func decode(_ type: Int64.Type) throws -> Int64 { try convert() }
    func decode(_ type: UInt.Type) throws -> UInt { try narrow() }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try narrow() }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try narrow() }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try narrow() }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try narrow() }

    private func convert<T: SQLValueConvertible>() throws -> T {
        guard let v = T.fromSQLValue(value) else {
            throw SQLiteError.decodingFailed("column \(pathDescription) holds \(value.storageClass), not \(T.self)")
        }
        return v
    }

    private func narrow<T: FixedWidthInteger>() throws -> T {
        let wide: Int64 = try convert()
        guard let v = T(exactly: wide) else {
            throw SQLiteError.decodingFailed("column \(pathDescription): \(wide) does not fit in \(T.self)")
        }
        return v
    }
}

extension Row {
    /// The value at a column index decoded as `T` through its `Decodable` conformance, as
    /// `decode(_:keys:)` decodes a record's property: `SQLValueConvertible` types by their
    /// conversion, an enum with a raw value by its raw value, an optional from NULL.
    /// - Throws: `SQLiteError.decodingFailed` naming the column when the index is out of range or
    ///   the value does not decode.
    package func decodeColumn<T: Decodable>(_ index: Int, as type: T.Type = T.self) throws(SQLiteError) -> T {
        guard values.indices.contains(index) else {
            throw .decodingFailed("column index \(index) out of range (the row has \(values.count) columns)")
        }
        let name = columnNames[index]
        do {
            return try ValueDecoder(value: values[index], codingPath: [ColumnKey(stringValue: name)]).decode(T.self)
        } catch let error as SQLiteError {
            throw error
        } catch DecodingError.dataCorrupted(let context) {
            throw .decodingFailed("column \(name) holds \(values[index].storageClass) that is no \(T.self): \(context.debugDescription)")
        } catch {
            throw .decodingFailed("column \(name) holds \(values[index].storageClass), not \(T.self): \(error)")
        }
    }
}

/// A column's name as a coding key (the coding path of a column's decoding errors).
private struct ColumnKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}
