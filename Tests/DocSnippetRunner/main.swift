import DocSnippets
import Foundation

// `DocSnippetRunner Document/scope` runs that scope of a document's snippets (docSnippetScopes) in
// the current directory; the exit status is 1, the error on standard error, when it throws.
let arguments = CommandLine.arguments.dropFirst()
guard arguments.count == 1, let scope = docSnippetScopes[arguments.first!] else {
    FileHandle.standardError.write(Data("usage: DocSnippetRunner <Document/scope>, one of: \(docSnippetScopes.keys.sorted().joined(separator: ", "))\n".utf8))
    exit(2)
}
do {
    try await scope()
} catch {
    FileHandle.standardError.write(Data("\(arguments.first!): \(error)\n".utf8))
    exit(1)
}
