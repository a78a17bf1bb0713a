import FerrySQLite
/// Creates a target table (and its indexes) from a source table's schema.
///
/// SQLite stores each object's CREATE statement as written, with its head normalized
/// (`CREATE TABLE name ...`, `CREATE [UNIQUE] INDEX name ON table ...`). The copier replaces the
/// names in that head and keeps the rest (columns, types, constraints, defaults, AUTOINCREMENT,
/// index columns and WHERE clauses) byte for byte.
enum SchemaCopier {
    /// Creates `main.<target>` shaped like the source table, with the source's explicit indexes.
    static func createTarget(named target: String, from source: TableShape, on db: Connection) throws(FerryError) {
        guard let tableSQL = rewriteHead(source.sql, keyword: "TABLE", newName: "main.\(q(target))", on: nil) else {
            throw .unsupported("cannot read the CREATE statement of \(source.schema).\(source.name)")
        }
        try sqlite(db.execute(tableSQL))
        let indexes = try sqlite(db.fetchAll(
            "SELECT name, sql FROM \(q(source.schema)).sqlite_master WHERE type = 'index' AND tbl_name = ? COLLATE NOCASE AND sql IS NOT NULL",
            [.text(source.name)]))
        for index in indexes {
            let name: String = try sqlite(index.column(0))
            let sql: String = try sqlite(index.column(1))
            // Keep the index name when the table keeps its name in another file; otherwise prefix
            // it with the target's name, and number it if that is taken too.
            var newName = (source.schema != "main" && source.name.lowercased() == target.lowercased()) ? name : "\(target)_\(name)"
            var suffix = 2
            while try sqlite(db.scalar("SELECT count(*) FROM main.sqlite_master WHERE name = ? COLLATE NOCASE", [.text(newName)], as: Int.self)) ?? 0 > 0 {
                newName = "\(target)_\(name)_\(suffix)"
                suffix += 1
            }
            guard let indexSQL = rewriteHead(sql, keyword: "INDEX", newName: "main.\(q(newName))", on: q(target)) else {
                throw .unsupported("cannot read the CREATE statement of index \(name)")
            }
            try sqlite(db.execute(indexSQL))
        }
    }

    /// Replaces the object name after `CREATE [UNIQUE] <keyword> [IF NOT EXISTS]` and, for indexes,
    /// the table name after `ON`. Returns nil when the head does not have the expected shape.
    static func rewriteHead(_ sql: String, keyword: String, newName: String, on newTable: String?) -> String? {
        let bytes = Array(sql.utf8)
        var scanner = HeadScanner(bytes)
        guard scanner.word()?.uppercased() == "CREATE" else { return nil }
        var next = scanner.word()?.uppercased()
        if next == "UNIQUE" || next == "TEMP" || next == "TEMPORARY" { next = scanner.word()?.uppercased() }
        guard next == keyword else { return nil }
        let save = scanner.position
        if scanner.word()?.uppercased() == "IF", scanner.word()?.uppercased() == "NOT", scanner.word()?.uppercased() == "EXISTS" {
        } else {
            scanner.position = save
        }
        scanner.skipSpace()
        let nameStart = scanner.position
        guard scanner.qualifiedName() else { return nil }
        var out = Array(bytes[..<nameStart]) + Array(" \(newName)".utf8)
        if let newTable {
            guard scanner.word()?.uppercased() == "ON" else { return nil }
            scanner.skipSpace()
            guard scanner.qualifiedName() else { return nil }
            out += Array(" ON \(newTable)".utf8)
        }
        out += Array(bytes[scanner.position...])
        return String(decoding: out, as: UTF8.self)
    }
}

/// Just enough of SQLite's lexical rules to walk the head of a CREATE statement.
private struct HeadScanner {
    let bytes: [UInt8]
    var position = 0
    init(_ bytes: [UInt8]) { self.bytes = bytes }

    mutating func skipSpace() {
        while position < bytes.count {
            let c = bytes[position]
            if c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D || c == 0x0C {
                position += 1
            } else if c == 0x2D, position + 1 < bytes.count, bytes[position + 1] == 0x2D {
                while position < bytes.count && bytes[position] != 0x0A { position += 1 }
            } else if c == 0x2F, position + 1 < bytes.count, bytes[position + 1] == 0x2A {
                position += 2
                while position + 1 < bytes.count && !(bytes[position] == 0x2A && bytes[position + 1] == 0x2F) { position += 1 }
                position = min(bytes.count, position + 2)
            } else {
                return
            }
        }
    }

    /// A bare word (letters, digits, `_`, `$`, non-ASCII).
    mutating func word() -> String? {
        skipSpace()
        let start = position
        while position < bytes.count, isIdentifierByte(bytes[position]) { position += 1 }
        return position > start ? String(decoding: bytes[start..<position], as: UTF8.self) : nil
    }

    /// One name, bare or quoted with "", [], `` or '', optionally `schema.` qualified.
    mutating func qualifiedName() -> Bool {
        guard name() else { return false }
        let save = position
        skipSpace()
        if position < bytes.count, bytes[position] == 0x2E {
            position += 1
            skipSpace()
            return name()
        }
        position = save
        return true
    }

    private mutating func name() -> Bool {
        guard position < bytes.count else { return false }
        let c = bytes[position]
        let close: UInt8?
        switch c {
        case 0x22: close = 0x22  // "
        case 0x27: close = 0x27  // '
        case 0x60: close = 0x60  // `
        case 0x5B: close = 0x5D  // [ ]
        default: close = nil
        }
        if let close {
            position += 1
            while position < bytes.count {
                if bytes[position] == close {
                    // A doubled quote is an escaped quote (not for [...]).
                    if close != 0x5D, position + 1 < bytes.count, bytes[position + 1] == close {
                        position += 2
                        continue
                    }
                    position += 1
                    return true
                }
                position += 1
            }
            return false
        }
        let start = position
        while position < bytes.count, isIdentifierByte(bytes[position]) { position += 1 }
        return position > start
    }

    private func isIdentifierByte(_ c: UInt8) -> Bool {
        (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x5F || c == 0x24 || c >= 0x80
    }
}
