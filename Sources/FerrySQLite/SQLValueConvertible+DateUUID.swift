import Foundation

/// `Date` as SQLite stores dates, with GRDB's conventions: written as UTC text,
/// `YYYY-MM-DD HH:MM:SS.SSS` (millisecond precision, SQLite's own format, so SQLite's date functions
/// read it); read from that text and SQLite's other date-time texts (`YYYY-MM-DD`,
/// `YYYY-MM-DD HH:MM[:SS[.SSS…]]`, with `T` for the space, and a `Z` or `±HH:MM` suffix), and from
/// numbers as seconds since 1970 (Unix time, as `unixepoch()` and `strftime('%s')` give them). A text
/// in no such form reads as nil (a decoding error), never as a wrong date.
extension Date: SQLValueConvertible {
    public var sqlValue: Value { .text(SQLiteDateText.text(of: self)) }

    public static func fromSQLValue(_ value: Value) -> Date? {
        switch value {
        case .integer(let seconds): return Date(timeIntervalSince1970: TimeInterval(seconds))
        case .real(let seconds): return Date(timeIntervalSince1970: seconds)
        case .text(let text): return SQLiteDateText.date(from: text)
        default: return nil
        }
    }
}

/// `UUID` as GRDB stores it: written as its 16 bytes (a blob); read from 16 bytes or from its text
/// (`E621E1F8-C36C-495A-93FC-0C247A3E6E5F`, any case).
extension UUID: SQLValueConvertible {
    public var sqlValue: Value { withUnsafeBytes(of: uuid) { .blob(Array($0)) } }

    public static func fromSQLValue(_ value: Value) -> UUID? {
        switch value {
        case .blob(let bytes) where bytes.count == 16:
            return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                               bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
        case .text(let text): return UUID(uuidString: text)
        default: return nil
        }
    }
}

/// SQLite's date-time text, written and read without a formatter (exact, and the same on every
/// platform and locale).
enum SQLiteDateText {
    /// `YYYY-MM-DD HH:MM:SS.SSS`, UTC, rounded to the millisecond.
    static func text(of date: Date) -> String {
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded()
        let totalMilliseconds = Int64(milliseconds)
        let (days, dayMilliseconds) = floorDivide(totalMilliseconds, 86_400_000)
        let (year, month, day) = civil(fromDays: days)
        let seconds = dayMilliseconds / 1000
        func pad(_ value: Int64, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2)) \(pad(seconds / 3600, 2)):\(pad(seconds / 60 % 60, 2)):"
            + "\(pad(seconds % 60, 2)).\(pad(dayMilliseconds % 1000, 3))"
    }

    /// The date a SQLite date-time text names; nil when `text` is not one.
    static func date(from text: String) -> Date? {
        let bytes = Array(text.utf8)
        var index = 0
        func number(_ digits: Int) -> Int64? {
            guard index + digits <= bytes.count else { return nil }
            var value: Int64 = 0
            for byte in bytes[index..<index + digits] {
                guard byte >= 48 && byte <= 57 else { return nil }
                value = value * 10 + Int64(byte - 48)
            }
            index += digits
            return value
        }
        func skip(_ byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }
        guard let year = number(4), skip(45), let month = number(2), skip(45), let day = number(2),
              (1...12).contains(month), (1...31).contains(day) else { return nil }
        var seconds: Double = 0
        if index < bytes.count {
            guard skip(32) || skip(84) || skip(116), let hour = number(2), skip(58), let minute = number(2),
                  hour < 24, minute < 60 else { return nil }
            seconds = Double(hour * 3600 + minute * 60)
            if skip(58) {
                guard let second = number(2), second < 60 else { return nil }
                seconds += Double(second)
                if skip(46) {
                    var scale = 0.1
                    var digits = 0
                    while index < bytes.count, bytes[index] >= 48 && bytes[index] <= 57 {
                        seconds += Double(bytes[index] - 48) * scale
                        scale /= 10
                        index += 1
                        digits += 1
                    }
                    guard digits > 0 else { return nil }
                }
            }
            if skip(90) || skip(122) {
                // Z: UTC.
            } else if index < bytes.count, bytes[index] == 43 || bytes[index] == 45 {
                let sign: Double = bytes[index] == 45 ? -1 : 1
                index += 1
                guard let offsetHours = number(2), skip(58), let offsetMinutes = number(2) else { return nil }
                seconds -= sign * Double(offsetHours * 3600 + offsetMinutes * 60)
            }
        }
        guard index == bytes.count else { return nil }
        let days = self.days(fromCivil: year, month, day)
        return Date(timeIntervalSince1970: Double(days) * 86_400 + seconds)
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date.
    static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The proleptic Gregorian date `days` after 1970-01-01.
    static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// `value` divided by `divisor`, rounded toward negative infinity, and the non-negative rest.
    private static func floorDivide(_ value: Int64, _ divisor: Int64) -> (Int64, Int64) {
        let quotient = value / divisor
        let rest = value % divisor
        return rest < 0 ? (quotient - 1, rest + divisor) : (quotient, rest)
    }
}
