#if CommandLineTool
import ArgumentParser
import Foundation
import Ferry

/// The `ferry` command-line tool.
@main
struct FerryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ferry",
        abstract: "Move SQLite data between tables and databases while the app keeps running.",
        version: FerryVersion.report,
        subcommands: [
            PlanCommand.self, StatusCommand.self, RunCommand.self, StepCommand.self, VerifyCommand.self,
            LintCommand.self, ShellCommand.self, DemoCommand.self,
        ]
    )

    /// Parses and runs a command. Usage errors are reported on one line (`error: ...`) instead of
    /// ArgumentParser's message with the full usage; help and version go to standard output.
    static func main() async {
        TerminalOutput.prepare(arguments: CommandLine.arguments)
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
            if TerminalOutput.standardOutputFailed {
                StandardError.print("error: cannot write to standard output: \(String(cString: strerror(errno)))")
                Foundation.exit(1)
            }
        } catch {
            let code = exitCode(for: error)
            if code == .success {
                exit(withError: error)  // --help, --version
            }
            if !(error is ExitCode) {
                var message = CLIError.oneLine(self.message(for: error))
                if message.hasPrefix("Error: ") { message.removeFirst("Error: ".count) }
                if !message.isEmpty { StandardError.print("error: " + message) }
            }
            Foundation.exit(code.rawValue)
        }
    }
}
#endif
