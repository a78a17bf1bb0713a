#if CommandLineTool
import ArgumentParser
import Foundation
import Logging
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `--verbose`: SQLite's diagnostics (its error log: I/O trouble, corruption warnings) on standard
/// error. Without it a failed command prints exactly one line there.
struct DiagnosticsOptions: ParsableArguments {
    @Flag(help: "Also print SQLite's diagnostics (warnings about I/O, corruption, recovery) on standard error.")
    var verbose = false
}

/// How `ferry` writes to its standard streams: never a crash when one cannot be written (a full
/// disk, a closed pipe), and an exit status that says so.
enum TerminalOutput {
    /// Prepares the process before anything runs: a write to a closed pipe returns an error
    /// instead of killing the process, and swift-log (SQLite's diagnostics, label `ferry.sqlite`)
    /// goes to standard error only with `--verbose`. `--verbose` is looked for in the arguments
    /// before parsing because SQLite may log while a command parses and opens its files.
    static func prepare(arguments: [String]) {
        signal(SIGPIPE, SIG_IGN)
        let verbose = arguments.contains("--verbose")
        LoggingSystem.bootstrap { label in
            guard verbose else { return SwiftLogNoOpLogHandler() }
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = .debug
            return handler
        }
    }

    /// Writes `text` to a file descriptor with write(2), retrying interrupted and partial writes;
    /// false when it could not be written (the caller decides; nothing traps).
    @discardableResult
    static func write(_ text: String, to descriptor: Int32) -> Bool {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { systemWrite(descriptor, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                return false
            }
            bytes = bytes.dropFirst(written)
        }
        return true
    }

    private static func systemWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
        #if canImport(Glibc)
        return Glibc.write(descriptor, buffer, count)
        #else
        return Darwin.write(descriptor, buffer, count)
        #endif
    }

    /// True when standard output could not be written: flushes the C library's streams (what
    /// `print` wrote is buffered there), which fails when a write failed.
    static var standardOutputFailed: Bool {
        fflush(nil) != 0
    }
}
#endif
