/// One SQL statement.
package indirect enum Statement: Sendable, Hashable {
    /// A query.
    case select(SelectStatement)
    /// INSERT or REPLACE.
    case insert(InsertStatement)
    /// UPDATE.
    case update(UpdateStatement)
    /// DELETE.
    case delete(DeleteStatement)
    /// CREATE TABLE.
    case createTable(CreateTableStatement)
    /// CREATE INDEX.
    case createIndex(CreateIndexStatement)
    /// CREATE VIEW.
    case createView(CreateViewStatement)
    /// CREATE TRIGGER.
    case createTrigger(CreateTriggerStatement)
    /// CREATE VIRTUAL TABLE.
    case createVirtualTable(CreateVirtualTableStatement)
    /// ALTER TABLE.
    case alterTable(AlterTableStatement)
    /// DROP TABLE, INDEX, VIEW or TRIGGER.
    case drop(DropStatement)
    /// `EXPLAIN [QUERY PLAN] statement`
    case explain(queryPlan: Bool, Statement)
    /// BEGIN, COMMIT, ROLLBACK, SAVEPOINT, RELEASE.
    case transaction(TransactionStatement)
    /// `ATTACH [DATABASE] file AS schema [KEY key]`
    case attach(file: Expression, schema: Expression, key: Expression?)
    /// `DETACH [DATABASE] schema`
    case detach(Expression)
    /// PRAGMA.
    case pragma(PragmaStatement)
    /// `VACUUM [schema] [INTO file]`
    case vacuum(schema: Identifier?, into: Expression?)
    /// `ANALYZE [[schema.]name]`
    case analyze(QualifiedName?)
    /// `REINDEX [[schema.]name]`
    case reindex(QualifiedName?)
}

/// `OR ROLLBACK|ABORT|FAIL|IGNORE|REPLACE` and `ON CONFLICT ...` resolutions.
package enum ConflictResolution: UInt8, Sendable, Hashable {
    /// The five resolutions.
    case rollback, abort, fail, ignore, replace

    /// The resolution as SQL text.
    package var text: String {
        switch self {
        case .rollback: return "ROLLBACK"
        case .abort: return "ABORT"
        case .fail: return "FAIL"
        case .ignore: return "IGNORE"
        case .replace: return "REPLACE"
        }
    }
}

/// Transaction control statements.
package enum TransactionStatement: Sendable, Hashable {
    /// The `BEGIN` modes.
    package enum Mode: UInt8, Sendable, Hashable { case deferred, immediate, exclusive }

    /// `BEGIN [mode] [TRANSACTION [name]]`
    case begin(Mode?, name: Identifier?)
    /// `COMMIT|END [TRANSACTION [name]]`
    case commit(name: Identifier?)
    /// `ROLLBACK [TRANSACTION [name]] [TO [SAVEPOINT] savepoint]`
    case rollback(name: Identifier?, toSavepoint: Identifier?)
    /// `SAVEPOINT name`
    case savepoint(Identifier)
    /// `RELEASE [SAVEPOINT] name`
    case release(Identifier)
}

/// `PRAGMA [schema.]name [= value | (value)]`
package struct PragmaStatement: Sendable, Hashable {
    /// How a value was given.
    package enum ValueForm: UInt8, Sendable, Hashable { case equals, call }

    /// The name.
    package var name: QualifiedName
    /// The value as written (a signed number, a name, a string, `ON`, `DELETE`, `DEFAULT`).
    package var value: String?
    /// Whether the value followed `=` or sat in parentheses.
    package var valueForm: ValueForm?

    /// Creates a PRAGMA statement.
    package init(name: QualifiedName, value: String? = nil, valueForm: ValueForm? = nil) {
        self.name = name
        self.value = value
        self.valueForm = value == nil ? nil : (valueForm ?? .equals)
    }
}
