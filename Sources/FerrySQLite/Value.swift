/// A SQLite value: one of SQLite's five storage classes.
public enum Value: Hashable, Sendable {
    /// SQL NULL.
    case null
    /// A 64-bit signed integer.
    case integer(Int64)
    /// An IEEE 754 double.
    case real(Double)
    /// UTF-8 text.
    case text(String)
    /// Bytes.
    case blob([UInt8])

    /// True for `.null`.
    public var isNull: Bool { if case .null = self { return true } else { return false } }

    /// The storage class name as SQLite's `typeof()` reports it.
    public var storageClass: String {
        switch self {
        case .null: return "null"
        case .integer: return "integer"
        case .real: return "real"
        case .text: return "text"
        case .blob: return "blob"
        }
    }
}

extension Value: ExpressibleByNilLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByStringLiteral, ExpressibleByBooleanLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(floatLiteral value: Double) { self = .real(value) }
    public init(stringLiteral value: String) { self = .text(value) }
    public init(booleanLiteral value: Bool) { self = .integer(value ? 1 : 0) }
}

extension Value: CustomStringConvertible {
    /// The value written as a SQL literal (text quoted, blobs as `X'..'`).
    public var description: String {
        switch self {
        case .null: return "NULL"
        case .integer(let v): return String(v)
        case .real(let v): return "\(v)"
        case .text(let s): return "'" + s.replacingAll("'", with: "''") + "'"
        case .blob(let bytes): return "X'" + bytes.hexString + "'"
        }
    }
}

extension String {
    /// Replaces every occurrence of `target` (a single character) by `replacement`.
    func replacingAll(_ target: Character, with replacement: String) -> String {
        guard contains(target) else { return self }
        var out = ""
        out.reserveCapacity(utf8.count + 4)
        for c in self {
            if c == target { out += replacement } else { out.append(c) }
        }
        return out
    }
}

extension Sequence where Element == UInt8 {
    /// Lowercase hexadecimal digits of the bytes.
    var hexString: String {
        let digits: [UInt8] = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(underestimatedCount * 2)
        for b in self {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0xF)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
