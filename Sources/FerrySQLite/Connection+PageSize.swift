import Foundation

extension Connection {
    /// The page size of the database `schema` (`main` or an attached one), in bytes.
    ///
    /// `PRAGMA page_size` answers an integer on a plain database, but on a SQLCipher-encrypted one
    /// SQLCipher answers it itself, as *text* in a column named `cipher_page_size` (`'4096'`).
    /// Both answers are read here; anything else is a `decodingFailed` error, never a guess.
    package func pageSize(schema: String = "main") throws(SQLiteError) -> Int {
        let value = try fetchOne("PRAGMA \(quoteIdentifier(schema)).page_size").map { $0.count > 0 ? $0[0] : .null } ?? .null
        if let size = Self.pageSize(from: value) { return size }
        throw .decodingFailed("PRAGMA \(schema).page_size answered \(value), not a page size")
    }

    /// A page size from the value `PRAGMA page_size` answered: an integer, or the text of one
    /// (SQLCipher's answer on an encrypted database); nil when it is neither, or not a power of
    /// two from 512 to 65536.
    static func pageSize(from value: Value) -> Int? {
        let size: Int?
        switch value {
        case .integer(let integer): size = Int(exactly: integer)
        case .text(let text): size = Int(text.trimmingCharacters(in: .whitespacesAndNewlines))
        default: size = nil
        }
        guard let size, size >= 512, size <= 65536, size & (size - 1) == 0 else { return nil }
        return size
    }
}
