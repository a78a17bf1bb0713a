#if CommandLineTool
import Foundation
import Testing
import Ferry

/// A plan file whose filter reads the clock or randomness is refused by `ferry plan apply`,
/// `ferry run` and `ferry shell`: one error line naming the function, nothing changed; the same
/// plan spelled differently is accepted as the registered one.
@Suite(.timeLimit(.minutes(2)))
struct DeterministicFilterCommandTests {
    @Test func clockAndRandomFiltersAreRefusedWithOneLine() throws {
        let fixture = try Fixture(rows: 40)
        try fixture.withConnection("app.db") { db in try db.execute("CREATE TABLE settings(key TEXT PRIMARY KEY, value TEXT)") }
        let app = try fixture.dump("app.db")
        let legacy = try fixture.dump("legacy.db")
        for (filter, name) in [("id < unixepoch()", "unixepoch()"), ("random() % 2 = 0", "random()"), ("id < julianday('now')", "julianday('now')")] {
            try fixture.writePlan("bad.json", filter: filter)
            for command in [["plan", "apply", "bad.json"], ["run", "--plan", "bad.json"], ["shell", "--plan", "bad.json"]] {
                let result = try CLI.run(command, in: fixture.directory, input: "")
                expectOneLineError(result, containing: name)
                #expect(try fixture.dump("app.db") == app, "\(command) \(filter)")
                #expect(try fixture.dump("legacy.db") == legacy, "\(command) \(filter)")
            }
        }
    }

    @Test func aRespelledPlanIsTheRegisteredPlan() throws {
        let fixture = try Fixture(rows: 40)
        try fixture.writePlan("plan.json", filter: "conversation_id < 10")
        #expect(try fixture.ferry("plan", "apply", "plan.json").status == 0)
        try fixture.writePlan("respelled.json", filter: "(CONVERSATION_ID<10)")
        let result = try fixture.ferry("step", "--plan", "respelled.json")
        #expect(result.status == 0, "\(result)")
        try fixture.writePlan("other.json", filter: "conversation_id < 11")
        expectOneLineError(try fixture.ferry("step", "--plan", "other.json"), containing: "already fed")
    }
}
#endif
