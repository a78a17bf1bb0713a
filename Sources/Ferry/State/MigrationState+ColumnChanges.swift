import FerrySQLite
import Foundation

/// The columns the app added to or renamed in a migrating target (`ALTER TABLE T ADD COLUMN`,
/// `ALTER TABLE T RENAME COLUMN`), recorded in the app's transaction, with the ALTER, and read at
/// every open: they decide which source column feeds which target column.
///
/// - An added column is fed by nothing (on the finished table every existing row holds its
///   default), whatever the source has under that name.
/// - A renamed column keeps the feed of the name it had when the plan registered it: the plan's
///   declared feed for that name, or the source column of that name.
struct ColumnChanges: Sendable, Hashable {
    /// Lower-cased current names of the columns the app added.
    var added: Set<String> = []
    /// Lower-cased current name → the name the column had when the plan registered it.
    var renamed: [String: String] = [:]

    /// The name the column now called `column` had at registration (its own when never renamed).
    func registeredName(of column: String) -> String { renamed[column.lowercased()] ?? column }

    /// True when no source column feeds `column` (the app added it).
    func isAdded(_ column: String) -> Bool { added.contains(column.lowercased()) }

    /// The changes after the app renamed `old` to `new`.
    func renaming(_ old: String, to new: String) -> ColumnChanges {
        var next = self
        let oldKey = old.lowercased(), newKey = new.lowercased()
        if next.added.remove(oldKey) != nil {
            next.added.insert(newKey)
            return next
        }
        let origin = next.renamed.removeValue(forKey: oldKey) ?? old
        if origin.lowercased() != newKey { next.renamed[newKey] = origin }
        return next
    }
}

extension MigrationState {
    /// Records that the app added `column` to the migrating target `target`. In the app's
    /// transaction, with the ALTER.
    static func recordAddedColumn(_ column: String, target: String, on db: Connection) throws(FerryError) {
        var changes = try columnChanges(on: db)[target.lowercased()] ?? ColumnChanges()
        guard changes.added.insert(column.lowercased()).inserted else { return }
        try store(changes, target: target, on: db)
    }

    /// Records that the app renamed `old` to `new` in the migrating target `target`. In the app's
    /// transaction, with the ALTER.
    static func recordRenamedColumn(_ old: String, to new: String, target: String, on db: Connection) throws(FerryError) {
        let changes = try columnChanges(on: db)[target.lowercased()] ?? ColumnChanges()
        try store(changes.renaming(old, to: new), target: target, on: db)
    }

    /// The column changes of each target (by lower-cased name).
    static func columnChanges(on db: Connection) throws(FerryError) -> [String: ColumnChanges] {
        guard try exists(on: db) else { return [:] }
        var result: [String: ColumnChanges] = [:]
        let added = try sqlite(db.fetchAll("SELECT substr(f.key, \(addedColumnsKey.count + 1)), j.value FROM main.\(flagsTable) AS f, json_each(f.value) AS j "
                                           + "WHERE f.key LIKE '\(addedColumnsKey)%'"))
        for row in added {
            let target: String = try sqlite(row.column(0))
            let column: String = try sqlite(row.column(1))
            result[target, default: ColumnChanges()].added.insert(column)
        }
        let renamed = try sqlite(db.fetchAll("SELECT substr(f.key, \(renamedColumnsKey.count + 1)), j.key, j.value FROM main.\(flagsTable) AS f, json_each(f.value) AS j "
                                             + "WHERE f.key LIKE '\(renamedColumnsKey)%'"))
        for row in renamed {
            let target: String = try sqlite(row.column(0))
            let current: String = try sqlite(row.column(1))
            let origin: String = try sqlite(row.column(2))
            result[target, default: ColumnChanges()].renamed[current] = origin
        }
        return result
    }

    private static func store(_ changes: ColumnChanges, target: String, on db: Connection) throws(FerryError) {
        // JSON of strings: encoding cannot fail.
        let added = (try? JSONEncoder().encode(changes.added.sorted())).map { String(decoding: $0, as: UTF8.self) } ?? "[]"
        let renamed = (try? JSONEncoder().encode(changes.renamed)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        for (key, json, isEmpty) in [(addedColumnsKey, added, changes.added.isEmpty), (renamedColumnsKey, renamed, changes.renamed.isEmpty)] {
            if isEmpty {
                try sqlite(db.execute("DELETE FROM main.\(flagsTable) WHERE key = ?", [.text(key + target.lowercased())]))
            } else {
                try sqlite(db.execute("INSERT OR REPLACE INTO main.\(flagsTable)(key, value) VALUES (?, ?)", [.text(key + target.lowercased()), .text(json)]))
            }
        }
    }

    /// The flag key prefixes of a target's added and renamed columns.
    static let addedColumnsKey = "added_columns:"
    static let renamedColumnsKey = "renamed_columns:"
}
