#if ServiceLifecycle
import Ferry
import FerryServiceLifecycle
import Logging
import ServiceLifecycle
import ServiceLifecycleTestKit
import Testing

@Suite(.timeLimit(.minutes(2))) struct FerryMigrationServiceTests {
    /// Slow pacing: short batches, long pauses, so that a shutdown lands mid-migration.
    static let slow = AutoMigrationSchedule(budget: .milliseconds(1), interval: .milliseconds(100))

    @Test func gracefulShutdownStopsBetweenBatchesAndTheNextStartFinishes() async throws {
        let fixture = try ServiceFixture(rows: 20_000)
        let expected = try fixture.open().progress().rowsLeft
        #expect(expected == 20_000)

        // First run: shut down gracefully once a batch committed.
        do {
            let database = try fixture.open()
            defer { database.close() }
            let events = database.events()
            try await testGracefulShutdown { trigger in
                let service = FerryMigrationService(database: database, schedule: Self.slow, metrics: nil)
                async let run: Void = service.run()
                for await event in events {
                    if case .batch(let report) = event, report.rowsMoved > 0 { break }
                }
                trigger.triggerGracefulShutdown()
                try await run  // returns, without an error
            }
            let progress = try database.progress()
            #expect(progress.rowsMoved > 0)
            #expect(progress.rowsLeft > 0)
            #expect(try database.verify().isConsistent)
        }

        // Second run: resumes and finishes; every row exactly once.
        let database = try fixture.open()
        defer { database.close() }
        let service = FerryMigrationService(database: database, schedule: .drain, metrics: nil, completion: .returnImmediately)
        try await service.run()
        #expect(try database.isMigrated)
        let (count, distinct) = try await database.read { db in
            let row = try db.fetchOne("SELECT count(*), count(DISTINCT body) FROM messages")!
            return (try row.get(0, as: Int64.self), try row.get(1, as: Int64.self))
        }
        #expect(count == expected && distinct == expected)
        #expect(try database.verify().isConsistent)
    }

    @Test func whenFinishedItWaitsForShutdownByDefault() async throws {
        let fixture = try ServiceFixture(rows: 500)
        let database = try fixture.open()
        defer { database.close() }
        let events = database.events()
        try await testGracefulShutdown { trigger in
            let service = FerryMigrationService(database: database, schedule: .drain, metrics: nil)
            let returned = Flag()
            let run = Task {
                try await service.run()
                await returned.set()
            }
            for await event in events where event == .allFinished { break }
            #expect(try database.isMigrated)
            // Still running: a service group would end if it returned.
            try await Task.sleep(for: .milliseconds(100))
            #expect(await returned.value == false)
            trigger.triggerGracefulShutdown()
            try await run.value
            #expect(await returned.value)
        }
    }

    @Test func repeatedFailuresEndTheServiceWithTheLastError() async throws {
        let fixture = try ServiceFixture(rows: 100)
        try fixture.open().close()  // registers the plan
        let database = try fixture.open(readOnly: true)
        defer { database.close() }
        let schedule = AutoMigrationSchedule(maximumConsecutiveFailures: 3, initialBackoff: .milliseconds(1), maximumBackoff: .milliseconds(2))
        let service = FerryMigrationService(database: database, schedule: schedule, metrics: nil)
        await #expect { try await service.run() } throws: { error in
            (error as? FerryError)?.resultCode?.primary == .readonly
        }
    }

    @Test func aServiceGroupRunsItAndStopsItOnShutdown() async throws {
        let fixture = try ServiceFixture(rows: 20_000)
        let database = try fixture.open()
        defer { database.close() }
        let logger = Logger(label: "test")
        let group = ServiceGroup(configuration: .init(
            services: [.init(service: FerryMigrationService(database: database, schedule: Self.slow, metrics: nil))],
            logger: logger))
        let events = database.events()
        let running = Task { try await group.run() }
        for await event in events {
            if case .batch(let report) = event, report.rowsMoved > 0 { break }
        }
        await group.triggerGracefulShutdown()
        try await running.value
        #expect(try database.progress().rowsLeft > 0)
        #expect(try database.verify().isConsistent)
    }
}

/// A flag set once, read from other tasks.
actor Flag {
    private(set) var value = false
    func set() { value = true }
}
#endif
