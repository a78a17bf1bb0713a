import Foundation

/// Peak resident memory above the idle footprint, from Linux's `/proc/self/status`.
///
/// `start()` resets the kernel's high-water mark (`echo 5 > /proc/self/clear_refs`) and takes the
/// current resident size as the idle footprint; `peakAboveIdle` is then `VmHWM - idle`.
/// Elsewhere (or when the reset is refused) it measures nothing and returns nil.
struct PeakMemory: Sendable {
    private let idle: Int?

    /// Resets the high-water mark and records the idle footprint.
    init() {
        idle = Self.resetHighWaterMark() ? Self.read("VmRSS") : nil
    }

    /// Peak resident bytes since `init` above the idle footprint.
    var peakAboveIdle: Int? {
        guard let idle, let peak = Self.read("VmHWM") else { return nil }
        return max(0, peak - idle)
    }

    /// The idle footprint in bytes.
    var idleBytes: Int? { idle }

    private static func resetHighWaterMark() -> Bool {
        #if !os(Linux)
        return false
        #else
        guard let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs") else { return false }
        defer { try? handle.close() }
        do {
            try handle.write(contentsOf: Data("5".utf8))
            return true
        } catch {
            return false
        }
        #endif
    }

    /// A `kB` field of `/proc/self/status`, in bytes.
    static func read(_ field: String) -> Int? {
        #if !os(Linux)
        return nil
        #else
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            let digits = line.dropFirst(field.count + 1).filter(\.isNumber)
            return Int(digits).map { $0 * 1024 }
        }
        return nil
        #endif
    }
}
