// Fuzz target for FerrySQL: arbitrary bytes go through the tokenizer, the script splitter, the parser, the printer
// (whose output must parse back to an equal AST), the analysis and the rewriter (whose output must parse).
//
// Built by `scripts/fuzz-sql` with `-sanitize=fuzzer` and `-DFERRY_LIBFUZZER`, libFuzzer calls
// `LLVMFuzzerTestOneInput`. Built normally it is a replay tool: `FerrySQLFuzz file...` runs each file once.
import FerrySQL
#if !FERRY_LIBFUZZER
import Foundation
#endif

let policy = RewritePolicy(tables: TableSet(["t", "main.u"]), replacementForRead: { name in
    .subquery("SELECT * FROM main.\(name) UNION ALL SELECT * FROM src.\(name)")
})

func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError(message()) }
}

func fuzzOne(_ bytes: [UInt8]) {
    guard let source = try? Tokenizer.validate(utf8: bytes), let tokens = try? Tokenizer.tokenize(source) else { return }
    let slices = ScriptSplitter.split(tokens: tokens)
    for slice in slices {
        check(slice.range.lowerBound >= 0 && slice.range.upperBound <= bytes.count, "slice out of range")
    }
    let text = String(decoding: bytes, as: UTF8.self)
    if let statement = try? Parser.parseStatement(source: source, tokens: tokens) {
        let printed = Printer().print(statement)
        do {
            let again = try Parser.parseStatement(printed)
            check(again == statement, "round trip changed the AST:\n\(text)\n=> \(printed)")
        } catch {
            // Printing may add parentheses, which count towards the nesting limit.
            check(error.kind == .tooDeeplyNested, "printed text does not parse (\(error)):\n\(text)\n=> \(printed)")
        }
        let numbered = Printer(options: PrinterOptions(identifierQuoting: .always, numberAnonymousParameters: true)).print(statement)
        if let again = try? Parser.parseStatement(numbered) {
            check(Printer(options: PrinterOptions(identifierQuoting: .always, numberAnonymousParameters: true)).print(again) == numbered,
                  "quoted printing is not stable:\n\(numbered)")
        }
        _ = StatementAnalysis(statement)
        _ = statement.hashValue
        if let result = try? Rewriter(policy: policy).rewrite(text) {
            for rewritten in result.statements {
                do {
                    _ = try Parser.parseStatement(rewritten)
                } catch {
                    check(error.kind == .tooDeeplyNested, "rewritten text does not parse (\(error)):\n\(text)\n=> \(rewritten)")
                }
            }
        }
    }
    _ = try? Parser.parseScript(text)
}

#if FERRY_LIBFUZZER
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    fuzzOne(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

/// libFuzzer's own entry point, which runs the fuzzing loop with our callback.
@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzerDriver(_ argc: UnsafeMutablePointer<CInt>,
                     _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                     _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> CInt

/// SwiftPM links executables with `main` bound to `<target>_main`; it hands control to libFuzzer.
@_cdecl("FerrySQLFuzz_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var count = argc
    var arguments = argv
    return runFuzzerDriver(&count, &arguments, fuzzerTestOneInput)
}
#else
@main
struct FuzzReplay {
    static func main() {
        for path in CommandLine.arguments.dropFirst() {
            guard let data = FileManager.default.contents(atPath: path) else {
                print("cannot read \(path)")
                continue
            }
            fuzzOne(Array(data))
            print("ok \(path)")
        }
    }
}
#endif
