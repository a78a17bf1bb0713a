extension ParserState {
    /// `IF NOT EXISTS`, if present.
    mutating func parseIfNotExists() throws -> Bool {
        guard accept(.if) else { return false }
        try expect(.not)
        try expect(.exists)
        return true
    }

    /// CREATE TABLE, INDEX, VIEW, TRIGGER or VIRTUAL TABLE.
    mutating func parseCreate() throws -> Statement {
        try expect(.create)
        let temporary = accept(.temp) || accept(.temporary)
        switch current.keyword {
        case .table:
            advance()
            return .createTable(try parseCreateTable(temporary: temporary))
        case .view:
            advance()
            let ifNotExists = try parseIfNotExists()
            let (name, _) = try parseQualifiedName()
            var columns: [Identifier]?
            if at(.leftParen) { columns = try parseColumnNameList() }
            try expect(.as)
            return .createView(CreateViewStatement(temporary: temporary, ifNotExists: ifNotExists, name: name, columns: columns, select: try parseSelect()))
        case .trigger:
            advance()
            return .createTrigger(try parseCreateTrigger(temporary: temporary))
        case .unique, .index:
            guard !temporary else { throw syntaxError() }
            let unique = accept(.unique)
            try expect(.index)
            let ifNotExists = try parseIfNotExists()
            let (name, _) = try parseQualifiedName()
            try expect(.on)
            let table = try parseName()
            try expect(.leftParen)
            let columns = try parseOrderingTerms()
            try expect(.rightParen)
            var condition: Expression?
            if accept(.where) { condition = try parseExpression() }
            return .createIndex(CreateIndexStatement(unique: unique, ifNotExists: ifNotExists, name: name, table: table, columns: columns, where: condition))
        case .virtual:
            guard !temporary else { throw syntaxError() }
            advance()
            try expect(.table)
            let ifNotExists = try parseIfNotExists()
            let (name, _) = try parseQualifiedName()
            try expect(.using)
            let module = try parseName()
            var arguments: [String]?
            if at(.leftParen) { arguments = try parseModuleArguments() }
            return .createVirtualTable(CreateVirtualTableStatement(ifNotExists: ifNotExists, name: name, module: module, arguments: arguments))
        default:
            throw syntaxError()
        }
    }

    /// `( arg, arg, ... )` of a virtual table: raw token text, split at top-level commas.
    mutating func parseModuleArguments() throws -> [String] {
        try expect(.leftParen)
        var arguments: [String] = []
        var nesting = 0
        var start: Int?
        var end = 0
        while true {
            let token = current
            switch token.kind {
            case .endOfInput:
                throw syntaxError()
            case .leftParen:
                nesting += 1
            case .rightParen:
                if nesting == 0 {
                    arguments.append(start.map { source.string($0..<end) } ?? "")
                    advance()
                    return arguments
                }
                nesting -= 1
            case .comma where nesting == 0:
                arguments.append(start.map { source.string($0..<end) } ?? "")
                start = nil
                advance()
                continue
            case .semicolon:
                throw syntaxError()
            default:
                break
            }
            if start == nil { start = token.range.lowerBound }
            end = token.range.upperBound
            advance()
        }
    }

    /// The rest of CREATE TABLE after `TABLE`.
    mutating func parseCreateTable(temporary: Bool) throws -> CreateTableStatement {
        let ifNotExists = try parseIfNotExists()
        let (name, _) = try parseQualifiedName()
        if accept(.as) {
            return CreateTableStatement(temporary: temporary, ifNotExists: ifNotExists, name: name, definition: .select(try parseSelect()))
        }
        try expect(.leftParen)
        var columns: [ColumnDefinition] = []
        var constraints: [TableConstraint] = []
        columns.append(try parseColumnDefinition())
        while accept(.comma) {
            if startsTableConstraint { break }
            columns.append(try parseColumnDefinition())
        }
        if startsTableConstraint {
            constraints.append(try parseTableConstraint())
            while true {
                if accept(.comma) {
                    constraints.append(try parseTableConstraint())
                } else if startsTableConstraint {
                    constraints.append(try parseTableConstraint())
                } else {
                    break
                }
            }
        }
        try expect(.rightParen)
        var options: [TableOption] = []
        if current.isName {
            repeat {
                if accept(.without) {
                    options.append(.without(try parseName()))
                } else {
                    options.append(.named(try parseName()))
                }
            } while accept(.comma)
        }
        return CreateTableStatement(temporary: temporary, ifNotExists: ifNotExists, name: name,
                                    definition: .columns(columns, constraints: constraints, options: options))
    }

    var startsTableConstraint: Bool {
        guard current.kind == .identifier, let k = current.keyword else { return false }
        return k == .constraint || k == .primary || k == .unique || k == .check || k == .foreign
    }

    /// `name [type] [constraints]`
    mutating func parseColumnDefinition() throws -> ColumnDefinition {
        let name = try parseName()
        let type = try parseTypeName()
        var column = ColumnDefinition(name: name, type: type)
        while let constraint = try parseColumnConstraint() {
            column.constraints.append(constraint)
        }
        return column
    }

    /// One column constraint, or nil when none starts here.
    mutating func parseColumnConstraint() throws -> ColumnConstraint? {
        var name: Identifier?
        if accept(.constraint) {
            name = try parseName()
        }
        guard current.kind == .identifier, let keyword = current.keyword else {
            return name.map { ColumnConstraint(name: $0, nil) }
        }
        let kind: ColumnConstraint.Kind
        switch keyword {
        case .primary:
            advance()
            try expect(.key)
            var order: SortOrder?
            if accept(.asc) { order = .ascending } else if accept(.desc) { order = .descending }
            let conflict = try parseOnConflict()
            kind = .primaryKey(order, onConflict: conflict, autoincrement: accept(.autoincrement))
        case .not:
            if peek().is(.null) {
                advance(); advance()
                kind = .notNull(onConflict: try parseOnConflict())
            } else if peek().is(.deferrable) {
                kind = .deferrable(try parseDeferrability()!)
            } else {
                throw syntaxError()
            }
        case .null:
            advance()
            kind = .null(onConflict: try parseOnConflict())
        case .unique:
            advance()
            kind = .unique(onConflict: try parseOnConflict())
        case .check:
            advance()
            try expect(.leftParen)
            let condition = try parseExpression()
            try expect(.rightParen)
            kind = .check(condition)
        case .default:
            advance()
            kind = .default(try parseDefaultValue())
        case .collate:
            advance()
            kind = .collate(try parseIDOrString())
        case .references:
            kind = .references(try parseForeignKeyClause())
        case .deferrable:
            kind = .deferrable(try parseDeferrability()!)
        case .generated, .as:
            var always = false
            if accept(.generated) {
                try expect(.always)
                always = true
            }
            try expect(.as)
            try expect(.leftParen)
            let expression = try parseExpression()
            try expect(.rightParen)
            var storage: Identifier?
            if current.isID {
                storage = identifier(current)
                advance()
            }
            kind = .generated(expression, storage: storage, generatedAlways: always)
        default:
            return name.map { ColumnConstraint(name: $0, nil) }
        }
        return ColumnConstraint(name: name, kind)
    }

    /// The value after DEFAULT.
    mutating func parseDefaultValue() throws -> DefaultValue {
        if accept(.leftParen) {
            let expression = try parseExpression()
            try expect(.rightParen)
            return .expression(expression)
        }
        var sign: UnaryOperator?
        if accept(.plus) { sign = .plus } else if accept(.minus) { sign = .negate }
        let token = current
        let literal: Literal
        switch token.kind {
        case .integer: literal = .integer(source.string(token.range))
        case .float: literal = .real(source.string(token.range))
        case .string: literal = .string(dequote(token.range, quote: 0x27))
        case .blob: literal = .blob(source.string(token.range.lowerBound + 2..<token.range.upperBound - 1))
        case .identifier where token.keyword == .null: literal = .null
        case .identifier where token.keyword == .currentTime: literal = .currentTime
        case .identifier where token.keyword == .currentDate: literal = .currentDate
        case .identifier where token.keyword == .currentTimestamp: literal = .currentTimestamp
        default:
            guard sign == nil, token.isID || token.is(.indexed) else { throw syntaxError() }
            advance()
            return .identifier(identifier(token))
        }
        advance()
        return .literal(literal, sign: sign)
    }

    /// `REFERENCES table [(cols)] [args...] [deferrability]`
    mutating func parseForeignKeyClause() throws -> ForeignKeyClause {
        try expect(.references)
        var clause = ForeignKeyClause(table: try parseName())
        if at(.leftParen) { clause.columns = try parseColumnNameList() }
        while true {
            if accept(.match) {
                clause.arguments.append(.match(try parseName()))
            } else if at(.on) && (peek().is(.delete) || peek().is(.update) || peek().is(.insert)) {
                advance()
                let event = current.keyword!
                advance()
                let action: ForeignKeyAction
                if accept(.set) {
                    if accept(.null) { action = .setNull } else { try expect(.default); action = .setDefault }
                } else if accept(.cascade) {
                    action = .cascade
                } else if accept(.restrict) {
                    action = .restrict
                } else if accept(.no) {
                    try expect(.action)
                    action = .noAction
                } else {
                    throw syntaxError()
                }
                switch event {
                case .delete: clause.arguments.append(.onDelete(action))
                case .update: clause.arguments.append(.onUpdate(action))
                default: clause.arguments.append(.onInsert(action))
                }
            } else {
                break
            }
        }
        clause.deferrability = try parseDeferrability()
        return clause
    }

    /// `[NOT] DEFERRABLE [INITIALLY DEFERRED|IMMEDIATE]`, if present.
    mutating func parseDeferrability() throws -> Deferrability? {
        var result = Deferrability()
        if at(.not) && peek().is(.deferrable) {
            advance(); advance()
            result.notDeferrable = true
        } else if accept(.deferrable) {
        } else {
            return nil
        }
        if accept(.initially) {
            if accept(.deferred) { result.initially = .deferred } else { try expect(.immediate); result.initially = .immediate }
        }
        return result
    }

    /// One table constraint.
    mutating func parseTableConstraint() throws -> TableConstraint {
        var name: Identifier?
        if accept(.constraint) { name = try parseName() }
        switch current.keyword {
        case .primary:
            advance()
            try expect(.key)
            try expect(.leftParen)
            let columns = try parseOrderingTerms()
            let autoincrement = accept(.autoincrement)
            try expect(.rightParen)
            return TableConstraint(name: name, .primaryKey(columns, autoincrement: autoincrement, onConflict: try parseOnConflict()))
        case .unique:
            advance()
            try expect(.leftParen)
            let columns = try parseOrderingTerms()
            try expect(.rightParen)
            return TableConstraint(name: name, .unique(columns, onConflict: try parseOnConflict()))
        case .check:
            advance()
            try expect(.leftParen)
            let condition = try parseExpression()
            try expect(.rightParen)
            return TableConstraint(name: name, .check(condition, onConflict: try parseOnConflict()))
        case .foreign:
            advance()
            try expect(.key)
            let columns = try parseColumnNameList()
            return TableConstraint(name: name, .foreignKey(columns: columns, try parseForeignKeyClause()))
        default:
            guard let name else { throw syntaxError() }
            return TableConstraint(name: name, nil)
        }
    }

    /// The rest of CREATE TRIGGER after `TRIGGER`.
    mutating func parseCreateTrigger(temporary: Bool) throws -> CreateTriggerStatement {
        let ifNotExists = try parseIfNotExists()
        let (name, _) = try parseQualifiedName()
        var timing: CreateTriggerStatement.Timing?
        if accept(.before) { timing = .before }
        else if accept(.after) { timing = .after }
        else if at(.instead) && peek().is(.of) { advance(); advance(); timing = .insteadOf }
        let event: CreateTriggerStatement.Event
        if accept(.delete) { event = .delete }
        else if accept(.insert) { event = .insert }
        else {
            try expect(.update)
            if accept(.of) {
                var columns = [try parseName()]
                while accept(.comma) { columns.append(try parseName()) }
                event = .update(of: columns)
            } else {
                event = .update(of: nil)
            }
        }
        try expect(.on)
        let (table, tableRange) = try parseQualifiedName()
        var forEachRow = false
        if accept(.for) {
            try expect(.each)
            try expect(.row)
            forEachRow = true
        }
        var when: Expression?
        if accept(.when) { when = try parseExpression() }
        try expect(.begin)
        var body: [Statement] = []
        repeat {
            body.append(try parseTriggerStep())
            try expect(.semicolon)
        } while !at(.end)
        try expect(.end)
        return CreateTriggerStatement(temporary: temporary, ifNotExists: ifNotExists, name: name, timing: timing, event: event, table: table,
                                      forEachRow: forEachRow, when: when, body: body, tableLocation: SourceLocation(tableRange))
    }

    /// One statement of a trigger body: UPDATE, INSERT/REPLACE, DELETE or a SELECT.
    mutating func parseTriggerStep() throws -> Statement {
        switch current.keyword {
        case .update:
            let statement = try parseUpdate(with: nil, inTrigger: true)
            if statement.table.indexHint != nil {
                throw error(.invalidConstruct, "the INDEXED BY clause is not allowed on UPDATE or DELETE statements within triggers")
            }
            return .update(statement)
        case .delete:
            let statement = try parseDelete(with: nil, inTrigger: true)
            if statement.table.indexHint != nil {
                throw error(.invalidConstruct, "the INDEXED BY clause is not allowed on UPDATE or DELETE statements within triggers")
            }
            return .delete(statement)
        case .insert, .replace:
            return .insert(try parseInsert(with: nil, inTrigger: true))
        case .select, .values, .with:
            return .select(try parseSelect())
        default:
            throw syntaxError()
        }
    }

    /// DROP TABLE, INDEX, VIEW or TRIGGER.
    mutating func parseDrop() throws -> Statement {
        try expect(.drop)
        let kind: DropStatement.Kind
        switch current.keyword {
        case .table: kind = .table
        case .index: kind = .index
        case .view: kind = .view
        case .trigger: kind = .trigger
        default: throw syntaxError()
        }
        advance()
        var ifExists = false
        if accept(.if) {
            try expect(.exists)
            ifExists = true
        }
        return .drop(DropStatement(kind, ifExists: ifExists, name: try parseQualifiedName().0))
    }

    /// ALTER TABLE.
    mutating func parseAlterTable() throws -> AlterTableStatement {
        try expect(.alter)
        try expect(.table)
        let (table, _) = try parseQualifiedName()
        if accept(.rename) {
            if accept(.to) { return AlterTableStatement(table: table, action: .renameTable(to: try parseName())) }
            _ = accept(.column)
            let old = try parseName()
            try expect(.to)
            return AlterTableStatement(table: table, action: .renameColumn(old, to: try parseName()))
        }
        if accept(.add) {
            _ = accept(.column)
            return AlterTableStatement(table: table, action: .addColumn(try parseColumnDefinition()))
        }
        try expect(.drop)
        _ = accept(.column)
        return AlterTableStatement(table: table, action: .dropColumn(try parseName()))
    }
}
