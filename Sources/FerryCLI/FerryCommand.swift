import ArgumentParser
import Ferry

/// The `ferry` command-line tool.
@main
struct FerryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ferry",
        abstract: "Move SQLite data between tables and databases while the app keeps running.",
        version: FerryVersion.report,
        subcommands: [DemoCommand.self]
    )
}
