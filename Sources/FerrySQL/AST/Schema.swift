/// `CREATE [TEMP] TABLE [IF NOT EXISTS] [schema.]name (columns, constraints) [options] | AS select`
public struct CreateTableStatement: Sendable, Hashable {
    /// The body of the statement.
    public enum Definition: Sendable, Hashable {
        /// `(columns, constraints) options`
        case columns([ColumnDefinition], constraints: [TableConstraint], options: [TableOption])
        /// `AS select`
        case select(SelectStatement)
    }

    /// Whether `TEMP` was written.
    public var temporary: Bool
    /// Whether `IF NOT EXISTS` was written.
    public var ifNotExists: Bool
    /// The name.
    public var name: QualifiedName
    /// The definition.
    public var definition: Definition

    /// Creates a CREATE TABLE statement.
    public init(temporary: Bool = false, ifNotExists: Bool = false, name: QualifiedName, definition: Definition) {
        self.temporary = temporary
        self.ifNotExists = ifNotExists
        self.name = name
        self.definition = definition
    }
}

/// A table option after the column list.
public enum TableOption: Sendable, Hashable {
    /// `WITHOUT ROWID` (the word after WITHOUT as written).
    case without(Identifier)
    /// `STRICT` or another bare word (SQLite accepts only STRICT).
    case named(Identifier)

    /// Whether this is `WITHOUT ROWID`.
    public var isWithoutRowID: Bool { if case .without(let n) = self { return n.matches("rowid") } else { return false } }
    /// Whether this is `STRICT`.
    public var isStrict: Bool { if case .named(let n) = self { return n.matches("strict") } else { return false } }
}

/// `name [type] [constraints]`
public struct ColumnDefinition: Sendable, Hashable {
    /// The name.
    public var name: Identifier
    /// The declared type, if any.
    public var type: TypeName?
    /// The constraints, in order.
    public var constraints: [ColumnConstraint]

    /// Creates a column definition.
    public init(name: Identifier, type: TypeName? = nil, constraints: [ColumnConstraint] = []) {
        self.name = name
        self.type = type
        self.constraints = constraints
    }
}

/// `[CONSTRAINT name] kind`; SQLite also accepts a dangling `CONSTRAINT name` (then `kind` is nil).
public struct ColumnConstraint: Sendable, Hashable {
    /// The kinds of column constraint.
    public enum Kind: Sendable, Hashable {
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
    public var name: Identifier?
    /// The kind.
    public var kind: Kind?

    /// Creates a column constraint.
    public init(name: Identifier? = nil, _ kind: Kind?) {
        self.name = name
        self.kind = kind
    }
}

/// The value of a `DEFAULT` constraint.
public enum DefaultValue: Sendable, Hashable {
    /// A literal, possibly signed (`DEFAULT -1`).
    case literal(Literal, sign: UnaryOperator?)
    /// A bare identifier (`DEFAULT abc`, read as a string; `DEFAULT true`).
    case identifier(Identifier)
    /// `DEFAULT (expr)`
    case expression(Expression)
}

/// `[NOT] DEFERRABLE [INITIALLY DEFERRED|IMMEDIATE]`
public struct Deferrability: Sendable, Hashable {
    /// `INITIALLY ...`
    public enum Initially: UInt8, Sendable, Hashable { case deferred, immediate }

    /// Whether `NOT DEFERRABLE` was written.
    public var notDeferrable: Bool
    /// `INITIALLY DEFERRED` or `INITIALLY IMMEDIATE`, if written.
    public var initially: Initially?

    /// Creates a deferrability clause.
    public init(notDeferrable: Bool = false, initially: Initially? = nil) {
        self.notDeferrable = notDeferrable
        self.initially = initially
    }
}

/// `REFERENCES table [(cols)] [ON DELETE|UPDATE action | MATCH name]... [deferrable]`
public struct ForeignKeyClause: Sendable, Hashable {
    /// One `ON ...` or `MATCH ...` argument.
    public enum Argument: Sendable, Hashable {
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
    public var table: Identifier
    /// The columns.
    public var columns: [Identifier]?
    /// The arguments.
    public var arguments: [Argument]
    /// The deferrability clause, if any.
    public var deferrability: Deferrability?

    /// Creates a foreign key clause.
    public init(table: Identifier, columns: [Identifier]? = nil, arguments: [Argument] = [], deferrability: Deferrability? = nil) {
        self.table = table
        self.columns = columns
        self.arguments = arguments
        self.deferrability = deferrability
    }
}

/// Foreign key actions.
public enum ForeignKeyAction: UInt8, Sendable, Hashable {
    /// The five actions.
    case setNull, setDefault, cascade, restrict, noAction

    /// The action as SQL text.
    public var text: String {
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
public struct TableConstraint: Sendable, Hashable {
    /// The kinds of table constraint.
    public enum Kind: Sendable, Hashable {
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
    public var name: Identifier?
    /// The kind.
    public var kind: Kind?

    /// Creates a table constraint.
    public init(name: Identifier? = nil, _ kind: Kind?) {
        self.name = name
        self.kind = kind
    }
}

/// `CREATE [UNIQUE] INDEX [IF NOT EXISTS] [schema.]name ON table (columns) [WHERE ...]`
public struct CreateIndexStatement: Sendable, Hashable {
    /// Whether `UNIQUE` was written.
    public var unique: Bool
    /// Whether `IF NOT EXISTS` was written.
    public var ifNotExists: Bool
    /// The name.
    public var name: QualifiedName
    /// The table.
    public var table: Identifier
    /// The columns.
    public var columns: [OrderingTerm]
    /// The `WHERE` condition.
    public var `where`: Expression?

    /// Creates a CREATE INDEX statement.
    public init(unique: Bool = false, ifNotExists: Bool = false, name: QualifiedName, table: Identifier, columns: [OrderingTerm], where: Expression? = nil) {
        self.unique = unique
        self.ifNotExists = ifNotExists
        self.name = name
        self.table = table
        self.columns = columns
        self.where = `where`
    }
}

/// `CREATE [TEMP] VIEW [IF NOT EXISTS] [schema.]name [(cols)] AS select`
public struct CreateViewStatement: Sendable, Hashable {
    /// Whether `TEMP` was written.
    public var temporary: Bool
    /// Whether `IF NOT EXISTS` was written.
    public var ifNotExists: Bool
    /// The name.
    public var name: QualifiedName
    /// The columns.
    public var columns: [Identifier]?
    /// The query.
    public var select: SelectStatement

    /// Creates a CREATE VIEW statement.
    public init(temporary: Bool = false, ifNotExists: Bool = false, name: QualifiedName, columns: [Identifier]? = nil, select: SelectStatement) {
        self.temporary = temporary
        self.ifNotExists = ifNotExists
        self.name = name
        self.columns = columns
        self.select = select
    }
}

/// `CREATE [TEMP] TRIGGER [IF NOT EXISTS] [schema.]name [timing] event ON table [FOR EACH ROW] [WHEN ...] BEGIN ... END`
public struct CreateTriggerStatement: Sendable, Hashable {
    /// `BEFORE`, `AFTER`, `INSTEAD OF`.
    public enum Timing: UInt8, Sendable, Hashable { case before, after, insteadOf }
    /// The triggering event.
    public enum Event: Sendable, Hashable {
        /// `DELETE` and `INSERT`.
        case delete, insert
        /// `UPDATE [OF columns]`
        case update(of: [Identifier]?)
    }

    /// Whether `TEMP` was written.
    public var temporary: Bool
    /// Whether `IF NOT EXISTS` was written.
    public var ifNotExists: Bool
    /// The name.
    public var name: QualifiedName
    /// `BEFORE`, `AFTER` or `INSTEAD OF`, if written.
    public var timing: Timing?
    /// The triggering event.
    public var event: Event
    /// The table.
    public var table: QualifiedName
    /// Whether `FOR EACH ROW` was written.
    public var forEachRow: Bool
    /// The `WHEN` condition, if any.
    public var when: Expression?
    /// The body: INSERT, UPDATE, DELETE and SELECT statements.
    public var body: [Statement]
    /// Where the table name after ON was written.
    public var tableLocation: SourceLocation

    /// Creates a CREATE TRIGGER statement.
    public init(temporary: Bool = false, ifNotExists: Bool = false, name: QualifiedName, timing: Timing? = nil, event: Event,
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
public struct CreateVirtualTableStatement: Sendable, Hashable {
    /// Whether `IF NOT EXISTS` was written.
    public var ifNotExists: Bool
    /// The name.
    public var name: QualifiedName
    /// The module name.
    public var module: Identifier
    /// The module arguments as raw text, trimmed; `nil` without parentheses.
    public var arguments: [String]?

    /// Creates a CREATE VIRTUAL TABLE statement.
    public init(ifNotExists: Bool = false, name: QualifiedName, module: Identifier, arguments: [String]? = nil) {
        self.ifNotExists = ifNotExists
        self.name = name
        self.module = module
        self.arguments = arguments
    }
}

/// `ALTER TABLE [schema.]table action`
public struct AlterTableStatement: Sendable, Hashable {
    /// What the statement changes.
    public enum Action: Sendable, Hashable {
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
    public var table: QualifiedName
    /// What the statement or clause does.
    public var action: Action

    /// Creates an ALTER TABLE statement.
    public init(table: QualifiedName, action: Action) {
        self.table = table
        self.action = action
    }
}

/// `DROP TABLE|INDEX|VIEW|TRIGGER [IF EXISTS] [schema.]name`
public struct DropStatement: Sendable, Hashable {
    /// What is dropped.
    public enum Kind: UInt8, Sendable, Hashable {
        /// The four kinds of object.
        case table, index, view, trigger

        /// The kind as SQL text.
        public var text: String {
            switch self {
            case .table: return "TABLE"
            case .index: return "INDEX"
            case .view: return "VIEW"
            case .trigger: return "TRIGGER"
            }
        }
    }

    /// The kind.
    public var kind: Kind
    /// Whether `IF EXISTS` was written.
    public var ifExists: Bool
    /// The name.
    public var name: QualifiedName

    /// Creates a DROP statement.
    public init(_ kind: Kind, ifExists: Bool = false, name: QualifiedName) {
        self.kind = kind
        self.ifExists = ifExists
        self.name = name
    }
}
