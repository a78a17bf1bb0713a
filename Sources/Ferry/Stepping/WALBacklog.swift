/// How many frames of each WAL no checkpoint copied yet: what starts a background checkpoint.
///
/// The writer's commit hook reports the frames in a log since SQLite last restarted it, and a
/// checkpoint reports how many of the log's frames it copied. The log's size (`Checkpointer`'s
/// `frames`, which backpressure watches) keeps growing while commits follow each other with no
/// gap, even when every checkpoint copies all but the last few frames; starting a checkpoint
/// whenever the log is over the threshold then starts one after every commit (a thread woken, a
/// checkpoint's work on the other core, for a few new frames). The backlog counts what a
/// checkpoint would copy: the log's frames minus those a checkpoint of the same log copied.
///
/// A log restarts (its frame count falls) only in a commit; a checkpoint's count applies only to
/// the log it ran on, so one that ran across a restart is dropped (the backlog then overstates,
/// which costs a checkpoint, never a missed one).
struct WALBacklog: Sendable {
    /// Per schema (lower-cased): frames in the log after the writer's latest commit.
    private var logFrames: [String: Int] = [:]
    /// Per schema: frames of the current log a checkpoint copied.
    private var copied: [String: Int] = [:]
    /// Per schema: how many times the log restarted (a checkpoint's count is for one log).
    private var restarts: [String: Int] = [:]

    /// The writer committed and `schema`'s log now holds `frames` frames.
    mutating func recordCommit(schema: String, frames: Int) {
        if frames < logFrames[schema] ?? 0 {
            copied[schema] = 0
            restarts[schema, default: 0] += 1
        }
        logFrames[schema] = frames
    }

    /// What `apply(schema:copiedFrames:restartsBefore:)` needs from before a checkpoint ran.
    var restartCounts: [String: Int] { restarts }

    /// A checkpoint of `schema` that began when the logs had restarted `restartsBefore` times
    /// copied the log's first `frames` frames.
    mutating func apply(schema: String, copiedFrames frames: Int, restartsBefore: [String: Int]) {
        guard restarts[schema] ?? 0 == restartsBefore[schema] ?? 0 else { return }
        copied[schema] = max(copied[schema] ?? 0, frames)
    }

    /// Forgets schemas no longer attached.
    mutating func keep(only schemas: Set<String>) {
        logFrames = logFrames.filter { schemas.contains($0.key) }
        copied = copied.filter { schemas.contains($0.key) }
        restarts = restarts.filter { schemas.contains($0.key) }
    }

    /// The frames of `schema`'s log no checkpoint copied.
    func backlog(of schema: String) -> Int { max(0, (logFrames[schema] ?? 0) - (copied[schema] ?? 0)) }

    /// The largest backlog in bytes, given each schema's page size (4096 when unknown).
    func largestBytes(pageSizes: [String: Int]) -> Int {
        var largest = 0
        for schema in logFrames.keys { largest = max(largest, backlog(of: schema) * (pageSizes[schema] ?? 4096)) }
        return largest
    }
}
