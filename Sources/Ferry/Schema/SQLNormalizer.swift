import FerrySQLite
/// Whitespace- and comment-insensitive form of SQL text, for checksums and schema comparison.
///
/// This is a lexical pass, not a parser: it removes `--` and `/* */` comments, drops whitespace
/// between a word and punctuation, keeps one space between two words (or two punctuation marks, so
/// `- -1` never becomes `--1`), drops empty statements and trailing semicolons, and copies string
/// literals and quoted identifiers (`'..'`, `".."`, `` `..` ``, `[..]`) byte for byte. Letter case is
/// kept: `CREATE TABLE T` and `create table t` store different schema text.
///
/// The algorithm is part of the checksum format (`sha256v1`): changing it changes every checksum.
enum SQLNormalizer {
    private enum CharacterClass { case word, punctuation }

    static func normalize(_ sql: String) -> String {
        let bytes = Array(sql.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var pendingSpace = false
        var lastClass: CharacterClass?
        var i = 0

        func classify(_ b: UInt8) -> CharacterClass {
            switch b {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "$"),
                 UInt8(ascii: "'"), UInt8(ascii: "\""), UInt8(ascii: "`"), UInt8(ascii: "["), UInt8(ascii: "]"):
                return .word
            case 0x80...:
                return .word
            default:
                return .punctuation
            }
        }

        func emitSeparator(before b: UInt8) {
            let current = classify(b)
            if pendingSpace, let lastClass, lastClass == current { out.append(0x20) }
            pendingSpace = false
        }

        while i < bytes.count {
            let b = bytes[i]
            switch b {
            case 0x20, 0x09, 0x0A, 0x0D, 0x0C, 0x0B:
                pendingSpace = true
                i += 1
            case UInt8(ascii: "-") where i + 1 < bytes.count && bytes[i + 1] == UInt8(ascii: "-"):
                while i < bytes.count && bytes[i] != 0x0A { i += 1 }
                pendingSpace = true
            case UInt8(ascii: "/") where i + 1 < bytes.count && bytes[i + 1] == UInt8(ascii: "*"):
                i += 2
                while i < bytes.count && !(bytes[i] == UInt8(ascii: "*") && i + 1 < bytes.count && bytes[i + 1] == UInt8(ascii: "/")) { i += 1 }
                i = min(i + 2, bytes.count)
                pendingSpace = true
            case UInt8(ascii: "'"), UInt8(ascii: "\""), UInt8(ascii: "`"), UInt8(ascii: "["):
                let close: UInt8 = b == UInt8(ascii: "[") ? UInt8(ascii: "]") : b
                emitSeparator(before: b)
                out.append(b)
                i += 1
                while i < bytes.count {
                    let c = bytes[i]
                    out.append(c)
                    i += 1
                    if c == close {
                        // A doubled quote is an escaped quote, except for [..] identifiers.
                        if close != UInt8(ascii: "]"), i < bytes.count, bytes[i] == close {
                            out.append(close)
                            i += 1
                            continue
                        }
                        break
                    }
                }
                lastClass = .word
            case UInt8(ascii: ";"):
                // Empty statements vanish; one separator between statements.
                pendingSpace = false
                if let last = out.last, last != UInt8(ascii: ";") {
                    out.append(b)
                    lastClass = .punctuation
                }
                i += 1
            default:
                emitSeparator(before: b)
                out.append(b)
                lastClass = classify(b)
                i += 1
            }
        }
        while out.last == UInt8(ascii: ";") { out.removeLast() }
        return String(decoding: out, as: UTF8.self)
    }
}
