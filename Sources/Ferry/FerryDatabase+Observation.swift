import FerrySQLite

/// Observing a query: its results again each time the app's writes change them.
extension FerryDatabase {
    /// The rows of `sql`, now and again after each commit of this database's writes (`write { }`,
    /// `migrateSchema`) that changes them: a commit that leaves the rows as they were yields
    /// nothing, and neither do migration steps, which move rows without changing what a query
    /// reads. The query runs on a reader through Ferry's rewrite, so a migrating table reads as
    /// the finished one. The sequence ends when the task iterating it is cancelled, with the error
    /// of a query that fails, or when the database closes. Writes of other processes or
    /// connections are not seen.
    public func observe(_ sql: String, _ arguments: StatementArguments = .none) -> AsyncThrowingStream<[Row], any Error> {
        let (signals, end) = commits.subscribe()
        let (stream, continuation) = AsyncThrowingStream<[Row], any Error>.makeStream()
        let task = Task { [self] in
            var last: [Row]?
            var iterator = signals.makeAsyncIterator()
            repeat {
                do {
                    let rows = try await read { db throws(FerryError) in try db.fetchAll(sql, arguments) }
                    observationRuns.add(1, ordering: .relaxed)
                    if rows != last {
                        last = rows
                        continuation.yield(rows)
                    }
                } catch {
                    continuation.finish(throwing: error)
                    return
                }
            } while await iterator.next() != nil && !Task.isCancelled
            continuation.finish()
        }
        continuation.onTermination = { _ in
            task.cancel()
            end()
        }
        return stream
    }

    /// `observe(_:_:)` decoding each row into `Record` (its coding keys name the columns, as
    /// `keys` says).
    public func observe<Record: Decodable & Sendable>(_ type: Record.Type, _ sql: String, _ arguments: StatementArguments = .none,
                                                      keys: ColumnKeys = .asWritten) -> AsyncThrowingStream<[Record], any Error> {
        let rows = observe(sql, arguments)
        let (stream, continuation) = AsyncThrowingStream<[Record], any Error>.makeStream()
        let task = Task {
            do {
                for try await batch in rows {
                    continuation.yield(try batch.map { row throws(FerryError) in try sqlite(row.decoded(Record.self, keys: keys)) })
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }
}
