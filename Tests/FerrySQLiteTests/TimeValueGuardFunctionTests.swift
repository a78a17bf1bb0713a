import Testing
@testable import FerrySQLite

/// `ferry_time_value` passes values through and refuses, with `constraintFunction`, the ones that
/// make a date function read the clock or the time zone.
@Suite struct TimeValueGuardFunctionTests {
    @Test func clockValuesAreRefusedWithTheirCode() throws {
        let db = try Connection.inMemory()
        #expect(try db.scalar("SELECT ferry_time_value('2024-01-01')", as: String.self) == "2024-01-01")
        #expect(try db.scalar("SELECT ferry_time_value(42)", as: Int.self) == 42)
        for value in ["now", "NOW", "localtime", " utc "] {
            #expect(performing: { try db.scalar("SELECT date(ferry_time_value(?))", [value], as: String.self) }, throws: { error in
                (error as? SQLiteError)?.resultCode == .constraintFunction
            })
        }
    }
}
