/// What the engine knows of a target's catalog at one instant, resolved against the live schemas.
/// A value: the engine publishes a whole new one (`PublishedCatalog`) after each load and each
/// committed step, so a reader never sees half an update, and reads take no lock beyond the copy.
struct CatalogSnapshot: Sendable {
    /// Incremented whenever the set of migrating tables or their shapes change: a redirector built
    /// for another epoch is built again.
    private(set) var epoch = 0
    /// The sources that still feed or await a table, by id.
    private(set) var sources: [Int64: SourceRecord] = [:]
    /// The sources with a file of their own (the ones a connection attaches), by id.
    private(set) var attachedFiles: [SourceRecord] = []
    /// Every mapping still migrating, in registration order.
    private(set) var mappings: [ResolvedMapping] = []
    /// Finished tables whose moved rows are still in the source (cleaned up by later steps).
    private(set) var cleanupMappings: [ResolvedMapping] = []
    /// Finished and cleaned tables (kept for progress reports).
    private(set) var finishedRecords: [TableRecord] = []
    /// The source tables (lower-cased) that no cleanup touched yet (every mapping reading them still
    /// migrates), by source id: their fingerprint rows must be present when the source is attached
    /// (see `SourceFingerprint`).
    private(set) var migratingSourceTables: [Int64: Set<String>] = [:]
    /// Targets the app renamed: lower-cased registered name → current name.
    private(set) var tableRenames: [String: String] = [:]
    /// See `MigrationEngine.cursorFloors`.
    private(set) var floors: [String: Int64] = [:]

    /// The catalog as a load read it, in the next epoch.
    /// - Parameter inTransaction: the load ran inside a transaction (which may roll back): no
    ///   cursor floor is taken from it.
    func loaded(sources: [Int64: SourceRecord], resolved: [ResolvedMapping], finished: [TableRecord],
                migratingSourceTables: [Int64: Set<String>], tableRenames: [String: String], inTransaction: Bool) -> CatalogSnapshot {
        var next = CatalogSnapshot()
        next.epoch = epoch + 1
        next.setSources(sources)
        next.mappings = resolved.filter { !$0.isFinished }
        next.cleanupMappings = resolved.filter { $0.isFinished }
        next.finishedRecords = finished
        next.migratingSourceTables = migratingSourceTables
        next.tableRenames = tableRenames
        next.floors = inTransaction ? [:] : Dictionary(next.mappings.compactMap { mapping in
            mapping.rowidFloor(mapping.record).map { (mapping.registeredName, $0) }
        }, uniquingKeysWith: min)
        return next
    }

    /// The catalog once `record` committed. A finished mapping leaves the migrating set (reads and
    /// writes stop paying for it), in the next epoch; a cleaned one leaves the cleanup set, and its
    /// source goes when nothing else needs it.
    func updating(_ record: TableRecord) -> CatalogSnapshot {
        var next = self
        let key = record.target.lowercased()
        if let index = mappings.firstIndex(where: { $0.targetName.lowercased() == key }) {
            var mapping = mappings[index]
            mapping.record = record
            if record.state == .finished {
                next.mappings.remove(at: index)
                next.cleanupMappings.append(mapping)
                // Cleanup may now delete rows of this source table, the fingerprint's sampled row among them.
                next.migratingSourceTables[mapping.source.id]?.remove(mapping.sourceShape.name.lowercased())
                next.epoch += 1
            } else {
                next.mappings[index] = mapping
            }
        } else if let index = cleanupMappings.firstIndex(where: { $0.targetName.lowercased() == key }) {
            next.cleanupMappings[index].record = record
            if record.sourceCleaned {
                next.cleanupMappings.remove(at: index)
                next.finishedRecords.append(record)
                let stillNeeded = Set((next.mappings + next.cleanupMappings).map(\.source.id))
                next.setSources(sources.filter { stillNeeded.contains($0.key) })
                next.epoch += 1
            }
        }
        return next
    }

    /// The catalog with `mapping`'s cursor floor raised to `floor` (while it still migrates).
    func raisingFloor(of mapping: ResolvedMapping, to floor: Int64) -> CatalogSnapshot {
        guard mappings.contains(where: { $0.registeredName == mapping.registeredName }) else { return self }
        var next = self
        next.floors[mapping.registeredName] = max(floors[mapping.registeredName] ?? .min, floor)
        return next
    }

    private mutating func setSources(_ sources: [Int64: SourceRecord]) {
        self.sources = sources
        attachedFiles = sources.values.filter { $0.path != nil }.sorted { $0.id < $1.id }
    }
}
