import Testing
@testable import FerrySQL

@Suite struct ScriptSplitterTests {
    private func pieces(_ script: String) throws -> [String] {
        let source = SourceText(script)
        return try ScriptSplitter.split(script).map { source.string($0.range) }
    }

    @Test func splitsAtSemicolonsOutsideStringsAndComments() throws {
        #expect(try pieces("SELECT ';'; -- a;b\nSELECT 2 /* ; */;;  SELECT \"x;y\"") == ["SELECT ';'", "SELECT 2", "SELECT \"x;y\""])
    }

    @Test func keepsTriggerBodiesWhole() throws {
        let script = """
        CREATE TEMP TRIGGER tr AFTER INSERT ON t BEGIN
          INSERT INTO log VALUES (CASE WHEN new.a THEN 1 ELSE 2 END);
          DELETE FROM x;
        END; SELECT 1;
        CREATE TABLE end_(a); EXPLAIN CREATE TRIGGER t2 BEFORE DELETE ON t BEGIN SELECT 1; END
        """
        let parts = try pieces(script)
        #expect(parts.count == 4)
        #expect(parts[0].hasPrefix("CREATE TEMP TRIGGER") && parts[0].hasSuffix("END"))
        #expect(parts[1] == "SELECT 1")
        #expect(parts[2] == "CREATE TABLE end_(a)")
        #expect(parts[3].hasSuffix("SELECT 1; END"))
    }

    @Test func reportsRangesAndTerminators() throws {
        let slices = try ScriptSplitter.split("  a;\n b ")
        #expect(slices.map(\.range) == [2..<3, 6..<7])
        #expect(slices[0].terminator == 3..<4)
        #expect(slices[1].terminator == nil)
        #expect(slices[1].line == 2 && slices[1].column == 2)
        #expect(slices[1].tokens.map(\.kind) == [.identifier, .endOfInput])
    }
}
