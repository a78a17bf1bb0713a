import Synchronization

/// Tells the observers of a database that the app committed a write (`FerryDatabase.observe`).
/// Each observer has a stream that holds at most one pending signal: signals that arrive while it
/// runs its query coalesce into one more run.
final class CommitSignal: Sendable {
    private let observers = Mutex<(next: Int, continuations: [Int: AsyncStream<Void>.Continuation])>((0, [:]))

    /// A new observer's stream of signals, and the call that ends it.
    func subscribe() -> (signals: AsyncStream<Void>, end: @Sendable () -> Void) {
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = observers.withLock { state -> Int in
            defer { state.next += 1 }
            state.continuations[state.next] = continuation
            return state.next
        }
        let end: @Sendable () -> Void = { [self] in
            observers.withLock { $0.continuations.removeValue(forKey: id) }?.finish()
        }
        continuation.onTermination = { _ in end() }
        return (stream, end)
    }

    /// Signals every observer.
    func send() {
        for continuation in observers.withLock({ Array($0.continuations.values) }) { continuation.yield() }
    }

    /// Ends every observer's stream (the database closes).
    func finish() {
        for continuation in observers.withLock({ state -> [AsyncStream<Void>.Continuation] in
            defer { state.continuations = [:] }
            return Array(state.continuations.values)
        }) { continuation.finish() }
    }
}
