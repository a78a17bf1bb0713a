import FerrySQLite

/// A row's columns as Swift values, by name or by index, with the type the context asks for:
///
/// ```swift
/// let body: String = try row["body"]      // NULL or a number here throws, naming the column
/// let sentAt: Date? = try row["sent_at"]  // nil for NULL
/// let id: Int64 = try row[0]
/// ```
///
/// The subscripts throw instead of trapping or guessing: a missing column, NULL read as a type
/// that is not optional, and a value that does not convert (text into `Int`, a number into
/// `UUID`, ...) throw `FerryError.decodingFailed` naming the column. They read the types
/// `Row.decode(_:keys:)` reads into a record's properties, with the same conventions:
/// `SQLValueConvertible` types (`Int`, `Int64`, `Double`, `Bool`, `String`, `Data`, `[UInt8]`,
/// `Date` and `UUID` as GRDB stores them, `URL`, `Value`), other `Decodable` single values (an enum
/// with a raw value, by its raw value; `Int8`, `UInt32`, `Float`, ...), and optionals of them.
///
/// Without a type to convert to, `row["body"]` is the column's `Value?` (nil when there is no such
/// column) and `row[0]` its `Value`, as before: they neither throw nor convert.
extension Row {
    /// The value of the first column named `name` (ASCII case-insensitive), converted to `T`.
    /// - Parameter name: the column's name.
    /// - Throws: `FerryError.decodingFailed` naming the column when there is no such column, the
    ///   value is NULL and `T` is not optional, or the value does not convert to `T`.
    public subscript<T: SQLValueConvertible>(_ name: String) -> T {
        get throws(FerryError) { try converted(at: try index(of: name)) }
    }

    /// The value at a column index (0-based), converted to `T`.
    /// - Parameter index: the column's index.
    /// - Throws: `FerryError.decodingFailed` naming the column when the index is out of range, the
    ///   value is NULL and `T` is not optional, or the value does not convert to `T`.
    public subscript<T: SQLValueConvertible>(_ index: Int) -> T {
        get throws(FerryError) { try converted(at: index) }
    }

    /// The value of the first column named `name`, decoded as `T` through its `Decodable`
    /// conformance (an enum with a raw value, a narrow integer, `Float`, or an optional of one).
    /// - Parameter name: the column's name.
    /// - Throws: `FerryError.decodingFailed` naming the column when there is no such column or the
    ///   value does not decode as `T`.
    @_disfavoredOverload
    public subscript<T: Decodable>(_ name: String) -> T {
        get throws(FerryError) {
            let index = try index(of: name)
            return try sqlite(decodeColumn(index, as: T.self))
        }
    }

    /// The value at a column index (0-based), decoded as `T` through its `Decodable` conformance.
    /// - Parameter index: the column's index.
    /// - Throws: `FerryError.decodingFailed` naming the column when the index is out of range or
    ///   the value does not decode as `T`.
    @_disfavoredOverload
    public subscript<T: Decodable>(_ index: Int) -> T {
        get throws(FerryError) { try sqlite(decodeColumn(index, as: T.self)) }
    }

    /// The index of the first column named `name`.
    private func index(of name: String) throws(FerryError) -> Int {
        guard let index = columnIndex(named: name) else {
            throw .decodingFailed("no column named \(name) (columns: \(columnNames.joined(separator: ", ")))")
        }
        return index
    }

    /// The value at `index` converted to `T`.
    private func converted<T: SQLValueConvertible>(at index: Int) throws(FerryError) -> T {
        guard values.indices.contains(index) else {
            throw .decodingFailed("column index \(index) out of range (the row has \(values.count) columns)")
        }
        let value = values[index]
        if let converted = T.fromSQLValue(value) { return converted }
        if value.isNull {
            throw .decodingFailed("column \(columnNames[index]) is NULL, not \(T.self) (read it as \(T.self)? where it may be NULL)")
        }
        throw .decodingFailed("column \(columnNames[index]) holds \(value.storageClass), not \(T.self)")
    }
}
