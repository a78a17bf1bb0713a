import FerrySQLite
import Foundation

/// Migrating targets the app renamed (`ALTER TABLE T RENAME TO U`), recorded in the app's
/// transaction, with the ALTER.
///
/// The whole state follows the new name at once (the table's row, its moved set, its column
/// changes, its guarded triggers), and the name the plan registered is kept: the app's plan still
/// says `T`, so registering it again (every launch) must find `U`, not create and fill a new `T`.
extension MigrationState {
    /// Lower-cased name the plan registered → the target's current name (only renamed targets).
    static func tableRenames(on db: Connection) throws(FerryError) -> [String: String] {
        guard try exists(on: db),
              let json: String = try sqlite(db.scalar("SELECT value FROM main.\(flagsTable) WHERE key = '\(tableRenamesKey)'")),
              let renames = try? JSONDecoder().decode([String: String].self, from: Data(json.utf8))
        else { return [:] }
        return renames
    }

    /// Records that the app renamed the migrating (or finished, not yet cleaned) target `old` to
    /// `new`: every piece of state keyed by the target's name follows.
    static func recordRenamedTable(_ old: String, to new: String, on db: Connection) throws(FerryError) {
        let renames = try tableRenames(on: db)
        try sqlite(db.execute("UPDATE main.\(tablesTable) SET target = ?2 WHERE target = ?1", [.text(old), .text(new)]))
        try sqlite(db.execute("UPDATE main.\(movedTable) SET target = ?2 WHERE target = ?1", [.text(old), .text(new)]))
        try sqlite(db.execute("UPDATE main.\(movedRowsTable) SET target = ?2 WHERE target = ?1", [.text(old), .text(new)]))
        // The app's edits: those of the table's earlier life under the new name (renamed back) are
        // the same rows; one record each. Edits not written yet follow in memory (`EditRecorder`).
        try sqlite(db.execute("UPDATE OR IGNORE main.\(editedRowsTable) SET target = ?2 WHERE lower(target) = lower(?1)", [.text(old), .text(new)]))
        try sqlite(db.execute("DELETE FROM main.\(editedRowsTable) WHERE lower(target) = lower(?1)", [.text(old)]))
        db.editRecorder?.rename(old, to: new)
        try sqlite(db.execute("UPDATE main.\(appTriggersTable) SET target = ?2 WHERE target = ?1", [.text(old), .text(new)]))
        for key in [addedColumnsKey, renamedColumnsKey] {
            try sqlite(db.execute("UPDATE main.\(flagsTable) SET key = ?2 WHERE key = ?1", [.text(key + old.lowercased()), .text(key + new.lowercased())]))
        }
        var next = renames
        if let registered = renames.first(where: { $0.value.lowercased() == old.lowercased() })?.key {
            next[registered] = new
        } else {
            next[old.lowercased()] = new
        }
        next = next.filter { $0.key != $0.value.lowercased() }  // renamed back to the registered name
        let json = (try? JSONEncoder().encode(next)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        try sqlite(db.execute("INSERT OR REPLACE INTO main.\(flagsTable)(key, value) VALUES ('\(tableRenamesKey)', ?)", [.text(json)]))
    }

    private static let tableRenamesKey = "table_renames"
}
