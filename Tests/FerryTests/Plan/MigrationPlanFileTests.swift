import FerryTestSupport
import Foundation
import Testing
@testable import Ferry

@Suite struct MigrationPlanFileTests {
    private func write(_ json: String, in box: Sandbox) throws -> String {
        let path = box.path("plan.json")
        try json.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func resolvesPathsKeysAndTheSchedule() throws {
        let box = Sandbox()
        let path = try write("""
            { "target": { "path": "app.db", "keyEnv": "APP_KEY" },
              "sources": [ { "path": "legacy.db", "keepJournalMode": true, "tables": [ { "source": "messages", "filter": "id > 10" } ] },
                           { "path": null, "tables": [ { "source": "old", "target": "new",
                                                          "columns": [ { "column": "n", "from": "n + 1" } ] } ] } ],
              "schedule": { "budgetMilliseconds": 7, "drain": true } }
            """, in: box)
        let file = try MigrationPlanFile.load(path: path, environment: ["APP_KEY": "secret"])
        #expect(file.targetPath == URL(fileURLWithPath: box.path("app.db")).standardizedFileURL.path)
        #expect(file.targetCipher == .passphrase("secret"))
        #expect(file.schedule == .init(budget: .milliseconds(7), interval: nil, drain: true))
        let mappings = file.plan.mappings
        #expect(mappings.map(\.table.target) == ["messages", "new"])
        #expect(mappings[0].source.location == .file(URL(fileURLWithPath: box.path("legacy.db")).standardizedFileURL.path))
        #expect(mappings[0].table.filter == "id > 10")
        #expect(mappings[1].source.location == .targetFile)
        #expect(mappings.map(\.source.keepsJournalMode) == [true, false])
        #expect(mappings[1].table.columns == [ColumnFeed("n", from: "n + 1")])
    }

    @Test func aMissingFileIsFileNotFound() {
        let path = Sandbox().path("nope.json")
        #expect(throws: FerryError.fileNotFound(path: path)) { try MigrationPlanFile.load(path: path) }
    }

    @Test(arguments: [
        ("{", "malformed JSON"),
        (#"{ "target": { "path": "a.db" }, "sources": [], "extra": 1 }"#, #"unknown field "extra""#),
        (#"{ "target": { "path": "a.db" }, "sources": [] }"#, "sources: the plan has no source"),
        (#"{ "target": { "path": "a.db", "keyEnv": "UNSET_FERRY_KEY" }, "sources": [ { "path": "b.db", "tables": [ { "source": "t" } ] } ] }"#,
         "target.keyEnv: environment variable UNSET_FERRY_KEY is not set"),
        (#"{ "target": { "path": "a.db" }, "sources": [ { "path": "b.db", "tables": [ { "source": 3 } ] } ] }"#,
         "sources[0].tables[0].source: expected a string"),
        (#"{ "target": { "path": "a.db" }, "sources": [ { "path": "b.db", "keepJournalMode": 1, "tables": [ { "source": "t" } ] } ] }"#,
         "sources[0].keepJournalMode: expected true or false"),
        (#"{ "target": { "path": "a.db" }, "sources": [ { "path": "b.db", "tables": [ { "source": "t" } ] } ], "schedule": { "budgetMilliseconds": 0 } }"#,
         "schedule.budgetMilliseconds: must be at least 1"),
        // A field named twice used to pass, one of its values silently dropped.
        (#"{ "target": { "path": "a.db" }, "target": { "path": "b.db" }, "sources": [ { "path": "b.db", "tables": [ { "source": "t" } ] } ] }"#,
         #"the document: duplicate field "target""#),
        (#"{ "target": { "path": "a.db", "path": "c.db" }, "sources": [ { "path": "b.db", "tables": [ { "source": "t" } ] } ] }"#,
         #"target: duplicate field "path""#),
        (#"{ "target": { "path": "a.db" }, "sources": [ { "path": "b.db", "tables": [ { "source": "t" }, { "source": "u", "filter": "x > 1", "fil\u0074er": "1" } ] } ] }"#,
         #"sources[0].tables[1]: duplicate field "filter""#),
    ])
    func anInvalidFileIsATypedErrorNamingTheField(json: String, reason: String) throws {
        let box = Sandbox()
        let path = try write(json, in: box)
        #expect { try MigrationPlanFile.load(path: path, environment: [:]) } throws: { error in
            guard case FerryError.invalidPlanFile(let errorPath, let message) = error else { return false }
            return errorPath == path && message.contains(reason)
        }
    }

    /// The same name in different objects, or as a value, is no duplicate.
    @Test func theSameNameInDifferentObjectsIsNoDuplicate() throws {
        let box = Sandbox()
        let path = try write("""
            { "target": { "path": "path" }, "sources": [ { "path": "b.db", "tables": [ { "source": "t", "filter": "'\\"path\\",' <> ''" },
                                                                                      { "source": "t", "target": "u" } ] } ] }
            """, in: box)
        let file = try MigrationPlanFile.load(path: path, environment: [:])
        #expect(file.plan.mappings.map(\.table.target) == ["t", "u"])
    }

    /// A NUL byte in a path used to pass: the target was created as `app.db%00.x` (Foundation's
    /// URL escapes it). Now it is a typed error naming the field, and no file is created.
    @Test(arguments: [
        (#"{ "target": { "path": "app.db\u0000.x" }, "sources": [ { "path": "b.db", "tables": [ { "source": "t" } ] } ] }"#, "target.path"),
        (#"{ "target": { "path": "app.db" }, "sources": [ { "path": "b.db", "tables": [ { "source": "t" } ] }, { "path": "\u0000", "tables": [ { "source": "t" } ] } ] }"#,
         "sources[1].path"),
    ])
    func aPathWithANulByteIsRefused(json: String, field: String) throws {
        let box = Sandbox()
        let path = try write(json, in: box)
        #expect { try MigrationPlanFile.load(path: path, environment: [:]) } throws: { error in
            guard case FerryError.invalidPlanFile(path, let message) = error else { return false }
            return message.hasPrefix("\(field): contains a NUL byte")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: box.path(".")) == ["plan.json"])
    }
}
