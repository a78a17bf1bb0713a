import FerrySQLite
import Foundation

/// Shapes the differential harness draws beside its main ones (`Workload`), each for a modest
/// share of the workloads. They are drawn from a generator of their own, so a workload without
/// them draws exactly what it drew before they existed.
///
/// - A **reshaped target** (`Reshape`): `t` created before the plan registers with another shape
///   than the source's: `b COLLATE NOCASE` over a BINARY source column, another type affinity for
///   `a` (source TEXT, target INTEGER or NUMERIC; source INTEGER, target TEXT), a target-only
///   `e INTEGER NOT NULL DEFAULT 5`, a partial unique index, an expression unique index
///   (`lower(b)`), and rows the target held before the migration. The source rows are first made
///   to fit the target's unique keys among themselves (else the finished table could not hold
///   them all); the oracle holds the held rows, then every matching source row that joins them
///   without a conflict (`INSERT OR IGNORE`, in source key order). A source row that collides
///   with a held row is quarantined by Ferry: the harness counts them on the oracle and expects
///   `ferry_quarantine_t` to hold exactly that many rows once the migration finished.
/// - A **real column named like the rowid** (`shadow`: `oid`, `rowid` or `_rowid_`) in the source
///   and the target, with statements that read it and the other spellings.
/// - A **second plain table** (`other(x, a)`, a few rows) in the target database and the oracle,
///   with statements joining it to `t` and reading the rowids of both.
struct DifferentialShapes {
    struct Reshape {
        /// The target's `b` is `COLLATE NOCASE` (the source's BINARY).
        var nocaseB = false
        /// The declared types of `a` in the source and in the target, when they differ.
        var aTypes: (source: String, target: String)?
        /// A target-only `e INTEGER NOT NULL DEFAULT 5`.
        var notNullDefault = false
        /// `CREATE UNIQUE INDEX t_pre_partial ON t(b) WHERE c > 5` on the target.
        var partialUnique = false
        /// `CREATE UNIQUE INDEX t_pre_lower ON t(lower(b))` on the target.
        var lowerUnique = false
        /// Rows (key, a, b, c) the target holds before the plan registers.
        var held: [[Value]] = []

        /// The target's indexes the source lacks (the target's and the oracle's).
        var indexes: [String] {
            (partialUnique ? ["CREATE UNIQUE INDEX t_pre_partial ON t(b) WHERE c > 5"] : [])
                + (lowerUnique ? ["CREATE UNIQUE INDEX t_pre_lower ON t(lower(b))"] : [])
        }
    }

    var reshape: Reshape?
    /// A real column of `t` named like the rowid.
    var shadow: String?
    /// The target database holds `other`.
    var withOther = false

    static let otherSQL = ["CREATE TABLE other(x INTEGER, a INTEGER)", "INSERT INTO other VALUES (1, 10), (2, 20), (3, 3), (4, 40), (5, 7), (7, 70)"]

    /// Draws the shapes of a workload of `flavour`, on their own generator.
    init(seed: UInt64, flavour: Workload.Flavour, uniqueB: Bool, withGenerated: Bool) {
        var random = SeededGenerator(state: seed &* 104_729 &+ 4_242)
        func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &random) }
        // Reshaped targets keep a rowid the source's rowid feeds (the held rows and the
        // quarantine are keyed by it).
        if [.rowidOnly, .integerPrimaryKey, .autoincrement].contains(flavour) && int(0...4) == 0 {
            var reshape = Reshape()
            repeat {
                reshape.nocaseB = int(0...2) == 0
                // (Not INTEGER -> TEXT: Ferry bug, pending rows of a column whose affinity the
                // target changed compare without it, so every `a < 40` of the workload compares
                // them as numbers where the finished TEXT column compares text; see `literal`.)
                reshape.aTypes = int(0...2) == 0 ? [("TEXT", "INTEGER"), ("TEXT", "NUMERIC")][int(0...1)] : nil
                reshape.notNullDefault = int(0...2) == 0
                reshape.partialUnique = int(0...3) == 0
                reshape.lowerUnique = int(0...3) == 0
                if int(0...1) == 0 {
                    for _ in 0..<int(1...6) {
                        // Held b values collide with source ones (`t<n>`, under NOCASE `T<n>`)
                        // only through keys Ferry looks up by equality at registration (b's plain
                        // or partial unique index); an expression key matches no source row (its
                        // collisions surface at the move only, Limitations.md).
                        let b: Value
                        if !reshape.lowerUnique && (uniqueB || reshape.partialUnique) && int(0...1) == 0 {
                            b = .text("\(reshape.nocaseB && int(0...1) == 0 ? "T" : "t")\(int(0...40))")
                        } else {
                            b = int(0...4) == 0 ? .null : .text("held\(int(0...9))")
                        }
                        reshape.held.append([.integer(Int64(int(1...100))), .integer(Int64(int(0...80))), b, .integer(Int64(int(0...9)))])
                    }
                }
            } while !reshape.nocaseB && reshape.aTypes == nil && !reshape.notNullDefault && !reshape.partialUnique
                && !reshape.lowerUnique && reshape.held.isEmpty
            self.reshape = reshape
        }
        if int(0...7) == 0 { shadow = ["oid", "rowid", "_rowid_"][int(0...2)] }
        withOther = int(0...5) == 0
    }

    /// The value of the `shadow` column in a drawn source row (key, a, b, c).
    static func shadowValue(_ row: [Value]) -> Value {
        guard case .integer(let key) = row[0], case .integer(let a) = row[1] else { return .null }
        return key % 5 == 0 ? .null : .integer((key * 7 + a) % 60)
    }

    /// What `describe` prints of them in a script.
    var summary: String {
        var parts: [String] = []
        if let reshape {
            parts.append("reshaped target (nocase b: \(reshape.nocaseB), a types: \(reshape.aTypes.map { "\($0.source) -> \($0.target)" } ?? "same"), "
                + "e NOT NULL DEFAULT: \(reshape.notNullDefault), partial unique: \(reshape.partialUnique), lower(b) unique: \(reshape.lowerUnique))")
        }
        if let shadow { parts.append("real column \(shadow)") }
        if withOther { parts.append("table other") }
        return parts.isEmpty ? "none" : parts.joined(separator: ", ")
    }
}

extension Workload {
    /// The rowid as the harness's own SQL spells it: a spelling no real column shadows.
    var rowidSpelling: String { ["rowid", "oid", "_rowid_"].first { $0 != shapes.shadow }! }

    /// A statement of the extra shapes, or nil (drawn on the workload's generator only when the
    /// workload has the shape, so other workloads draw as before).
    mutating func shapeStatement() -> (kind: String, sql: String)? {
        let table = "t"
        if shapes.withOther && int(0...4) == 0 {
            // Never `*` over a NATURAL/USING join beside a rowid (Limitations.md), and `other` has
            // no column named like the rowid (an unqualified spelling over the join: Limitations.md).
            let n = int(0...60)
            return ("other-table-rowid", [
                "SELECT rowid FROM other, \(table)",
                "SELECT rowid, x FROM \(table), other WHERE other.x = \(table).c",
                "SELECT \(table).rowid, other.rowid FROM \(table) JOIN other ON other.x = \(table).a % 8 ORDER BY 1, 2",
                "SELECT oid FROM \(table) JOIN other USING (a)",
                "SELECT \(table).oid, other.oid, a FROM \(table) JOIN other USING (a) ORDER BY 1",
                "SELECT _rowid_, x FROM other WHERE x IN (SELECT c FROM \(table) WHERE a > \(n))",
                "SELECT other._rowid_, \(table)._rowid_, \(table).b FROM other LEFT JOIN \(table) ON \(table).c = other.x AND \(table).a < \(n) ORDER BY 1, 2",
                "SELECT count(*), max(other.rowid), max(\(table).oid) FROM \(table), other WHERE other.a = \(table).a",
                "UPDATE \(table) SET c = c + 1 WHERE a IN (SELECT a FROM other WHERE rowid < \(int(1...7))) RETURNING rowid, c",
                "DELETE FROM \(table) WHERE rowid IN (SELECT y.rowid FROM other JOIN \(table) AS y ON y.c = other.x) AND a > \(n) RETURNING oid, a",
                "INSERT INTO other SELECT c, rowid FROM \(table) WHERE a < \(int(0...20)) ORDER BY 2",  // (the order gives other its rowids)
                "UPDATE other SET a = (SELECT max(rowid) FROM \(table)) WHERE x = \(int(1...7)) RETURNING rowid, a",
            ].randomElement(using: &random)!)
        }
        if let shadow = shapes.shadow, int(0...4) == 0 {
            let n = int(0...60)
            var reads: [String] = [
                "SELECT \(shadow), rowid, oid, _rowid_, a FROM \(table) WHERE \(shadow) > \(n)",
                "SELECT \(table).\(shadow), \(rowidSpelling), a FROM \(table) WHERE a < \(n)",
                "SELECT max(\(shadow)), count(\(shadow)), total(oid), max(_rowid_), min(rowid) FROM \(table)",
                "UPDATE \(table) SET \(shadow) = \(shadow) + 1 WHERE a < \(n) RETURNING rowid, oid, _rowid_, \(shadow)",
                "INSERT INTO \(table)(a, \(shadow)) VALUES (\(int(0...80)), \(int(0...60)))",
                "DELETE FROM \(table) WHERE \(shadow) = \(n) RETURNING \(shadow), a",
                "SELECT x.\(shadow), y.a FROM \(table) AS x JOIN \(table) AS y ON y.\(shadow) = x.a ORDER BY 1, 2",
            ]
            if shapes.withOther { reads.append("SELECT \(shadow), a FROM \(table), other WHERE other.x = \(table).c") }
            return ("rowid-named-column", reads.randomElement(using: &random)!)
        }
        if let reshape = shapes.reshape, int(0...4) == 0 {
            // A column whose type affinity the target changed (source `a TEXT`, target `a INTEGER`)
            // compares as the finished column: `a = '30'` converts '30' (AffinityComparisons).
            let number = int(0...80)
            let literal = ["'\(number)'", "\(number)", "'\(number).0'", "' \(number)'"][int(0...3)]
            var choices: [(String, String)] = [
                ("reshaped-read", "SELECT \(key), a FROM \(table) WHERE a IN (\(literal), '\(int(0...80))') OR a BETWEEN '\(int(0...80))' AND \(literal) ORDER BY \(key)"),
                ("reshaped-write", "UPDATE \(table) SET c = c + 1 WHERE a = \(literal) OR \(literal) > a RETURNING \(key), c"),
                ("reshaped-read", "SELECT \(key), a, typeof(a), b FROM \(table) WHERE b = 'T\(int(0...40))' OR a = \(literal)"),
                ("reshaped-read", "SELECT count(*), count(DISTINCT b), sum(a), max(typeof(a)) FROM \(table) WHERE b > 'T\(int(0...40))'"),
                ("reshaped-read", "SELECT \(key), a FROM \(table) WHERE a < \(literal) ORDER BY \(key)"),
                ("reshaped-write", "UPDATE \(table) SET a = '\(int(0...80))' WHERE \(key) = \(int(1...70)) RETURNING \(key), a, typeof(a)"),
                ("reshaped-write", "DELETE FROM \(table) WHERE b = 'T\(int(0...40))' RETURNING \(key)"),
            ]
            if reshape.notNullDefault {
                choices += [("reshaped-default", "UPDATE \(table) SET e = e + 1 WHERE a < \(int(0...80)) RETURNING \(key), e"),
                            ("reshaped-default", "SELECT e, count(*) FROM \(table) GROUP BY e"),
                            ("reshaped-default", "INSERT INTO \(table)(a, b, e) VALUES (\(int(0...80)), NULL, NULL)")]
            }
            if reshape.partialUnique {
                choices += [("reshaped-partial", "UPDATE \(table) SET c = 9 WHERE b = \(text()) RETURNING \(key)"),
                            ("reshaped-partial", "SELECT \(key), b FROM \(table) INDEXED BY t_pre_partial WHERE b > 't\(int(0...4))' AND c > 5")]
            }
            return choices.randomElement(using: &random)!
        }
        return nil
    }
}
