/// SQL source held as UTF-8 bytes, with helpers to turn byte ranges back into text.
package struct SourceText: Sendable, Hashable {
    /// The UTF-8 bytes of the source.
    package let bytes: [UInt8]

    /// Wraps the UTF-8 bytes of `text`.
    package init(_ text: String) {
        self.bytes = Array(text.utf8)
    }

    /// Wraps bytes that are already known to be valid UTF-8.
    init(validatedBytes: [UInt8]) {
        self.bytes = validatedBytes
    }

    /// The number of bytes.
    @inline(__always) package var count: Int { bytes.count }

    /// The byte at `offset`, or 0 past the end (SQLite's tokenizer reads a NUL terminator the same way).
    @inline(__always) package subscript(offset: Int) -> UInt8 {
        offset < bytes.count ? bytes[offset] : 0
    }

    /// The text of a byte range.
    package func string(_ range: Range<Int>) -> String {
        bytes.withUnsafeBufferPointer { String(decoding: UnsafeBufferPointer(rebasing: $0[range]), as: UTF8.self) }
    }

    /// The source text of a token.
    package func text(of token: Token) -> String { string(token.range) }
}
