import FerrySQL
import FerrySQLite

/// The schema name an app's `ATTACH` gives its database, read from the statement before SQLite
/// runs it. SQLite shows its authorizer the file of an `ATTACH`, never the name, and by the time the
/// statement has run it has created the file: a name Ferry reserves (`ferry_src_N`, ...) must be
/// refused before.
enum AttachSchemaName {
    /// What an `ATTACH` statement names.
    enum Reading: Equatable {
        /// The name, as SQLite will read it (a bare or quoted name, a string, a bound value).
        case name(String)
        /// A name Ferry cannot read before SQLite runs the statement (an expression).
        case computed
        /// Not an `ATTACH` (or not one the front end parses: SQLite will reject it).
        case notAttach
    }

    /// The schema name of the `ATTACH` statement `sql`, run with `arguments`.
    static func read(_ sql: String, arguments: StatementArguments) -> Reading {
        guard case .attach(_, let schema, _)? = try? Parser.parseStatement(sql) else { return .notAttach }
        switch schema {
        case .column(let reference) where reference.table == nil:
            // SQLite reads a bare or quoted name after AS as a string.
            return .name(reference.column.name)
        case .literal(.string(let name)):
            return .name(name)
        case .parameter(let parameter):
            switch arguments.value(at: parameter.index, named: parameter.isAnonymous ? nil : parameter.text) {
            case .text(let name)?: return .name(name)
            case .blob(let bytes)?: return .name(String(decoding: bytes, as: UTF8.self))  // SQLite reads it as text
            default: return .name("")  // a number or NULL: no name Ferry reserves
            }
        default:
            return .computed
        }
    }
}
