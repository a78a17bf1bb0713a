extension ParserState {
    /// One command (`cmd` or `EXPLAIN cmd` in `parse.y`).
    mutating func parseCommand() throws -> Statement {
        let token = current
        guard token.kind == .identifier, let keyword = token.keyword else { throw syntaxError() }
        switch keyword {
        case .explain:
            advance()
            var queryPlan = false
            if accept(.query) {
                try expect(.plan)
                queryPlan = true
            }
            guard !at(.explain) else { throw syntaxError() }
            return .explain(queryPlan: queryPlan, try parseCommand())
        case .select, .values:
            return .select(try parseSelect(with: nil))
        case .with:
            let with = try parseWith()
            return try parseAfterWith(with)
        case .insert, .replace:
            return .insert(try parseInsert(with: nil))
        case .update:
            return .update(try parseUpdate(with: nil))
        case .delete:
            return .delete(try parseDelete(with: nil))
        case .create:
            return try parseCreate()
        case .drop:
            return try parseDrop()
        case .alter:
            return .alterTable(try parseAlterTable())
        case .begin, .commit, .end, .rollback, .savepoint, .release:
            return .transaction(try parseTransaction())
        case .attach:
            advance()
            _ = accept(.database)
            let file = try parseExpression()
            try expect(.as)
            let schema = try parseExpression()
            var key: Expression?
            if accept(.key) { key = try parseExpression() }
            return .attach(file: file, schema: schema, key: key)
        case .detach:
            advance()
            _ = accept(.database)
            return .detach(try parseExpression())
        case .pragma:
            return .pragma(try parsePragma())
        case .vacuum:
            advance()
            var schema: Identifier?
            if current.isName && !at(.into) { schema = try parseName() }
            var into: Expression?
            if accept(.into) { into = try parseExpression() }
            return .vacuum(schema: schema, into: into)
        case .analyze, .reindex:
            advance()
            var name: QualifiedName?
            if current.isName { name = try parseQualifiedName().0 }
            return keyword == .analyze ? .analyze(name) : .reindex(name)
        default:
            throw syntaxError()
        }
    }

    /// What follows a statement-level WITH clause.
    mutating func parseAfterWith(_ with: WithClause) throws -> Statement {
        switch current.keyword {
        case .select, .values: return .select(try parseSelect(with: with))
        case .insert, .replace: return .insert(try parseInsert(with: with))
        case .update: return .update(try parseUpdate(with: with))
        case .delete: return .delete(try parseDelete(with: with))
        default: throw syntaxError()
        }
    }

    /// `OR ROLLBACK|ABORT|FAIL|IGNORE|REPLACE`, if present.
    mutating func parseOrConflict() throws -> ConflictResolution? {
        guard accept(.or) else { return nil }
        return try parseResolution()
    }

    /// `ROLLBACK|ABORT|FAIL|IGNORE|REPLACE`
    mutating func parseResolution() throws -> ConflictResolution {
        let resolution: ConflictResolution
        switch current.keyword {
        case .rollback: resolution = .rollback
        case .abort: resolution = .abort
        case .fail: resolution = .fail
        case .ignore: resolution = .ignore
        case .replace: resolution = .replace
        default: throw syntaxError()
        }
        advance()
        return resolution
    }

    /// `ON CONFLICT resolution`, if present.
    mutating func parseOnConflict() throws -> ConflictResolution? {
        guard at(.on) && peek().is(.conflict) else { return nil }
        advance(); advance()
        return try parseResolution()
    }

    /// `xfullname`: `[schema.]name [AS alias]`, with the range of the name.
    mutating func parseTargetTable() throws -> (QualifiedName, Identifier?, Range<Int>) {
        let (name, range) = try parseQualifiedName()
        var alias: Identifier?
        if accept(.as) { alias = try parseName() }
        return (name, alias, range)
    }

    /// `INSERT [OR ...] | REPLACE INTO ...`
    mutating func parseInsert(with: WithClause?, inTrigger: Bool = false) throws -> InsertStatement {
        let verb: InsertStatement.Verb
        if accept(.replace) {
            verb = .replace
        } else {
            try expect(.insert)
            verb = .insert(try parseOrConflict())
        }
        try expect(.into)
        let (name, alias, range) = try parseTargetTable()
        var columns: [Identifier]?
        if at(.leftParen) && !startsSelect(peek()) { columns = try parseParenthesizedNames() }
        var statement = InsertStatement(with: with, verb: verb, table: name, alias: alias, columns: columns, source: .defaultValues,
                                        location: SourceLocation(range))
        if at(.default) && !inTrigger {
            advance()
            try expect(.values)
            if accept(.returning) { statement.returning = try parseResultColumns() }
            return statement
        }
        statement.source = .select(try parseSelect())
        // Upsert clauses and RETURNING.
        while true {
            if accept(.returning) {
                statement.returning = try parseResultColumns()
                break
            }
            guard at(.on) && peek().is(.conflict) else { break }
            advance(); advance()
            var upsert = UpsertClause(action: .nothing)
            if accept(.leftParen) {
                upsert.target = try parseOrderingTerms()
                try expect(.rightParen)
                if accept(.where) { upsert.targetWhere = try parseExpression() }
            }
            try expect(.do)
            if !accept(.nothing) {
                try expect(.update)
                try expect(.set)
                let assignments = try parseAssignments()
                var condition: Expression?
                if accept(.where) { condition = try parseExpression() }
                upsert.action = .update(assignments, where: condition)
            }
            statement.upserts.append(upsert)
            if upsert.target == nil {
                // A clause without a target must be the last one.
                if accept(.returning) { statement.returning = try parseResultColumns() }
                break
            }
        }
        return statement
    }

    /// `col = expr, (a, b) = expr, ...`
    mutating func parseAssignments() throws -> [Assignment] {
        var assignments: [Assignment] = []
        repeat {
            if at(.leftParen) {
                let columns = try parseParenthesizedNames()
                try expect(.equal)
                assignments.append(Assignment(columns: columns, parenthesized: true, value: try parseExpression()))
            } else {
                let column = try parseName()
                try expect(.equal)
                assignments.append(Assignment(columns: [column], parenthesized: false, value: try parseExpression()))
            }
        } while accept(.comma)
        return assignments
    }

    /// `WHERE expr [RETURNING ...] | RETURNING ...`, then `ORDER BY` and `LIMIT`.
    mutating func parseWhereReturningOrderLimit() throws -> (Expression?, [ResultColumn]?, [OrderingTerm], LimitClause?) {
        var condition: Expression?
        var returning: [ResultColumn]?
        var orderBy: [OrderingTerm] = []
        var limit: LimitClause?
        if accept(.where) { condition = try parseExpression() }
        if accept(.returning) { returning = try parseResultColumns() }
        if at(.order) {
            advance()
            try expect(.by)
            orderBy = try parseOrderingTerms()
        }
        if at(.limit) { limit = try parseLimit() }
        return (condition, returning, orderBy, limit)
    }

    /// `UPDATE [OR ...] table [AS alias] [INDEXED ...] SET ... [FROM ...] [WHERE ...] [RETURNING ...] [ORDER BY ...] [LIMIT ...]`
    mutating func parseUpdate(with: WithClause?, inTrigger: Bool = false) throws -> UpdateStatement {
        try expect(.update)
        let orConflict = try parseOrConflict()
        let (name, alias, range) = try parseTargetTable()
        let (hint, hintLocation) = try parseIndexHint()
        let table = TableReference(name, alias: alias, indexHint: hint, location: SourceLocation(range), indexHintLocation: hintLocation)
        try expect(.set)
        var statement = UpdateStatement(with: with, orConflict: orConflict, table: table, assignments: try parseAssignments())
        if accept(.from) { statement.from = try parseJoinClause() }
        if inTrigger {
            if accept(.where) { statement.where = try parseExpression() }
        } else {
            (statement.where, statement.returning, statement.orderBy, statement.limit) = try parseWhereReturningOrderLimit()
        }
        return statement
    }

    /// `DELETE FROM table [AS alias] [INDEXED ...] [WHERE ...] [RETURNING ...] [ORDER BY ...] [LIMIT ...]`
    mutating func parseDelete(with: WithClause?, inTrigger: Bool = false) throws -> DeleteStatement {
        try expect(.delete)
        try expect(.from)
        let (name, alias, range) = try parseTargetTable()
        let (hint, hintLocation) = try parseIndexHint()
        let table = TableReference(name, alias: alias, indexHint: hint, location: SourceLocation(range), indexHintLocation: hintLocation)
        var statement = DeleteStatement(with: with, table: table)
        if inTrigger {
            if accept(.where) { statement.where = try parseExpression() }
            return statement
        }
        (statement.where, statement.returning, statement.orderBy, statement.limit) = try parseWhereReturningOrderLimit()
        return statement
    }

    /// BEGIN, COMMIT/END, ROLLBACK, SAVEPOINT, RELEASE.
    mutating func parseTransaction() throws -> TransactionStatement {
        let keyword = current.keyword!
        advance()
        func transactionName(_ state: inout ParserState) throws -> Identifier? {
            guard state.accept(.transaction) else { return nil }
            if state.current.isName { return try state.parseName() }
            return nil
        }
        switch keyword {
        case .begin:
            var mode: TransactionStatement.Mode?
            if accept(.deferred) { mode = .deferred } else if accept(.immediate) { mode = .immediate } else if accept(.exclusive) { mode = .exclusive }
            return .begin(mode, name: try transactionName(&self))
        case .commit, .end:
            return .commit(name: try transactionName(&self))
        case .rollback:
            let name = try transactionName(&self)
            var savepoint: Identifier?
            if accept(.to) {
                _ = accept(.savepoint)
                savepoint = try parseName()
            }
            return .rollback(name: name, toSavepoint: savepoint)
        case .savepoint:
            return .savepoint(try parseName())
        default:
            _ = accept(.savepoint)
            return .release(try parseName())
        }
    }

    /// `PRAGMA [schema.]name [= value | (value)]`
    mutating func parsePragma() throws -> PragmaStatement {
        try expect(.pragma)
        let (name, _) = try parseQualifiedName()
        var statement = PragmaStatement(name: name)
        let form: PragmaStatement.ValueForm
        if accept(.equal) { form = .equals } else if accept(.leftParen) { form = .call } else { return statement }
        let value: String
        if at(.minus) || at(.plus) || at(.integer) || at(.float) {
            value = try parseSignedNumber()
        } else if current.isName || at(.on) || at(.delete) || at(.default) {
            value = source.string(current.range)
            advance()
        } else {
            throw syntaxError()
        }
        if form == .call { try expect(.rightParen) }
        statement.value = value
        statement.valueForm = form
        return statement
    }
}
