import FerrySQLite

/// A row's values as Swift values, throwing `FerryError` as the rest of Ferry's API does.
extension Row {
    /// The value at a column index, converted to `T`.
    /// - Throws: `FerryError.decodingFailed` when the index is out of range or the value does not convert.
    public func get<T: SQLValueConvertible>(_ index: Int, as type: T.Type = T.self) throws(FerryError) -> T {
        try sqlite(column(index, as: type))
    }

    /// The value of a named column (the first of that name, compared as SQLite compares names),
    /// converted to `T`.
    /// - Throws: `FerryError.decodingFailed` when there is no such column or the value does not convert.
    public func get<T: SQLValueConvertible>(_ name: String, as type: T.Type = T.self) throws(FerryError) -> T {
        try sqlite(column(name, as: type))
    }

    /// Decodes the row into a `Decodable` type whose coding keys name its columns (`keys`: as
    /// written, or camel-case keys for snake-case columns).
    /// - Throws: `FerryError.decodingFailed` naming what does not decode.
    public func decode<T: Decodable>(_ type: T.Type = T.self, keys: ColumnKeys = .asWritten) throws(FerryError) -> T {
        try sqlite(decoded(type, keys: keys))
    }
}
