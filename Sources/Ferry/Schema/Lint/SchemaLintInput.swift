/// The text the schema safety lint reads, checked byte by byte as SQLite reads SQL: SQLite stops
/// at a NUL byte (the statements after it never run, and the lint would never see them) and reads
/// UTF-8 (bytes that are not would make the script untokenizable, and the lint skips what it cannot
/// tokenize). Either is an input error (`FerryError.unreadableSQL`), never a pass.
enum SchemaLintInput {
    /// `bytes` (a migration file's) as text.
    /// - Throws: `FerryError.unreadableSQL` naming a leading byte-order mark, or the first NUL byte
    ///   or invalid UTF-8 sequence of `name` by its byte offset.
    static func text(of bytes: [UInt8], name: String) throws(FerryError) -> String {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            throw .unreadableSQL(name: name, offset: 0, reason: "a UTF-8 byte-order mark (SQLite reads it as part of the first word, "
                + "so the first statement fails and the lint could not read it; save the file without one)")
        }
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var offset = 0
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded):
                if encoded.count == 1 && encoded.first == 0 { throw nulByte(in: name, at: offset) }
                offset += encoded.count
            case .error(let length):
                let bytes = length == 1 ? "a byte that is" : "\(length) bytes that are"
                throw .unreadableSQL(name: name, offset: offset, reason: "\(bytes) not UTF-8 (SQLite reads SQL text as UTF-8)")
            case .emptyInput:
                return String(decoding: bytes, as: UTF8.self)
            }
        }
    }

    /// Checks text already decoded, in which only a NUL byte can be wrong.
    /// - Throws: `FerryError.unreadableSQL` naming the first NUL byte of `sql` by its byte offset.
    static func check(_ sql: String, name: String) throws(FerryError) {
        if let offset = sql.utf8.firstIndex(of: 0).map({ sql.utf8.distance(from: sql.utf8.startIndex, to: $0) }) {
            throw nulByte(in: name, at: offset)
        }
    }

    /// The error of a NUL byte at `offset`.
    private static func nulByte(in name: String, at offset: Int) -> FerryError {
        .unreadableSQL(name: name, offset: offset,
                       reason: "a NUL byte (SQLite stops reading SQL there: the statements after it would never run nor be linted)")
    }
}
