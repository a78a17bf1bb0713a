#if !CommandLineTool
import Foundation

/// The `ferry` executable of a build without the `CommandLineTool` trait (the default for apps that
/// depend on Ferry, so that they do not fetch swift-argument-parser): it says how to build the tool.
@main
enum FerryWithoutTheToolTrait {
    static func main() {
        FileHandle.standardError.write(Data("""
            ferry: this build left out the command-line tool. Build it with its trait:
                swift build --traits SQLCipher,CommandLineTool --product ferry
            (`make demo` and `make test` do.)

            """.utf8))
        exit(2)
    }
}
#endif
