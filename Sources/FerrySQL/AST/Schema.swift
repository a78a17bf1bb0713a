/// `CREATE [TEMP] TABLE [IF NOT EXISTS] [schema.]name (columns, constraints) [options] | AS select`
package struct CreateTableStatement: Sendable, Hashable {
    /// The body of the statement.
    package enum Definition: Sendable, Hashable {
        /// `(columns, constraints) options`
        case columns([ColumnDefinition], constraints: [TableConstraint], options: [TableOption])
        /// `AS select`
        case select(SelectStatement)
    }

    /// Whether `TEMP` was written.
    package var temporary: Bool
    /// Whether `IF NOT EXISTS` was written.
    package var ifNotExists: Bool
    /// The name.
    package var name: QualifiedName
    /// The definition.
    package var definition: Definition

    /// Creates a CREATE TABLE statement.
    package init(temporary: Bool = false, ifNotExists: Bool = false, name: QualifiedName, definition: Definition) {
        self.temporary = temporary
        self.ifNotExists = ifNotExists
        self.name = name
        self.definition = definition
    }
}

/// A table option after the column list.
package enum TableOption: Sendable, Hashable {
    /// `WITHOUT ROWID` (the word after WITHOUT as written).
    case without(Identifier)
    /// `STRICT` or another bare word (SQLite accepts only STRICT).
    case named(Identifier)

    /// Whether this is `WITHOUT ROWID`.
    package var isWithoutRowID: Bool { if case .without(let n) = self { return n.matches("rowid") } else { return false } }
    /// Whether this is `STRICT`.
    package var isStrict: Bool { if case .named(let n) = self { return n.matches("strict") } else { return false } }
}

/// `name [type] [constraints]`
package struct ColumnDefinition: Sendable, Hashable {
    /// The name.
    package var name: Identifier
    /// The declared type, if any.
    package var type: TypeName?
    /// The constraints, in order.
    package var constraints: [ColumnConstraint]

    /// Creates a column definition.
    package init(name: Identifier, type: TypeName? = nil, constraints: [ColumnConstraint] = []) {
        self.name = name
        self.type = type
        self.constraints = constraints
    }
}

/// `[CONSTRAINT name] kind`; SQLite also accepts a dangling `CONSTRAINT name` (then `kind` is nil).
package struct ColumnConstraint: Sendable, Hashable {
    /// The kinds of column constraint.
    package enum Kind: Sendable, Hashable {
        /// `PRIMARY KEY [ASC|DESC] [ON CONFLICT ...] [AUTOINCREMENT]`
        case primaryKey(SortOrder?, onConflict: ConflictResolution?, autoincrement: Bool)
        /// `NOT NULL [ON CONFLICT ...]`
        case notNull(onConflict: ConflictResolution?)
        /// `NULL [ON CONFLICT ...]` (accepted and ignored by SQLite).
        case null(onConflict: ConflictResolution?)
        /// `UNIQUE [ON CONFLICT ...]`
        case unique(onConflict: ConflictResolution?)
        /// `CHECK (expr)`
        case check(Expression)
        /// `DEFAULT value`
        case `default`(DefaultValue)
        /// `COLLATE name`
        case collate(Identifier)
        /// `REFERENCES ...`
        case references(ForeignKeyClause)
        /// A `[NOT] DEFERRABLE ...` not directly after a REFERENCES clause.
        case deferrable(Deferrability)
        /// `[GENERATED ALWAYS] AS (expr) [STORED|VIRTUAL]`
        case generated(Expression, storage: Identifier?, generatedAlways: Bool)
    }

    /// The name.
    package var name: Identifier?
    /// The kind.
    package var kind: Kind?

    /// Creates a column constraint.
    package init(name: Identifier? = nil, _ kind: Kind?) {
        self.name = name
        self.kind = kind
    }
}

/// The value of a `DEFAULT` constraint.
package enum DefaultValue: Sendable, Hashable {
    /// A literal, possibly signed (`DEFAULT -1`).
    case literal(Literal, sign: UnaryOperator?)
    /// A bare identifier (`DEFAULT abc`, read as a string; `DEFAULT true`).
    case identifier(Identifier)
    /// `DEFAULT (expr)`
    case expression(Expression)
}

/// `[NOT] DEFERRABLE [INITIALLY DEFERRED|IMMEDIATE]`
package struct Deferrability: Sendable, Hashable {
    /// `INITIALLY ...`
    package enum Initially: UInt8, Sendable, Hashable { case deferred, immediate }

    /// Whether `NOT DEFERRABLE` was written.
    package var notDeferrable: Bool
    /// `INITIALLY DEFERRED` or `INITIALLY IMMEDIATE`, if written.
    package var initially: Initially?

    /// Creates a deferrability clause.
    package init(notDeferrable: Bool = false, initially: Initially? = nil) {
        self.notDeferrable = notDeferrable
        self.initially = initially
    }
}

/// `REFERENCES table [(cols)] [ON DELETE|UPDATE action | MATCH name]... [deferrable]`
package struct ForeignKeyClause: Sendable, Hashable {
    /// One `ON ...` or `MATCH ...` argument.
    package enum Argument: Sendable, Hashable {
        /// `ON DELETE action`
        case onDelete(ForeignKeyAction)
        /// `ON UPDATE action`
        case onUpdate(ForeignKeyAction)
        /// `ON INSERT action` (accepted and ignored by SQLite).
        case onInsert(ForeignKeyAction)
        /// `MATCH name`
        case match(Identifier)
    }

    /// The table.
    package var table: Identifier
    /// The columns.
    package var columns: [Identifier]?
    /// The arguments.
    package var arguments: [Argument]
    /// The deferrability clause, if any.
    package var deferrability: Deferrability?

    /// Creates a foreign key clause.
    package init(table: Identifier, columns: [Identifier]? = nil, arguments: [Argument] = [], deferrability: Deferrability? = nil) {
        self.table = table
        self.columns = columns
        self.arguments = arguments
        self.deferrability = deferrability
    }
}

/// Foreign key actions.
package enum ForeignKeyAction: UInt8, Sendable, Hashable {
    /// The five actions.
    case setNull, setDefault, cascade, restrict, noAction

    /// The action as SQL text.
    package var text: String {
        switch self {
        case .setNull: return "SET NULL"
        case .setDefault: return "SET DEFAULT"
        case .cascade: return "CASCADE"
        case .restrict: return "RESTRICT"
        case .noAction: return "NO ACTION"
        }
    }
}

/// `[CONSTRAINT name] kind` after the columns of a CREATE TABLE.
package struct TableConstraint: Sendable, Hashable {
    /// The kinds of table constraint.
    package enum Kind: Sendable, Hashable {
        /// `PRIMARY KEY (columns [AUTOINCREMENT]) [ON CONFLICT ...]`
        case primaryKey([OrderingTerm], autoincrement: Bool, onConflict: ConflictResolution?)
        /// `UNIQUE (columns) [ON CONFLICT ...]`
        case unique([OrderingTerm], onConflict: ConflictResolution?)
        /// `CHECK (expr) [ON CONFLICT ...]`
        case check(Expression, onConflict: ConflictResolution?)
        /// `FOREIGN KEY (columns) REFERENCES ...`
        case foreignKey(columns: [Identifier], ForeignKeyClause)
    }

    /// The name.
    package var name: Identifier?
    /// The kind.
    package var kind: Kind?

    /// Creates a table constraint.
    package init(name: Identifier? = nil, _ kind: Kind?) {
        self.name = name
        self.kind = kind
    }
}

/// `CREATE [UNIQUE] INDEX [IF NOT EXISTS] [schema.]name ON table (columns) [WHERE ...]`
package struct CreateIndexStatement: Sendable, Hashable {
    /// Whether `UNIQUE` was written.
    package var unique: Bool
    /// Whether `IF NOT EXISTS` was written.
    package var ifNotExists: Bool
    /// The name.
    package var name: QualifiedName
    /// The table.
    package var table: Identifier
    /// The columns.
    package var columns: [OrderingTerm]
    /// The `WHERE` condition.
    package var `where`: Expression?

    /// Creates a CREATE INDEX statement.
    package init(unique: Bool = false, ifNotExists: Bool = false, name: QualifiedName, table: Identifier, columns: [OrderingTerm], where: Expression? = nil) {
        self.unique = unique
        self.ifNotExists = ifNotExists
        self.name = name
        self.table = table
        self.columns = columns
        self.where = `where`
    }
}

/// `CREATE [TEMP] VIEW [IF NOT EXISTS] [schema.]name [(cols)] AS select`
package struct CreateViewStatement: Sendable, Hashable {
    /// Whether `TEMP` was written.
    package var temporary: Bool
    /// Whether `IF NOT EXISTS` was written.
    package var ifNotExists: Bool
    /// The name.
    package var name: QualifiedName
    /// The columns.
    package var columns: [Identifier]?
    /// The query.
    package var select: SelectStatement

    /// Creates a CREATE VIEW statement.
    package init(temporary: Bool = false, ifNotExists: Bool = false, name: QualifiedName, columns: [Identifier]? = nil, select: SelectStatement) {
        self.temporary = temporary
        self.ifNotExists = ifNotExists
        self.name = name
        self.columns = columns
        self.select = select
    }
}

/// `CREATE [TEMP] TRIGGER [IF NOT EXISTS] [schema.]name [timing] event ON table [FOR EACH ROW] [WHEN ...] BEGIN ... END`
package struct CreateTriggerStatement: Sendable, Hashable {
    /// `BEFORE`, `AFTER`, `INSTEAD OF`.
    package enum Timing: UInt8, Sendable, Hashable { case before, after, insteadOf }
    /// The triggering event.
    package enum Event: Sendable, Hashable {
        /// `DELETE` and `INSERT`.
        case delete, insert
        /// `UPDATE [OF columns]`
        case update(of: [Identifier]?)
    }

    /// Whether `TEMP` was written.
    package var temporary: Bool
    /// Whether `IF NOT EXISTS` was written.
    package var ifNotExists: Bool
    /// The name.
    package var name: QualifiedName
    /// `BEFORE`, `AFTER` or `INSTEAD OF`, if written.
    package var timing: Timing?
    /// The triggering event.
    package var event: Event
    /// The table.
    package var table: QualifiedName
    /// Whether `FOR EACH ROW` was written.
    package var forEachRow: Bool
    /// The `WHEN` condition, if any.
    package var when: Expression?
    /// The body: INSERT, UPDATE, DELETE and SELECT statements.
    package var body: [Statement]
    /// Where the table name after ON was written.
    package var tableLocation: SourceLocation

    /// Creates a CREATE TRIGGER statement.
    package init(temporary: Bool = false, ifNotExists: Bool = false, name: QualifiedName, timing: Timing? = nil, event: Event,
                table: QualifiedName, forEachRow: Bool = false, when: Expression? = nil, body: [Statement], tableLocation: SourceLocation = .none) {
        self.temporary = temporary
        self.ifNotExists = ifNotExists
        self.name = name
        self.timing = timing
        self.event = event
        self.table = table
        self.forEachRow = forEachRow
        self.when = when
        self.body = body
        self.tableLocation = tableLocation
    }
}

/// `CREATE VIRTUAL TABLE [IF NOT EXISTS] [schema.]name USING module [(args)]`
package struct CreateVirtualTableStatement: Sendable, Hashable {
    /// Whether `IF NOT EXISTS` was written.
    package var ifNotExists: Bool
    /// The name.
    package var name: QualifiedName
    /// The module name.
    package var module: Identifier
    /// The module arguments as raw text, trimmed; `nil` without parentheses.
    package var arguments: [String]?

    /// Creates a CREATE VIRTUAL TABLE statement.
    package init(ifNotExists: Bool = false, name: QualifiedName, module: Identifier, arguments: [String]? = nil) {
        self.ifNotExists = ifNotExists
        self.name = name
        self.module = module
        self.arguments = arguments
    }
}

/// `ALTER TABLE [schema.]table action`
package struct AlterTableStatement: Sendable, Hashable {
    /// What the statement changes.
    package enum Action: Sendable, Hashable {
        /// `RENAME TO name`
        case renameTable(to: Identifier)
        /// `RENAME [COLUMN] old TO new`
        case renameColumn(Identifier, to: Identifier)
        /// `ADD [COLUMN] definition`
        case addColumn(ColumnDefinition)
        /// `DROP [COLUMN] name`
        case dropColumn(Identifier)
    }

    /// The table.
    package var table: QualifiedName
    /// What the statement or clause does.
    package var action: Action

    /// Creates an ALTER TABLE statement.
    package init(table: QualifiedName, action: Action) {
        self.table = table
        self.action = action
    }
}

/// `DROP TABLE|INDEX|VIEW|TRIGGER [IF EXISTS] [schema.]name`
package struct DropStatement: Sendable, Hashable {
    /// What is dropped.
    package enum Kind: UInt8, Sendable, Hashable {
        /// The four kinds of object.
        case table, index, view, trigger

        /// The kind as SQL text.
        package var text: String {
            switch self {
            case .table: return "TABLE"
            case .index: return "INDEX"
            case .view: return "VIEW"
            case .trigger: return "TRIGGER"
            }
        }
    }

    /// The kind.
    package var kind: Kind
    /// Whether `IF EXISTS` was written.
    package var ifExists: Bool
    /// The name.
    package var name: QualifiedName

    /// Creates a DROP statement.
    package init(_ kind: Kind, ifExists: Bool = false, name: QualifiedName) {
        self.kind = kind
        self.ifExists = ifExists
        self.name = name
    }
}
