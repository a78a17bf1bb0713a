#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Key material held in memory that Ferry owns and wipes when the last reference goes away.
///
/// The bytes never appear in `description`, logs or errors. Swift strings and arrays handed in by the
/// caller may still hold their own copies: pass keys as bytes and drop them early where it matters.
final class SecretBytes: @unchecked Sendable, Hashable {
    // Immutable after init; wiped in deinit. @unchecked because of the raw buffer.
    private let buffer: UnsafeMutableBufferPointer<UInt8>

    init<C: Collection>(_ bytes: C) where C.Element == UInt8 {
        buffer = .allocate(capacity: max(bytes.count, 1))
        _ = buffer.initialize(from: bytes)
        count = bytes.count
    }

    /// The number of secret bytes.
    let count: Int

    deinit {
        wipe()
        buffer.deallocate()
    }

    /// Overwrites the bytes with zeros in a way the compiler may not optimize away. Called when
    /// the last reference goes; internal so tests can check it.
    func wipe() {
        guard let base = buffer.baseAddress else { return }
        #if canImport(Glibc)
        explicit_bzero(base, buffer.count)
        #else
        _ = memset_s(base, buffer.count, 0, buffer.count)
        #endif
    }

    /// Calls `body` with the bytes; do not let them escape.
    func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try body(UnsafeBufferPointer(rebasing: buffer[0..<count]))
    }

    static func == (lhs: SecretBytes, rhs: SecretBytes) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var diff: UInt8 = 0  // constant time in the length
        for i in 0..<lhs.count { diff |= lhs.buffer[i] ^ rhs.buffer[i] }
        return diff == 0
    }

    func hash(into hasher: inout Hasher) { hasher.combine(count) }
}
