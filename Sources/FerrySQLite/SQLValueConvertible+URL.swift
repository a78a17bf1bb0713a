import Foundation

/// `URL` as GRDB stores it: written as its absolute string (text); read from text or UTF-8 bytes
/// that `URL(string:)` accepts. A text that is not a URL reads as nil (a decoding error).
extension URL: SQLValueConvertible {
    /// The absolute string, as text.
    public var sqlValue: Value { .text(absoluteString) }

    /// The URL a text (or UTF-8 blob) spells, or nil.
    public static func fromSQLValue(_ value: Value) -> URL? {
        String.fromSQLValue(value).flatMap { $0.isEmpty ? nil : URL(string: $0) }
    }
}
