import Foundation

/// Encodes an `Encodable` record into its columns and values, in the order it encodes them: each
/// key of its keyed container is a column (named by `ColumnKeys`), each value a `Value` (through
/// `SQLValueConvertible`: `Date`, `UUID`, `Data`, optionals, enums with raw values of those
/// types). A nested container, or a value that is not a single SQL value, fails with
/// `SQLiteError.decodingFailed`, naming the key.
package struct RecordEncoder {
    /// How the record's coding keys name columns.
    package var keys: ColumnKeys

    /// An encoder naming columns by `keys`.
    package init(keys: ColumnKeys = .asWritten) { self.keys = keys }

    /// The record's columns and values, in encoding order; a `nil` optional is encoded as NULL.
    package func encode<T: Encodable>(_ record: T) throws(SQLiteError) -> [(column: String, value: Value)] {
        let storage = Storage()
        do {
            try record.encode(to: RecordEncoding(storage: storage, keys: keys))
        } catch let error as SQLiteError {
            throw error
        } catch {
            throw .decodingFailed("\(T.self) cannot be encoded as a row: \(error)")
        }
        return storage.columns
    }

    final class Storage {
        var columns: [(column: String, value: Value)] = []
        func set(_ column: String, _ value: Value) {
            if let index = columns.firstIndex(where: { $0.column == column }) { columns[index].value = value } else { columns.append((column, value)) }
        }
    }

    struct RecordEncoding: Encoder {
        let storage: Storage
        let keys: ColumnKeys
        var codingPath: [any CodingKey] = []
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
            KeyedEncodingContainer(Keyed<Key>(storage: storage, keys: keys, codingPath: codingPath))
        }
        func unkeyedContainer() -> any UnkeyedEncodingContainer { Refusing(codingPath: codingPath) }
        func singleValueContainer() -> any SingleValueEncodingContainer { Refusing(codingPath: codingPath) }
    }

    struct Keyed<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let storage: Storage
        let keys: ColumnKeys
        var codingPath: [any CodingKey]

        func encodeNil(forKey key: Key) throws { storage.set(keys.column(for: key.stringValue), .null) }

        func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            storage.set(keys.column(for: key.stringValue), try ColumnValue.of(value, key: key.stringValue))
        }

        // A nil optional: `encodeIfPresent` skips it by default; a row needs the column, NULL.
        func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
            guard let value else { return try encodeNil(forKey: key) }
            try encode(value, forKey: key)
        }

        func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
            KeyedEncodingContainer(RefusingKeyed<NestedKey>(codingPath: codingPath + [key]))
        }
        func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer { Refusing(codingPath: codingPath + [key]) }
        func superEncoder() -> any Encoder { RecordEncoding(storage: storage, keys: keys, codingPath: codingPath) }
        func superEncoder(forKey key: Key) -> any Encoder { RecordEncoding(storage: storage, keys: keys, codingPath: codingPath + [key]) }
    }

    /// One column's value: an `SQLValueConvertible` as it converts, an enum with a raw value of one
    /// by its raw value (through its single-value encoding).
    enum ColumnValue {
        static func of<T: Encodable>(_ value: T, key: String) throws -> Value {
            if let convertible = value as? any SQLValueConvertible { return convertible.sqlValue }
            let single = SingleValue()
            do {
                try value.encode(to: single)
            } catch {
                throw SQLiteError.decodingFailed("column \(key): \(T.self) is not a single SQL value (\(error))")
            }
            guard let result = single.value else { throw SQLiteError.decodingFailed("column \(key): \(T.self) encoded no value") }
            return result
        }
    }

    /// Captures the one value a type encodes through a single-value container (a raw-value enum).
    final class SingleValue: Encoder, SingleValueEncodingContainer {
        var value: Value?
        var codingPath: [any CodingKey] = []
        var userInfo: [CodingUserInfoKey: Any] { [:] }
        func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> { KeyedEncodingContainer(RefusingKeyed<Key>(codingPath: [])) }
        func unkeyedContainer() -> any UnkeyedEncodingContainer { Refusing(codingPath: []) }
        func singleValueContainer() -> any SingleValueEncodingContainer { self }
        func encodeNil() throws { value = .null }
        func encode<T: Encodable>(_ value: T) throws {
            guard let convertible = value as? any SQLValueConvertible else { throw SQLiteError.decodingFailed("\(T.self) is not a single SQL value") }
            self.value = convertible.sqlValue
        }
    }

    /// A container a row cannot hold: every use fails.
    struct Refusing: UnkeyedEncodingContainer, SingleValueEncodingContainer {
        var codingPath: [any CodingKey]
        var count: Int { 0 }
        private func refuse() throws -> Never {
            throw SQLiteError.decodingFailed("\(codingPath.map(\.stringValue).joined(separator: ".")): a row holds one SQL value per column, not nested values")
        }
        func encodeNil() throws { try refuse() }
        func encode<T: Encodable>(_ value: T) throws { try refuse() }
        func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
            KeyedEncodingContainer(RefusingKeyed<NestedKey>(codingPath: codingPath))
        }
        func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { self }
        func superEncoder() -> any Encoder { SingleValue() }
    }

    struct RefusingKeyed<Key: CodingKey>: KeyedEncodingContainerProtocol {
        var codingPath: [any CodingKey]
        private func refuse() throws -> Never {
            throw SQLiteError.decodingFailed("\(codingPath.map(\.stringValue).joined(separator: ".")): a row holds one SQL value per column, not nested values")
        }
        func encodeNil(forKey key: Key) throws { try refuse() }
        func encode<T: Encodable>(_ value: T, forKey key: Key) throws { try refuse() }
        func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
            KeyedEncodingContainer(RefusingKeyed<NestedKey>(codingPath: codingPath + [key]))
        }
        func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer { Refusing(codingPath: codingPath + [key]) }
        func superEncoder() -> any Encoder { SingleValue() }
        func superEncoder(forKey key: Key) -> any Encoder { SingleValue() }
    }
}
