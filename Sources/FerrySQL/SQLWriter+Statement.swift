extension SQLWriter {
    mutating func statement(_ statement: Statement) {
        switch statement {
        case .select(let s): select(s)
        case .insert(let s): insert(s)
        case .update(let s): update(s)
        case .delete(let s): delete(s)
        case .createTable(let s): createTable(s)
        case .createIndex(let s): createIndex(s)
        case .createView(let s):
            output += s.temporary ? "CREATE TEMP VIEW " : "CREATE VIEW "
            if s.ifNotExists { output += "IF NOT EXISTS " }
            qualifiedName(s.name)
            if let columns = s.columns {
                output += " "
                nameList(columns)
            }
            output += " AS "
            select(s.select)
        case .createTrigger(let s): createTrigger(s)
        case .createVirtualTable(let s):
            output += "CREATE VIRTUAL TABLE "
            if s.ifNotExists { output += "IF NOT EXISTS " }
            qualifiedName(s.name)
            output += " USING "
            identifier(s.module)
            if let arguments = s.arguments {
                output += "("
                output += arguments.joined(separator: ", ")
                output += ")"
            }
        case .alterTable(let s):
            output += "ALTER TABLE "
            qualifiedName(s.table)
            switch s.action {
            case .renameTable(let name):
                output += " RENAME TO "
                identifier(name)
            case .renameColumn(let old, let new):
                output += " RENAME COLUMN "
                identifier(old)
                output += " TO "
                identifier(new)
            case .addColumn(let column):
                output += " ADD COLUMN "
                columnDefinition(column)
            case .dropColumn(let name):
                output += " DROP COLUMN "
                identifier(name)
            }
        case .drop(let s):
            output += "DROP " + s.kind.text + " "
            if s.ifExists { output += "IF EXISTS " }
            qualifiedName(s.name)
        case .explain(let queryPlan, let inner):
            output += queryPlan ? "EXPLAIN QUERY PLAN " : "EXPLAIN "
            self.statement(inner)
        case .transaction(let s): transaction(s)
        case .attach(let file, let schema, let key):
            output += "ATTACH "
            expression(file)
            output += " AS "
            expression(schema)
            if let key {
                output += " KEY "
                expression(key)
            }
        case .detach(let schema):
            output += "DETACH "
            expression(schema)
        case .pragma(let s):
            output += "PRAGMA "
            qualifiedName(s.name)
            if let value = s.value {
                if s.valueForm == .call { output += "(" + value + ")" } else { output += " = " + value }
            }
        case .vacuum(let schema, let into):
            output += "VACUUM"
            if let schema {
                output += " "
                identifier(schema)
            }
            if let into {
                output += " INTO "
                expression(into)
            }
        case .analyze(let name):
            output += "ANALYZE"
            if let name {
                output += " "
                qualifiedName(name)
            }
        case .reindex(let name):
            output += "REINDEX"
            if let name {
                output += " "
                qualifiedName(name)
            }
        }
    }

    mutating func transaction(_ s: TransactionStatement) {
        switch s {
        case .begin(let mode, let name):
            output += "BEGIN"
            switch mode {
            case .deferred: output += " DEFERRED"
            case .immediate: output += " IMMEDIATE"
            case .exclusive: output += " EXCLUSIVE"
            case nil: break
            }
            transactionName(name)
        case .commit(let name):
            output += "COMMIT"
            transactionName(name)
        case .rollback(let name, let savepoint):
            output += "ROLLBACK"
            transactionName(name)
            if let savepoint {
                output += " TO SAVEPOINT "
                identifier(savepoint)
            }
        case .savepoint(let name):
            output += "SAVEPOINT "
            identifier(name)
        case .release(let name):
            output += "RELEASE SAVEPOINT "
            identifier(name)
        }
    }

    mutating func transactionName(_ name: Identifier?) {
        guard let name else { return }
        output += " TRANSACTION "
        identifier(name)
    }

    // MARK: Queries

    mutating func with(_ with: WithClause) {
        output += with.recursive ? "WITH RECURSIVE " : "WITH "
        list(with.tables) { writer, cte in
            writer.identifier(cte.name)
            if let columns = cte.columns {
                writer.output += " "
                writer.nameList(columns)
            }
            writer.output += " AS "
            switch cte.materialization {
            case .materialized: writer.output += "MATERIALIZED "
            case .notMaterialized: writer.output += "NOT MATERIALIZED "
            case nil: break
            }
            writer.output += "("
            writer.select(cte.select)
            writer.output += ")"
        }
        output += " "
    }

    mutating func select(_ s: SelectStatement) {
        if let w = s.with { with(w) }
        selectCore(s.first)
        for compound in s.compounds {
            word(compound.op.text)
            output += " "
            selectCore(compound.core)
        }
        if !s.orderBy.isEmpty {
            word("ORDER BY ")
            orderingTerms(s.orderBy)
        }
        if let limit = s.limit { self.limit(limit) }
    }

    mutating func limit(_ limit: LimitClause) {
        word("LIMIT ")
        if limit.commaForm, let offset = limit.offset {
            expression(offset)
            output += ", "
            expression(limit.limit)
        } else {
            expression(limit.limit)
            if let offset = limit.offset {
                word("OFFSET ")
                expression(offset)
            }
        }
    }

    mutating func selectCore(_ core: SelectCore) {
        switch core {
        case .values(let rows):
            output += "VALUES "
            list(rows) { writer, row in
                writer.output += "("
                writer.list(row) { $0.expression($1) }
                writer.output += ")"
            }
        case .select(let c):
            output += "SELECT "
            switch c.quantifier {
            case .distinct: output += "DISTINCT "
            case .all: output += "ALL "
            case nil: break
            }
            resultColumns(c.columns)
            if let from = c.from {
                word("FROM ")
                joinClause(from)
            }
            if let condition = c.where {
                word("WHERE ")
                expression(condition)
            }
            if !c.groupBy.isEmpty {
                word("GROUP BY ")
                list(c.groupBy) { $0.expression($1) }
            }
            if let having = c.having {
                word("HAVING ")
                expression(having)
            }
            if !c.windows.isEmpty {
                word("WINDOW ")
                list(c.windows) { writer, window in
                    writer.identifier(window.name)
                    writer.output += " AS ("
                    writer.windowDefinition(window.definition)
                    writer.output += ")"
                }
            }
        }
    }

    mutating func resultColumns(_ columns: [ResultColumn]) {
        list(columns) { writer, column in
            switch column {
            case .all: writer.output += "*"
            case .allColumns(let table):
                writer.identifier(table)
                writer.output += ".*"
            case .expression(let e, let alias):
                writer.expression(e)
                if let alias {
                    writer.output += " AS "
                    writer.identifier(alias)
                }
            }
        }
    }

    mutating func alias(_ alias: Identifier?) {
        guard let alias else { return }
        output += " AS "
        identifier(alias)
    }

    mutating func joinClause(_ clause: JoinClause) {
        tableOrSubquery(clause.first)
        for join in clause.joins {
            let op = join.op
            if op.kind == .comma {
                output += ","

            } else {
                if op.natural { output += " NATURAL" }
                switch op.kind {
                case .comma, .plain: break
                case .inner: output += " INNER"
                case .cross: output += " CROSS"
                case .left: output += " LEFT"
                case .leftOuter: output += " LEFT OUTER"
                case .right: output += " RIGHT"
                case .rightOuter: output += " RIGHT OUTER"
                case .full: output += " FULL"
                case .fullOuter: output += " FULL OUTER"
                }
                output += " JOIN"
            }
            output += " "
            tableOrSubquery(join.item)
            switch join.constraint {
            case .on(let condition):
                word("ON ")
                expression(condition)
            case .using(let names):
                word("USING ")
                nameList(names)
            case nil:
                break
            }
        }
    }

    mutating func tableOrSubquery(_ item: TableOrSubquery) {
        switch item {
        case .table(let reference):
            tableReference(reference)
        case .tableFunction(let function):
            qualifiedName(function.name)
            output += "("
            list(function.arguments) { $0.expression($1) }
            output += ")"
            alias(function.alias)
        case .subquery(let select, let alias):
            output += "("
            self.select(select)
            output += ")"
            self.alias(alias)
        case .join(let clause, let alias):
            output += "("
            joinClause(clause)
            output += ")"
            self.alias(alias)
        }
    }

    mutating func tableReference(_ reference: TableReference) {
        qualifiedName(reference.name)
        alias(reference.alias)
        indexHint(reference.indexHint)
    }

    mutating func indexHint(_ hint: IndexHint?) {
        switch hint {
        case .indexedBy(let name):
            output += " INDEXED BY "
            identifier(name)
        case .notIndexed:
            output += " NOT INDEXED"
        case nil:
            break
        }
    }

    // MARK: Data changes

    mutating func insert(_ s: InsertStatement) {
        if let w = s.with { with(w) }
        switch s.verb {
        case .replace: output += "REPLACE"
        case .insert(let resolution):
            output += "INSERT"
            if let resolution { output += " OR " + resolution.text }
        }
        output += " INTO "
        qualifiedName(s.table)
        alias(s.alias)
        if let columns = s.columns {
            output += " "
            nameList(columns)
        }
        switch s.source {
        case .defaultValues:
            output += " DEFAULT VALUES"
        case .select(let select):
            output += " "
            self.select(select)
        }
        for upsert in s.upserts {
            output += " ON CONFLICT"
            if let target = upsert.target {
                output += " ("
                orderingTerms(target)
                output += ")"
                if let condition = upsert.targetWhere {
                    word("WHERE ")
                    expression(condition)
                }
            }
            switch upsert.action {
            case .nothing:
                output += " DO NOTHING"
            case .update(let assignments, let condition):
                output += " DO UPDATE SET "
                self.assignments(assignments)
                if let condition {
                    word("WHERE ")
                    expression(condition)
                }
            }
        }
        returning(s.returning)
    }

    mutating func returning(_ columns: [ResultColumn]?) {
        guard let columns else { return }
        word("RETURNING ")
        resultColumns(columns)
    }

    mutating func assignments(_ assignments: [Assignment]) {
        list(assignments) { writer, assignment in
            if assignment.parenthesized {
                writer.nameList(assignment.columns)
            } else {
                writer.identifier(assignment.columns.first ?? Identifier(""))
            }
            writer.output += " = "
            writer.expression(assignment.value)
        }
    }

    mutating func update(_ s: UpdateStatement) {
        if let w = s.with { with(w) }
        output += "UPDATE "
        if let resolution = s.orConflict { output += "OR " + resolution.text + " " }
        tableReference(s.table)
        output += " SET "
        assignments(s.assignments)
        if let from = s.from {
            word("FROM ")
            joinClause(from)
        }
        whereReturningOrderLimit(s.where, s.returning, s.orderBy, s.limit)
    }

    mutating func delete(_ s: DeleteStatement) {
        if let w = s.with { with(w) }
        output += "DELETE FROM "
        tableReference(s.table)
        whereReturningOrderLimit(s.where, s.returning, s.orderBy, s.limit)
    }

    mutating func whereReturningOrderLimit(_ condition: Expression?, _ returning: [ResultColumn]?, _ orderBy: [OrderingTerm], _ limit: LimitClause?) {
        if let condition {
            word("WHERE ")
            expression(condition)
        }
        self.returning(returning)
        if !orderBy.isEmpty {
            word("ORDER BY ")
            orderingTerms(orderBy)
        }
        if let limit { self.limit(limit) }
    }
}
