import Foundation

/// A Swift type that converts to and from a SQLite `Value`.
///
/// Conforming types can be passed as statement arguments and read from rows:
/// `try db.execute("INSERT INTO t(a) VALUES (?)", [42])`, `let n: Int = try row.column(0)`.
public protocol SQLValueConvertible {
    /// The value to bind.
    var sqlValue: Value { get }
    /// Converts a stored value, or returns nil when it cannot be represented (e.g. NULL for `Int`).
    static func fromSQLValue(_ value: Value) -> Self?
}

/// `Value`'s cases where a `SQLValueConvertible` is expected (`[.integer(1), .text("x")]` as
/// statement arguments). Disfavored, so that where a `Value` is expected the enum's own cases win.
extension SQLValueConvertible where Self == Value {
    /// `Value.integer`.
    @_disfavoredOverload public static func integer(_ value: Int64) -> Value { .integer(value) }
    /// `Value.real`.
    @_disfavoredOverload public static func real(_ value: Double) -> Value { .real(value) }
    /// `Value.text`.
    @_disfavoredOverload public static func text(_ value: String) -> Value { .text(value) }
    /// `Value.blob`.
    @_disfavoredOverload public static func blob(_ value: [UInt8]) -> Value { .blob(value) }
    /// `Value.null`.
    @_disfavoredOverload public static var null: Value { .null }
}

extension Value: SQLValueConvertible {
    public var sqlValue: Value { self }
    public static func fromSQLValue(_ value: Value) -> Value? { value }
}

extension Int64: SQLValueConvertible {
    public var sqlValue: Value { .integer(self) }
    public static func fromSQLValue(_ value: Value) -> Int64? {
        switch value {
        case .integer(let v): return v
        case .real(let d): return Int64(exactly: d)
        default: return nil
        }
    }
}

extension Int: SQLValueConvertible {
    public var sqlValue: Value { .integer(Int64(self)) }
    public static func fromSQLValue(_ value: Value) -> Int? { Int64.fromSQLValue(value).flatMap { Int(exactly: $0) } }
}

extension Int32: SQLValueConvertible {
    public var sqlValue: Value { .integer(Int64(self)) }
    public static func fromSQLValue(_ value: Value) -> Int32? { Int64.fromSQLValue(value).flatMap { Int32(exactly: $0) } }
}

extension Double: SQLValueConvertible {
    public var sqlValue: Value { .real(self) }
    public static func fromSQLValue(_ value: Value) -> Double? {
        switch value {
        case .real(let d): return d
        case .integer(let v): return Double(v)
        default: return nil
        }
    }
}

extension Bool: SQLValueConvertible {
    public var sqlValue: Value { .integer(self ? 1 : 0) }
    public static func fromSQLValue(_ value: Value) -> Bool? {
        switch value {
        case .integer(let v): return v != 0
        case .real(let d): return d != 0
        default: return nil
        }
    }
}

extension String: SQLValueConvertible {
    public var sqlValue: Value { .text(self) }
    public static func fromSQLValue(_ value: Value) -> String? {
        switch value {
        case .text(let s): return s
        case .blob(let b): return String(validating: b, as: UTF8.self)
        default: return nil
        }
    }
}

extension Array: SQLValueConvertible where Element == UInt8 {
    public var sqlValue: Value { .blob(self) }
    public static func fromSQLValue(_ value: Value) -> [UInt8]? {
        switch value {
        case .blob(let b): return b
        case .text(let s): return Array(s.utf8)
        default: return nil
        }
    }
}

extension Data: SQLValueConvertible {
    public var sqlValue: Value { .blob([UInt8](self)) }
    public static func fromSQLValue(_ value: Value) -> Data? { [UInt8].fromSQLValue(value).map { Data($0) } }
}

extension Optional: SQLValueConvertible where Wrapped: SQLValueConvertible {
    public var sqlValue: Value { self?.sqlValue ?? .null }
    public static func fromSQLValue(_ value: Value) -> Wrapped?? {
        if case .null = value { return .some(nil) }
        return Wrapped.fromSQLValue(value).map { .some($0) }
    }
}
