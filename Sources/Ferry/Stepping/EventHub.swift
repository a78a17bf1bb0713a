import FerrySQLite
import Synchronization

/// Fans migration events out to every `AsyncStream` subscriber and the optional callback.
final class EventHub: Sendable {
    private struct State {
        var nextID = 0
        var continuations: [Int: AsyncStream<MigrationEvent>.Continuation] = [:]
        var callback: (@Sendable (MigrationEvent) -> Void)?
    }
    private let state = Mutex(State())

    /// A new stream that receives every event from now on (buffering the newest 1024).
    func stream() -> AsyncStream<MigrationEvent> {
        let (stream, continuation) = AsyncStream<MigrationEvent>.makeStream(bufferingPolicy: .bufferingNewest(1024))
        let id = state.withLock { s -> Int in
            s.nextID += 1
            s.continuations[s.nextID] = continuation
            return s.nextID
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.continuations.removeValue(forKey: id) }
        }
        return stream
    }

    /// Sets (or clears) the callback.
    func setCallback(_ callback: (@Sendable (MigrationEvent) -> Void)?) {
        state.withLock { $0.callback = callback }
    }

    /// Delivers an event to every subscriber.
    func send(_ event: MigrationEvent) {
        let (continuations, callback) = state.withLock { s in (Array(s.continuations.values), s.callback) }
        for continuation in continuations { continuation.yield(event) }
        callback?(event)
    }

    /// Ends every stream.
    func finish() {
        let continuations = state.withLock { s -> [AsyncStream<MigrationEvent>.Continuation] in
            defer { s.continuations.removeAll() }
            return Array(s.continuations.values)
        }
        for continuation in continuations { continuation.finish() }
    }
}
