#if CommandLineTool
import ArgumentParser

/// `ferry plan`: the group of commands that work on migration plan files.
struct PlanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plan",
        abstract: "Work with migration plan files.",
        subcommands: [PlanApplyCommand.self]
    )
}
#endif
