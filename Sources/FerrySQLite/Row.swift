/// One result row: values in column order, with access by index and by column name.
public struct Row: Hashable, Sendable {
    /// The column names, in the statement's order.
    public let columnNames: [String]
    /// The values, in column order.
    public let values: [Value]

    /// Creates a row from column names and values of the same count.
    public init(columnNames: [String], values: [Value]) {
        self.columnNames = columnNames
        self.values = values
    }

    /// The number of columns.
    public var count: Int { values.count }

    /// The value at a column index (0-based).
    public subscript(index: Int) -> Value { values[index] }

    /// The value of the first column with that name (ASCII case-insensitive, as SQLite matches
    /// names), or nil if there is no such column.
    public subscript(name: String) -> Value? {
        columnIndex(named: name).map { values[$0] }
    }

    /// The index of the first column with that name (ASCII case-insensitive).
    public func columnIndex(named name: String) -> Int? {
        columnNames.firstIndex { $0.caseInsensitiveEquals(name) }
    }

    /// The value at a column index, converted to `T` (for Ferry's own code; its API's `Row.get`
    /// throws `FerryError`).
    /// - Throws: `SQLiteError.decodingFailed` when the index is out of range or the value does not convert.
    package func column<T: SQLValueConvertible>(_ index: Int, as type: T.Type = T.self) throws(SQLiteError) -> T {
        guard values.indices.contains(index) else {
            throw .decodingFailed("column index \(index) out of range (the row has \(values.count) columns)")
        }
        guard let converted = T.fromSQLValue(values[index]) else {
            throw .decodingFailed("column \(index) (\(columnNames[index])) holds \(values[index].storageClass), not \(T.self)")
        }
        return converted
    }

    /// The value of a named column, converted to `T` (for Ferry's own code, as `column(_:as:)`).
    /// - Throws: `SQLiteError.decodingFailed` when there is no such column or the value does not convert.
    package func column<T: SQLValueConvertible>(_ name: String, as type: T.Type = T.self) throws(SQLiteError) -> T {
        guard let index = columnIndex(named: name) else {
            throw .decodingFailed("no column named \(name) (columns: \(columnNames.joined(separator: ", ")))")
        }
        return try column(index)
    }

    /// Decodes the row into a `Decodable` type whose coding keys name its columns (`keys`: as
    /// written, or camel-case keys for snake-case columns); for Ferry's own code, as `column(_:as:)`.
    package func decoded<T: Decodable>(_ type: T.Type = T.self, keys: ColumnKeys = .asWritten) throws(SQLiteError) -> T {
        do {
            return try T(from: RowDecoder(row: self, keys: keys))
        } catch let error as SQLiteError {
            throw error
        } catch {
            throw .decodingFailed("\(T.self): \(error)")
        }
    }
}

extension Row: CustomStringConvertible {
    public var description: String {
        "[" + zip(columnNames, values).map { "\($0): \($1)" }.joined(separator: ", ") + "]"
    }
}

extension String {
    /// ASCII case-insensitive equality, the way SQLite compares identifiers.
    func caseInsensitiveEquals(_ other: String) -> Bool {
        let a = utf8, b = other.utf8
        guard a.count == b.count else { return false }
        for (x, y) in zip(a, b) where x != y {
            let lx = (x >= 65 && x <= 90) ? x + 32 : x
            let ly = (y >= 65 && y <= 90) ? y + 32 : y
            if lx != ly { return false }
        }
        return true
    }
}
