// The keyword table and lookup below were produced from SQLite's list of 147 keywords; the lookup packs the
// upper-cased bytes into 64-bit words and switches on them, so matching a word allocates nothing.

/// An SQLite keyword. Keywords are matched case-insensitively; quoted words are never keywords.
package enum Keyword: UInt8, Sendable, Hashable, CaseIterable {
    /// `ABORT`
    case abort
    /// `ACTION`
    case action
    /// `ADD`
    case add
    /// `AFTER`
    case after
    /// `ALL`
    case all
    /// `ALTER`
    case alter
    /// `ALWAYS`
    case always
    /// `ANALYZE`
    case analyze
    /// `AND`
    case and
    /// `AS`
    case `as`
    /// `ASC`
    case asc
    /// `ATTACH`
    case attach
    /// `AUTOINCREMENT`
    case autoincrement
    /// `BEFORE`
    case before
    /// `BEGIN`
    case begin
    /// `BETWEEN`
    case between
    /// `BY`
    case by
    /// `CASCADE`
    case cascade
    /// `CASE`
    case `case`
    /// `CAST`
    case cast
    /// `CHECK`
    case check
    /// `COLLATE`
    case collate
    /// `COLUMN`
    case column
    /// `COMMIT`
    case commit
    /// `CONFLICT`
    case conflict
    /// `CONSTRAINT`
    case constraint
    /// `CREATE`
    case create
    /// `CROSS`
    case cross
    /// `CURRENT`
    case current
    /// `CURRENT_DATE`
    case currentDate
    /// `CURRENT_TIME`
    case currentTime
    /// `CURRENT_TIMESTAMP`
    case currentTimestamp
    /// `DATABASE`
    case database
    /// `DEFAULT`
    case `default`
    /// `DEFERRABLE`
    case deferrable
    /// `DEFERRED`
    case deferred
    /// `DELETE`
    case delete
    /// `DESC`
    case desc
    /// `DETACH`
    case detach
    /// `DISTINCT`
    case distinct
    /// `DO`
    case `do`
    /// `DROP`
    case drop
    /// `EACH`
    case `each`
    /// `ELSE`
    case `else`
    /// `END`
    case end
    /// `ESCAPE`
    case escape
    /// `EXCEPT`
    case except
    /// `EXCLUDE`
    case exclude
    /// `EXCLUSIVE`
    case exclusive
    /// `EXISTS`
    case exists
    /// `EXPLAIN`
    case explain
    /// `FAIL`
    case fail
    /// `FILTER`
    case filter
    /// `FIRST`
    case first
    /// `FOLLOWING`
    case following
    /// `FOR`
    case `for`
    /// `FOREIGN`
    case foreign
    /// `FROM`
    case from
    /// `FULL`
    case full
    /// `GENERATED`
    case generated
    /// `GLOB`
    case glob
    /// `GROUP`
    case group
    /// `GROUPS`
    case groups
    /// `HAVING`
    case having
    /// `IF`
    case `if`
    /// `IGNORE`
    case ignore
    /// `IMMEDIATE`
    case immediate
    /// `IN`
    case `in`
    /// `INDEX`
    case index
    /// `INDEXED`
    case indexed
    /// `INITIALLY`
    case initially
    /// `INNER`
    case inner
    /// `INSERT`
    case insert
    /// `INSTEAD`
    case instead
    /// `INTERSECT`
    case intersect
    /// `INTO`
    case into
    /// `IS`
    case `is`
    /// `ISNULL`
    case isnull
    /// `JOIN`
    case join
    /// `KEY`
    case key
    /// `LAST`
    case last
    /// `LEFT`
    case left
    /// `LIKE`
    case like
    /// `LIMIT`
    case limit
    /// `MATCH`
    case match
    /// `MATERIALIZED`
    case materialized
    /// `NATURAL`
    case natural
    /// `NO`
    case no
    /// `NOT`
    case not
    /// `NOTHING`
    case nothing
    /// `NOTNULL`
    case notnull
    /// `NULL`
    case null
    /// `NULLS`
    case nulls
    /// `OF`
    case of
    /// `OFFSET`
    case offset
    /// `ON`
    case on
    /// `OR`
    case or
    /// `ORDER`
    case order
    /// `OTHERS`
    case others
    /// `OUTER`
    case outer
    /// `OVER`
    case over
    /// `PARTITION`
    case partition
    /// `PLAN`
    case plan
    /// `PRAGMA`
    case pragma
    /// `PRECEDING`
    case preceding
    /// `PRIMARY`
    case primary
    /// `QUERY`
    case query
    /// `RAISE`
    case raise
    /// `RANGE`
    case range
    /// `RECURSIVE`
    case recursive
    /// `REFERENCES`
    case references
    /// `REGEXP`
    case regexp
    /// `REINDEX`
    case reindex
    /// `RELEASE`
    case release
    /// `RENAME`
    case rename
    /// `REPLACE`
    case replace
    /// `RESTRICT`
    case restrict
    /// `RETURNING`
    case returning
    /// `RIGHT`
    case right
    /// `ROLLBACK`
    case rollback
    /// `ROW`
    case row
    /// `ROWS`
    case rows
    /// `SAVEPOINT`
    case savepoint
    /// `SELECT`
    case select
    /// `SET`
    case set
    /// `TABLE`
    case table
    /// `TEMP`
    case temp
    /// `TEMPORARY`
    case temporary
    /// `THEN`
    case `then`
    /// `TIES`
    case ties
    /// `TO`
    case to
    /// `TRANSACTION`
    case transaction
    /// `TRIGGER`
    case trigger
    /// `UNBOUNDED`
    case unbounded
    /// `UNION`
    case union
    /// `UNIQUE`
    case unique
    /// `UPDATE`
    case update
    /// `USING`
    case using
    /// `VACUUM`
    case vacuum
    /// `VALUES`
    case values
    /// `VIEW`
    case view
    /// `VIRTUAL`
    case virtual
    /// `WHEN`
    case when
    /// `WHERE`
    case `where`
    /// `WINDOW`
    case window
    /// `WITH`
    case with
    /// `WITHOUT`
    case without

    /// The keyword as SQLite spells it (upper case).
    package var text: String {
        switch self {
        case .abort: return "ABORT"
        case .action: return "ACTION"
        case .add: return "ADD"
        case .after: return "AFTER"
        case .all: return "ALL"
        case .alter: return "ALTER"
        case .always: return "ALWAYS"
        case .analyze: return "ANALYZE"
        case .and: return "AND"
        case .as: return "AS"
        case .asc: return "ASC"
        case .attach: return "ATTACH"
        case .autoincrement: return "AUTOINCREMENT"
        case .before: return "BEFORE"
        case .begin: return "BEGIN"
        case .between: return "BETWEEN"
        case .by: return "BY"
        case .cascade: return "CASCADE"
        case .case: return "CASE"
        case .cast: return "CAST"
        case .check: return "CHECK"
        case .collate: return "COLLATE"
        case .column: return "COLUMN"
        case .commit: return "COMMIT"
        case .conflict: return "CONFLICT"
        case .constraint: return "CONSTRAINT"
        case .create: return "CREATE"
        case .cross: return "CROSS"
        case .current: return "CURRENT"
        case .currentDate: return "CURRENT_DATE"
        case .currentTime: return "CURRENT_TIME"
        case .currentTimestamp: return "CURRENT_TIMESTAMP"
        case .database: return "DATABASE"
        case .default: return "DEFAULT"
        case .deferrable: return "DEFERRABLE"
        case .deferred: return "DEFERRED"
        case .delete: return "DELETE"
        case .desc: return "DESC"
        case .detach: return "DETACH"
        case .distinct: return "DISTINCT"
        case .do: return "DO"
        case .drop: return "DROP"
        case .each: return "EACH"
        case .else: return "ELSE"
        case .end: return "END"
        case .escape: return "ESCAPE"
        case .except: return "EXCEPT"
        case .exclude: return "EXCLUDE"
        case .exclusive: return "EXCLUSIVE"
        case .exists: return "EXISTS"
        case .explain: return "EXPLAIN"
        case .fail: return "FAIL"
        case .filter: return "FILTER"
        case .first: return "FIRST"
        case .following: return "FOLLOWING"
        case .for: return "FOR"
        case .foreign: return "FOREIGN"
        case .from: return "FROM"
        case .full: return "FULL"
        case .generated: return "GENERATED"
        case .glob: return "GLOB"
        case .group: return "GROUP"
        case .groups: return "GROUPS"
        case .having: return "HAVING"
        case .if: return "IF"
        case .ignore: return "IGNORE"
        case .immediate: return "IMMEDIATE"
        case .in: return "IN"
        case .index: return "INDEX"
        case .indexed: return "INDEXED"
        case .initially: return "INITIALLY"
        case .inner: return "INNER"
        case .insert: return "INSERT"
        case .instead: return "INSTEAD"
        case .intersect: return "INTERSECT"
        case .into: return "INTO"
        case .is: return "IS"
        case .isnull: return "ISNULL"
        case .join: return "JOIN"
        case .key: return "KEY"
        case .last: return "LAST"
        case .left: return "LEFT"
        case .like: return "LIKE"
        case .limit: return "LIMIT"
        case .match: return "MATCH"
        case .materialized: return "MATERIALIZED"
        case .natural: return "NATURAL"
        case .no: return "NO"
        case .not: return "NOT"
        case .nothing: return "NOTHING"
        case .notnull: return "NOTNULL"
        case .null: return "NULL"
        case .nulls: return "NULLS"
        case .of: return "OF"
        case .offset: return "OFFSET"
        case .on: return "ON"
        case .or: return "OR"
        case .order: return "ORDER"
        case .others: return "OTHERS"
        case .outer: return "OUTER"
        case .over: return "OVER"
        case .partition: return "PARTITION"
        case .plan: return "PLAN"
        case .pragma: return "PRAGMA"
        case .preceding: return "PRECEDING"
        case .primary: return "PRIMARY"
        case .query: return "QUERY"
        case .raise: return "RAISE"
        case .range: return "RANGE"
        case .recursive: return "RECURSIVE"
        case .references: return "REFERENCES"
        case .regexp: return "REGEXP"
        case .reindex: return "REINDEX"
        case .release: return "RELEASE"
        case .rename: return "RENAME"
        case .replace: return "REPLACE"
        case .restrict: return "RESTRICT"
        case .returning: return "RETURNING"
        case .right: return "RIGHT"
        case .rollback: return "ROLLBACK"
        case .row: return "ROW"
        case .rows: return "ROWS"
        case .savepoint: return "SAVEPOINT"
        case .select: return "SELECT"
        case .set: return "SET"
        case .table: return "TABLE"
        case .temp: return "TEMP"
        case .temporary: return "TEMPORARY"
        case .then: return "THEN"
        case .ties: return "TIES"
        case .to: return "TO"
        case .transaction: return "TRANSACTION"
        case .trigger: return "TRIGGER"
        case .unbounded: return "UNBOUNDED"
        case .union: return "UNION"
        case .unique: return "UNIQUE"
        case .update: return "UPDATE"
        case .using: return "USING"
        case .vacuum: return "VACUUM"
        case .values: return "VALUES"
        case .view: return "VIEW"
        case .virtual: return "VIRTUAL"
        case .when: return "WHEN"
        case .where: return "WHERE"
        case .window: return "WINDOW"
        case .with: return "WITH"
        case .without: return "WITHOUT"
        }
    }

    /// Whether SQLite lets this keyword stand for an identifier (its `%fallback ID` list, plus the
    /// contextual keywords `WINDOW`, `OVER` and `FILTER`, which the tokenizer only marks in context).
    package var fallsBackToIdentifier: Bool {
        switch self {
        case .abort, .action, .after, .always, .analyze, .asc, .attach, .before, .begin, .by, .cascade, .cast, .column, .conflict, .current, .currentDate, .currentTime, .currentTimestamp, .database, .deferred, .desc, .detach, .do, .each, .end, .exclude, .exclusive, .explain, .fail, .first, .following, .for, .generated, .glob, .groups, .if, .ignore, .immediate, .initially, .instead, .key, .last, .like, .match, .materialized, .no, .nulls, .of, .offset, .others, .partition, .plan, .pragma, .preceding, .query, .raise, .range, .recursive, .regexp, .reindex, .release, .rename, .replace, .restrict, .rollback, .row, .rows, .savepoint, .temp, .temporary, .ties, .trigger, .unbounded, .vacuum, .view, .virtual, .with, .without:
            return true
        default:
            return false
        }
    }

    /// Whether this is one of the join keywords (`NATURAL LEFT RIGHT FULL OUTER INNER CROSS`), which may
    /// name a table or column but not stand as a bare alias.
    package var isJoinKeyword: Bool {
        switch self {
        case .natural, .left, .right, .full, .outer, .inner, .cross: return true
        default: return false
        }
    }

    /// Looks up the keyword spelled by `count` bytes at `start` (ASCII, case-insensitive).
    @inline(__always)
    static func lookup(_ bytes: UnsafeBufferPointer<UInt8>, start: Int, count: Int) -> Keyword? {
        guard count >= 2 && count <= 17 else { return nil }
        var w0: UInt64 = 0, w1: UInt64 = 0, w2: UInt64 = 0
        for i in 0..<count {
            var b = bytes[start &+ i]
            if b >= 0x61 && b <= 0x7A { b &-= 0x20 } else if !((b >= 0x41 && b <= 0x5A) || b == 0x5F) { return nil }
            let v = UInt64(b) << UInt64((i & 7) &* 8)
            if i < 8 { w0 |= v } else if i < 16 { w1 |= v } else { w2 |= v }
        }
        switch count {
        case 2:
            switch w0 {
            case 0x4649: return .if
            case 0x464F: return .of
            case 0x4E49: return .in
            case 0x4E4F: return .on
            case 0x4F44: return .do
            case 0x4F4E: return .no
            case 0x4F54: return .to
            case 0x524F: return .or
            case 0x5341: return .as
            case 0x5349: return .is
            case 0x5942: return .by
            default: return nil
            }
        case 3:
            switch w0 {
            case 0x435341: return .asc
            case 0x444441: return .add
            case 0x444E41: return .and
            case 0x444E45: return .end
            case 0x4C4C41: return .all
            case 0x524F46: return .for
            case 0x544553: return .set
            case 0x544F4E: return .not
            case 0x574F52: return .row
            case 0x59454B: return .key
            default: return nil
            }
        case 4:
            switch w0 {
            case 0x424F4C47: return .glob
            case 0x43534544: return .desc
            case 0x454B494C: return .like
            case 0x45534143: return .case
            case 0x45534C45: return .else
            case 0x48434145: return .each
            case 0x48544957: return .with
            case 0x4C494146: return .fail
            case 0x4C4C5546: return .full
            case 0x4C4C554E: return .null
            case 0x4D4F5246: return .from
            case 0x4E414C50: return .plan
            case 0x4E454854: return .then
            case 0x4E454857: return .when
            case 0x4E494F4A: return .join
            case 0x4F544E49: return .into
            case 0x504D4554: return .temp
            case 0x504F5244: return .drop
            case 0x5245564F: return .over
            case 0x53454954: return .ties
            case 0x53574F52: return .rows
            case 0x5446454C: return .left
            case 0x54534143: return .cast
            case 0x5453414C: return .last
            case 0x57454956: return .view
            default: return nil
            }
        case 5:
            switch w0 {
            case 0x45474E4152: return .range
            case 0x454C424154: return .table
            case 0x4552454857: return .where
            case 0x4553494152: return .raise
            case 0x474E495355: return .using
            case 0x484354414D: return .match
            case 0x4B43454843: return .check
            case 0x4E49474542: return .begin
            case 0x4E4F494E55: return .union
            case 0x50554F5247: return .group
            case 0x524544524F: return .order
            case 0x52454E4E49: return .inner
            case 0x5245544641: return .after
            case 0x5245544C41: return .alter
            case 0x524554554F: return .outer
            case 0x534C4C554E: return .nulls
            case 0x53534F5243: return .cross
            case 0x5448474952: return .right
            case 0x54494D494C: return .limit
            case 0x54524F4241: return .abort
            case 0x5453524946: return .first
            case 0x5845444E49: return .index
            case 0x5952455551: return .query
            default: return nil
            }
        case 6:
            switch w0 {
            case 0x414D47415250: return .pragma
            case 0x454D414E4552: return .rename
            case 0x455041435345: return .escape
            case 0x45524F464542: return .before
            case 0x45524F4E4749: return .ignore
            case 0x455441445055: return .update
            case 0x455441455243: return .create
            case 0x4554454C4544: return .delete
            case 0x455551494E55: return .unique
            case 0x474E49564148: return .having
            case 0x484341544544: return .detach
            case 0x484341545441: return .attach
            case 0x4C4C554E5349: return .isnull
            case 0x4D5555434156: return .vacuum
            case 0x4E4D554C4F43: return .column
            case 0x4E4F49544341: return .action
            case 0x505845474552: return .regexp
            case 0x5245544C4946: return .filter
            case 0x5345554C4156: return .values
            case 0x5350554F5247: return .groups
            case 0x53524548544F: return .others
            case 0x535453495845: return .exists
            case 0x535941574C41: return .always
            case 0x5443454C4553: return .select
            case 0x54455346464F: return .offset
            case 0x54494D4D4F43: return .commit
            case 0x545045435845: return .except
            case 0x545245534E49: return .insert
            case 0x574F444E4957: return .window
            default: return nil
            }
        case 7:
            switch w0 {
            case 0x44414554534E49: return .instead
            case 0x44455845444E49: return .indexed
            case 0x4543414C504552: return .replace
            case 0x45444143534143: return .cascade
            case 0x4544554C435845: return .exclude
            case 0x455341454C4552: return .release
            case 0x4554414C4C4F43: return .collate
            case 0x455A594C414E41: return .analyze
            case 0x474E4948544F4E: return .nothing
            case 0x4C41525554414E: return .natural
            case 0x4C415554524956: return .virtual
            case 0x4C4C554E544F4E: return .notnull
            case 0x4E454557544542: return .between
            case 0x4E474945524F46: return .foreign
            case 0x4E49414C505845: return .explain
            case 0x52454747495254: return .trigger
            case 0x544C5541464544: return .default
            case 0x544E4552525543: return .current
            case 0x54554F48544957: return .without
            case 0x5845444E494552: return .reindex
            case 0x5952414D495250: return .primary
            default: return nil
            }
        case 8:
            switch w0 {
            case 0x4445525245464544: return .deferred
            case 0x4553414241544144: return .database
            case 0x4B4341424C4C4F52: return .rollback
            case 0x5443494C464E4F43: return .conflict
            case 0x5443495254534552: return .restrict
            case 0x54434E4954534944: return .distinct
            default: return nil
            }
        case 9:
            switch w0 {
            case 0x4345535245544E49:
                if w1 == 0x54 && w2 == 0x0 { return .intersect }
                return nil
            case 0x45444E554F424E55:
                if w1 == 0x44 && w2 == 0x0 { return .unbounded }
                return nil
            case 0x45544152454E4547:
                if w1 == 0x44 && w2 == 0x0 { return .generated }
                return nil
            case 0x4C4C414954494E49:
                if w1 == 0x59 && w2 == 0x0 { return .initially }
                return nil
            case 0x4E49444543455250:
                if w1 == 0x47 && w2 == 0x0 { return .preceding }
                return nil
            case 0x4E494E5255544552:
                if w1 == 0x47 && w2 == 0x0 { return .returning }
                return nil
            case 0x4E494F5045564153:
                if w1 == 0x54 && w2 == 0x0 { return .savepoint }
                return nil
            case 0x4E49574F4C4C4F46:
                if w1 == 0x47 && w2 == 0x0 { return .following }
                return nil
            case 0x4F49544954524150:
                if w1 == 0x4E && w2 == 0x0 { return .partition }
                return nil
            case 0x5241524F504D4554:
                if w1 == 0x59 && w2 == 0x0 { return .temporary }
                return nil
            case 0x54414944454D4D49:
                if w1 == 0x45 && w2 == 0x0 { return .immediate }
                return nil
            case 0x5649535255434552:
                if w1 == 0x45 && w2 == 0x0 { return .recursive }
                return nil
            case 0x564953554C435845:
                if w1 == 0x45 && w2 == 0x0 { return .exclusive }
                return nil
            default: return nil
            }
        case 10:
            switch w0 {
            case 0x4241525245464544:
                if w1 == 0x454C && w2 == 0x0 { return .deferrable }
                return nil
            case 0x434E455245464552:
                if w1 == 0x5345 && w2 == 0x0 { return .references }
                return nil
            case 0x49415254534E4F43:
                if w1 == 0x544E && w2 == 0x0 { return .constraint }
                return nil
            default: return nil
            }
        case 11:
            switch w0 {
            case 0x544341534E415254:
                if w1 == 0x4E4F49 && w2 == 0x0 { return .transaction }
                return nil
            default: return nil
            }
        case 12:
            switch w0 {
            case 0x4C4149524554414D:
                if w1 == 0x44455A49 && w2 == 0x0 { return .materialized }
                return nil
            case 0x5F544E4552525543:
                if w1 == 0x45544144 && w2 == 0x0 { return .currentDate }
                if w1 == 0x454D4954 && w2 == 0x0 { return .currentTime }
                return nil
            default: return nil
            }
        case 13:
            switch w0 {
            case 0x52434E494F545541:
                if w1 == 0x544E454D45 && w2 == 0x0 { return .autoincrement }
                return nil
            default: return nil
            }
        case 17:
            switch w0 {
            case 0x5F544E4552525543:
                if w1 == 0x4D415453454D4954 && w2 == 0x50 { return .currentTimestamp }
                return nil
            default: return nil
            }
        default: return nil
        }
    }
}
