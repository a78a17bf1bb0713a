// Hand-written equality and hashing for `Expression`. The synthesized versions switch over every case pair in one
// function, whose stack frame is several KiB in debug builds; deep expressions then overflow small thread stacks.
// Here the recursive path goes through a small dispatcher and one small function per case.

extension Expression {
    /// A number per case, to compare cases without binding payloads.
    var caseIndex: Int {
        switch self {
        case .literal: return 0
        case .parameter: return 1
        case .column: return 2
        case .unary: return 3
        case .binary: return 4
        case .collate: return 5
        case .cast: return 6
        case .case: return 7
        case .like: return 8
        case .nullTest: return 9
        case .between: return 10
        case .in: return 11
        case .exists: return 12
        case .subquery: return 13
        case .row: return 14
        case .function: return 15
        case .raise: return 16
        }
    }

    /// Whether two expressions are equal (source locations aside).
    package static func == (lhs: Expression, rhs: Expression) -> Bool {
        let index = lhs.caseIndex
        guard index == rhs.caseIndex else { return false }
        switch index {
        case 3: return equalUnary(lhs, rhs)
        case 4: return equalBinary(lhs, rhs)
        case 5: return equalCollate(lhs, rhs)
        case 15: return equalFunction(lhs, rhs)
        default: return equalOther(lhs, rhs)
        }
    }

    @inline(never)
    static func equalUnary(_ lhs: Expression, _ rhs: Expression) -> Bool {
        guard case .unary(let op1, let a) = lhs, case .unary(let op2, let b) = rhs else { return false }
        return op1 == op2 && a == b
    }

    @inline(never)
    static func equalBinary(_ lhs: Expression, _ rhs: Expression) -> Bool {
        guard case .binary(let a, let ta) = lhs, case .binary(let b, let tb) = rhs else { return false }
        return ta == tb && a == b
    }

    @inline(never)
    static func equalCollate(_ lhs: Expression, _ rhs: Expression) -> Bool {
        guard case .collate(let a, let na) = lhs, case .collate(let b, let nb) = rhs else { return false }
        return na == nb && a == b
    }

    @inline(never)
    static func equalFunction(_ lhs: Expression, _ rhs: Expression) -> Bool {
        guard case .function(let a) = lhs, case .function(let b) = rhs else { return false }
        return a == b
    }

    @inline(never)
    static func equalOther(_ lhs: Expression, _ rhs: Expression) -> Bool {
        switch (lhs, rhs) {
        case (.literal(let a), .literal(let b)): return a == b
        case (.parameter(let a), .parameter(let b)): return a == b
        case (.column(let a), .column(let b)): return a == b
        case (.cast(let a, let ta), .cast(let b, let tb)): return ta == tb && a == b
        case (.case(let a), .case(let b)): return a == b
        case (.like(let a), .like(let b)): return a == b
        case (.nullTest(let a, let na), .nullTest(let b, let nb)): return na == nb && a == b
        case (.between(let a), .between(let b)): return a == b
        case (.in(let a), .in(let b)): return a == b
        case (.exists(let a), .exists(let b)): return a == b
        case (.subquery(let a), .subquery(let b)): return a == b
        case (.row(let a), .row(let b)): return a == b
        case (.raise(let a), .raise(let b)): return a == b
        default: return false
        }
    }

    /// Hashes the expression (source locations aside).
    package func hash(into hasher: inout Hasher) {
        hasher.combine(caseIndex)
        switch caseIndex {
        case 3: hashUnary(&hasher)
        case 4: hashBinary(&hasher)
        case 15: hashFunction(&hasher)
        default: hashOther(&hasher)
        }
    }

    @inline(never)
    func hashUnary(_ hasher: inout Hasher) {
        guard case .unary(let op, let a) = self else { return }
        hasher.combine(op)
        a.hash(into: &hasher)
    }

    @inline(never)
    func hashBinary(_ hasher: inout Hasher) {
        guard case .binary(let a, let terms) = self else { return }
        a.hash(into: &hasher)
        hasher.combine(terms)
    }

    @inline(never)
    func hashFunction(_ hasher: inout Hasher) {
        guard case .function(let call) = self else { return }
        hasher.combine(call)
    }

    @inline(never)
    func hashOther(_ hasher: inout Hasher) {
        switch self {
        case .literal(let a): hasher.combine(a)
        case .parameter(let a): hasher.combine(a)
        case .column(let a): hasher.combine(a)
        case .collate(let a, let name): hasher.combine(name); a.hash(into: &hasher)
        case .cast(let a, let type): hasher.combine(type); a.hash(into: &hasher)
        case .case(let a): hasher.combine(a)
        case .like(let a): hasher.combine(a)
        case .nullTest(let a, let isNull): hasher.combine(isNull); a.hash(into: &hasher)
        case .between(let a): hasher.combine(a)
        case .in(let a): hasher.combine(a)
        case .exists(let a): hasher.combine(a)
        case .subquery(let a): hasher.combine(a)
        case .row(let a): hasher.combine(a)
        case .raise(let a): hasher.combine(a)
        case .unary, .binary, .function: break
        }
    }
}
