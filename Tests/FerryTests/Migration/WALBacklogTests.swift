import Testing
@testable import Ferry

/// What starts a background checkpoint: the frames no checkpoint copied yet, not the log's size.
@Suite struct WALBacklogTests {
    /// Commits that follow a checkpoint add to the backlog only what they wrote, even when the
    /// log never restarts (commits with no gap); before, the log's size started a checkpoint after
    /// every commit over the threshold.
    @Test func aCheckpointClearsTheFramesItCopied() {
        var backlog = WALBacklog()
        backlog.recordCommit(schema: "main", frames: 300)
        #expect(backlog.backlog(of: "main") == 300)
        let before = backlog.restartCounts
        backlog.recordCommit(schema: "main", frames: 302)  // committed while the checkpoint ran
        backlog.apply(schema: "main", copiedFrames: 300, restartsBefore: before)
        #expect(backlog.backlog(of: "main") == 2)
        backlog.recordCommit(schema: "main", frames: 310)
        #expect(backlog.backlog(of: "main") == 10)
        #expect(backlog.largestBytes(pageSizes: ["main": 1024]) == 10 * 1024)
        #expect(backlog.largestBytes(pageSizes: [:]) == 10 * 4096)
    }

    /// A log that restarted starts from nothing copied; a checkpoint of the old log counts for nothing.
    @Test func aRestartedLogForgetsTheOldCheckpoint() {
        var backlog = WALBacklog()
        backlog.recordCommit(schema: "main", frames: 500)
        let before = backlog.restartCounts
        backlog.recordCommit(schema: "main", frames: 4)  // the log restarted in this commit
        backlog.apply(schema: "main", copiedFrames: 500, restartsBefore: before)
        #expect(backlog.backlog(of: "main") == 4)
        backlog.recordCommit(schema: "main", frames: 600)
        #expect(backlog.backlog(of: "main") == 600)
        backlog.apply(schema: "main", copiedFrames: 600, restartsBefore: backlog.restartCounts)
        #expect(backlog.backlog(of: "main") == 0)
    }

    /// Each schema keeps its own count; a detached one is forgotten.
    @Test func schemasAreCountedApart() {
        var backlog = WALBacklog()
        backlog.recordCommit(schema: "main", frames: 10)
        backlog.recordCommit(schema: "ferry_src_1", frames: 40)
        backlog.apply(schema: "main", copiedFrames: 10, restartsBefore: backlog.restartCounts)
        #expect(backlog.backlog(of: "main") == 0 && backlog.backlog(of: "ferry_src_1") == 40)
        backlog.keep(only: ["main"])
        #expect(backlog.largestBytes(pageSizes: [:]) == 0)
    }
}
