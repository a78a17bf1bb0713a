// The connection layer's value types, part of Ferry's API. Its connections and pool
// (`Connection`, `DatabasePool`, `Statement`) are not: every handle Ferry gives the app
// (`FerryConnection`, `MigrationConnection`) runs its statements through Ferry's guard.
@_exported import struct FerrySQLite.Cipher
@_exported import struct FerrySQLite.CipherKey
@_exported import struct FerrySQLite.CipherSettings
@_exported import struct FerrySQLite.DatabaseConfiguration
@_exported import struct FerrySQLite.ResultCode
@_exported import struct FerrySQLite.Row
@_exported import enum FerrySQLite.ColumnKeys
@_exported import enum FerrySQLite.SQLiteEngine
@_exported import enum FerrySQLite.SQLiteError
@_exported import protocol FerrySQLite.SQLiteErrorConvertible
@_exported import protocol FerrySQLite.SQLValueConvertible
@_exported import enum FerrySQLite.StatementArguments
@_exported import enum FerrySQLite.Value
