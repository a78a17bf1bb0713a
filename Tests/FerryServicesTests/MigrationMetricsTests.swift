#if ServiceLifecycle
import Ferry
import FerryMetrics
import MetricsTestKit
import Testing

@Suite(.timeLimit(.minutes(2))) struct MigrationMetricsTests {
    @Test func countsMovedAndCleanedRowsTimesStepsAndFollowsTheTablesState() async throws {
        let fixture = try ServiceFixture(rows: 3000)
        let database = try fixture.open()
        defer { database.close() }
        let factory = TestMetrics()
        let metrics = MigrationMetrics(database: database, refreshInterval: .milliseconds(20), factory: factory)
        let names = metrics.names
        let dims = [("table", "messages"), ("source", "legacy.db/messages")]
        let reporting = Task { await metrics.run() }
        defer { reporting.cancel() }
        // The reporter's first read sets the gauges: 3000 rows left, the table pending.
        #expect(await ServiceFixture.eventually { (try? factory.expectGauge(names.tableState, dims + [("state", "pending")]).lastValue) == 1 })
        #expect(try factory.expectGauge(names.rowsLeft, dims).lastValue == 3000)
        #expect(try factory.expectGauge(names.tableState, dims + [("state", "migrating")]).lastValue == 0)
        // An app write moves two pending rows ahead of the stepper: they count as moved once.
        try await database.write { try $0.execute("UPDATE messages SET body = 'edited' WHERE id IN (1500, 2999)") }

        var steps = 0
        while try await database.step(budget: .milliseconds(2)) != nil { steps += 1 }
        #expect(steps > 1)

        // Every event reaches the reporter (asynchronously).
        #expect(await ServiceFixture.eventually { (try? factory.expectCounter(names.sourceRowsDeleted, dims).totalValue) == 3000 })
        #expect(try factory.expectCounter(names.rowsMoved, dims).totalValue == 3000)
        #expect(try factory.expectTimer(names.stepDuration, dims + [("kind", "move")]).values.allSatisfy { $0 > 0 })
        #expect(try factory.expectTimer(names.stepDuration, dims + [("kind", "move")]).values.count >= 1)
        #expect(try factory.expectTimer(names.stepDuration, dims + [("kind", "cleanup")]).values.count >= 1)
        #expect(await ServiceFixture.eventually { (try? factory.expectGauge(names.tableState, dims + [("state", "finished")]).lastValue) == 1 })
        #expect(try factory.expectGauge(names.rowsLeft, dims).lastValue == 0)
        #expect(try factory.expectGauge(names.tableState, dims + [("state", "pending")]).lastValue == 0)
        #expect(try factory.expectCounter(names.rowsQuarantined, dims).totalValue == 0)  // nothing conflicted
        #expect(try factory.expectCounter(names.errors, [("kind", "step")]).totalValue == 0)
    }

    @Test func errorsAndCheckpointWaitsAreCountedUnderTheGivenPrefix() async throws {
        let fixture = try ServiceFixture(rows: 100)
        let database = try fixture.open()
        defer { database.close() }
        let factory = TestMetrics()
        let metrics = MigrationMetrics(database: database, prefix: "app_migration", factory: factory)
        #expect(metrics.names.rowsMoved == "app_migration_rows_moved_total")
        let dims = [("table", "messages"), ("source", "legacy.db/messages")]
        while let report = try await database.step() { metrics.record(.batch(report)) }
        #expect(try factory.expectCounter(metrics.names.rowsMoved, dims).totalValue == 100)

        metrics.record(.error(.cancelled))
        metrics.record(.autoMigrationStopped(lastError: .cancelled))
        metrics.record(.checkpointWait(elapsed: .milliseconds(3)))
        #expect(try factory.expectCounter(metrics.names.errors, [("kind", "step")]).totalValue == 1)
        #expect(try factory.expectCounter(metrics.names.errors, [("kind", "stopped")]).totalValue == 1)
        #expect(try factory.expectCounter(metrics.names.checkpointWaits).totalValue == 1)
        #expect(try factory.expectTimer(metrics.names.checkpointWaitDuration).values == [3_000_000])
    }

    @Test func aSameFileSourceIsNamedByItsTableAlone() async throws {
        let box = ServiceFixture.Box()
        let database = try FerryDatabase(path: box.path("app.db"))
        defer { database.close() }
        try await database.write { db throws(FerryError) in
            try db.execute("CREATE TABLE old_messages(id INTEGER PRIMARY KEY, body TEXT)")
            try db.execute("INSERT INTO old_messages(body) VALUES ('a'), ('b')")
        }
        try database.register(MigrationPlan(sources: [MigrationSource(.targetFile, tables: [
            TableMapping(target: "messages", source: "old_messages"),
        ])]))
        let factory = TestMetrics()
        let metrics = MigrationMetrics(database: database, factory: factory)
        metrics.refresh()
        #expect(try factory.expectGauge(metrics.names.rowsLeft, [("table", "messages"), ("source", "old_messages")]).lastValue == 2)
    }
}
#endif
