import FerrySQLite

/// The statement that retires a source table every matching row of which moved, in the caller's
/// transaction: nothing when a row lies above the cursor (the source was written behind Ferry's
/// back: cleanup then deletes row by row), else `DROP TABLE`, or `DELETE` of every row when source
/// tables are kept. It frees the table's pages instead of deleting row by row through every index.
///
/// One statement for both places that retire: `SourceRetirer`, off the writer, for a source of its
/// own file; and the writer's cleanup of a same-file source (`Stepper.retireOnWriter`).
struct SourceTableRetirement: Sendable {
    /// `"schema"."table"`.
    let qualifiedTable: String
    /// The source's rowid (qualified) and the final cursor: a row above it declines. Nil for a
    /// source without rowid, whose key cursor passed every row.
    let rowidAndCursor: (rowid: String, cursor: Int64)?
    /// `DELETE` instead of `DROP` (`Options.keepSourceTables`).
    let keepsTable: Bool

    /// The retirement of `mapping`'s source table, with its final cursor (nil: a source without rowid).
    init(_ mapping: ResolvedMapping, cursor: Int64?, keepsTable: Bool) {
        qualifiedTable = mapping.qualifiedSource
        rowidAndCursor = cursor.map { (mapping.sourceRowid, $0) }
        self.keepsTable = keepsTable
    }

    /// Runs it on `db`, inside the caller's transaction. Returns false when it declined (nothing changed).
    func run(on db: Connection) throws(FerryError) -> Bool {
        if let (rowid, cursor) = rowidAndCursor {
            let top: Int64? = try sqlite(db.scalar("SELECT max(\(rowid)) FROM \(qualifiedTable)"))
            if let top, top > cursor { return false }
        }
        try sqlite(db.execute(keepsTable ? "DELETE FROM \(qualifiedTable)" : "DROP TABLE \(qualifiedTable)"))
        return true
    }
}
