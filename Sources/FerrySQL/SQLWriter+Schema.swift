extension SQLWriter {
    mutating func createTable(_ s: CreateTableStatement) {
        output += s.temporary ? "CREATE TEMP TABLE " : "CREATE TABLE "
        if s.ifNotExists { output += "IF NOT EXISTS " }
        qualifiedName(s.name)
        switch s.definition {
        case .select(let select):
            output += " AS "
            self.select(select)
        case .columns(let columns, let constraints, let options):
            output += "("
            list(columns) { $0.columnDefinition($1) }
            for constraint in constraints {
                output += ", "
                tableConstraint(constraint)
            }
            output += ")"
            if !options.isEmpty {
                output += " "
                list(options) { writer, option in
                    switch option {
                    case .without(let name):
                        writer.output += "WITHOUT "
                        writer.identifier(name)
                    case .named(let name):
                        writer.identifier(name)
                    }
                }
            }
        }
    }

    mutating func columnDefinition(_ column: ColumnDefinition) {
        identifier(column.name)
        if let type = column.type {
            output += " "
            typeName(type)
        }
        for constraint in column.constraints {
            output += " "
            columnConstraint(constraint)
        }
    }

    mutating func onConflict(_ resolution: ConflictResolution?) {
        if let resolution { output += " ON CONFLICT " + resolution.text }
    }

    mutating func columnConstraint(_ constraint: ColumnConstraint) {
        if let name = constraint.name {
            output += "CONSTRAINT "
            identifier(name)
            if constraint.kind != nil { output += " " }
        }
        guard let kind = constraint.kind else { return }
        switch kind {
        case .primaryKey(let order, let conflict, let autoincrement):
            output += "PRIMARY KEY"
            if let order { output += order == .ascending ? " ASC" : " DESC" }
            onConflict(conflict)
            if autoincrement { output += " AUTOINCREMENT" }
        case .notNull(let conflict):
            output += "NOT NULL"
            onConflict(conflict)
        case .null(let conflict):
            output += "NULL"
            onConflict(conflict)
        case .unique(let conflict):
            output += "UNIQUE"
            onConflict(conflict)
        case .check(let condition):
            output += "CHECK ("
            expression(condition)
            output += ")"
        case .default(let value):
            output += "DEFAULT "
            switch value {
            case .literal(let literal, let sign):
                if sign == .negate { output += "-" } else if sign == .plus { output += "+" }
                self.literal(literal)
            case .identifier(let name):
                identifier(name)
            case .expression(let e):
                output += "("
                expression(e)
                output += ")"
            }
        case .collate(let name):
            output += "COLLATE "
            identifier(name)
        case .references(let clause):
            foreignKeyClause(clause)
        case .deferrable(let deferrability):
            self.deferrability(deferrability)
        case .generated(let e, let storage, let always):
            output += always ? "GENERATED ALWAYS AS (" : "AS ("
            expression(e)
            output += ")"
            if let storage {
                output += " "
                identifier(storage)
            }
        }
    }

    mutating func deferrability(_ d: Deferrability) {
        output += d.notDeferrable ? "NOT DEFERRABLE" : "DEFERRABLE"
        switch d.initially {
        case .deferred: output += " INITIALLY DEFERRED"
        case .immediate: output += " INITIALLY IMMEDIATE"
        case nil: break
        }
    }

    mutating func foreignKeyClause(_ clause: ForeignKeyClause) {
        output += "REFERENCES "
        identifier(clause.table)
        if let columns = clause.columns {
            output += " "
            nameList(columns)
        }
        for argument in clause.arguments {
            switch argument {
            case .onDelete(let action): output += " ON DELETE " + action.text
            case .onUpdate(let action): output += " ON UPDATE " + action.text
            case .onInsert(let action): output += " ON INSERT " + action.text
            case .match(let name):
                output += " MATCH "
                identifier(name)
            }
        }
        if let d = clause.deferrability {
            output += " "
            deferrability(d)
        }
    }

    mutating func tableConstraint(_ constraint: TableConstraint) {
        if let name = constraint.name {
            output += "CONSTRAINT "
            identifier(name)
            if constraint.kind != nil { output += " " }
        }
        guard let kind = constraint.kind else { return }
        switch kind {
        case .primaryKey(let columns, let autoincrement, let conflict):
            output += "PRIMARY KEY ("
            orderingTerms(columns)
            if autoincrement { output += " AUTOINCREMENT" }
            output += ")"
            onConflict(conflict)
        case .unique(let columns, let conflict):
            output += "UNIQUE ("
            orderingTerms(columns)
            output += ")"
            onConflict(conflict)
        case .check(let condition, let conflict):
            output += "CHECK ("
            expression(condition)
            output += ")"
            onConflict(conflict)
        case .foreignKey(let columns, let clause):
            output += "FOREIGN KEY "
            nameList(columns)
            output += " "
            foreignKeyClause(clause)
        }
    }

    mutating func createIndex(_ s: CreateIndexStatement) {
        output += s.unique ? "CREATE UNIQUE INDEX " : "CREATE INDEX "
        if s.ifNotExists { output += "IF NOT EXISTS " }
        qualifiedName(s.name)
        output += " ON "
        identifier(s.table)
        output += " ("
        orderingTerms(s.columns)
        output += ")"
        if let condition = s.where {
            word("WHERE ")
            expression(condition)
        }
    }

    mutating func createTrigger(_ s: CreateTriggerStatement) {
        output += s.temporary ? "CREATE TEMP TRIGGER " : "CREATE TRIGGER "
        if s.ifNotExists { output += "IF NOT EXISTS " }
        qualifiedName(s.name)
        switch s.timing {
        case .before: output += " BEFORE"
        case .after: output += " AFTER"
        case .insteadOf: output += " INSTEAD OF"
        case nil: break
        }
        switch s.event {
        case .delete: output += " DELETE"
        case .insert: output += " INSERT"
        case .update(let columns):
            output += " UPDATE"
            if let columns {
                output += " OF "
                list(columns) { $0.identifier($1) }
            }
        }
        output += " ON "
        qualifiedName(s.table)
        if s.forEachRow { output += " FOR EACH ROW" }
        if let when = s.when {
            output += " WHEN "
            expression(when)
        }
        output += " BEGIN "
        for step in s.body {
            statement(step)
            output += "; "
        }
        output += "END"
    }
}
