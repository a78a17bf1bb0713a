/// What one step may spend, passed down to every batch it runs (nothing of it is kept between
/// steps).
struct StepContext: Sendable {
    /// The step's time budget.
    let budget: Duration
    /// Whether the step may go on moving batches in its transaction while no app write waits
    /// (`Stepper.runChunks`); false for one batch.
    let yields: Bool
    /// The share of the budget the step's first batch may use: less than 1 when the step waited
    /// for a checkpoint before it could write (at most by four fifths), so that the step as a
    /// whole stays within its budget.
    let firstBatchShare: Double

    init(budget: Duration, spent: Duration = .zero, yields: Bool = true) {
        self.budget = budget
        self.yields = yields
        firstBatchShare = budget > .zero ? min(1, max(0.2, 1 - spent / budget)) : 1
    }
}
