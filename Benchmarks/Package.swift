// swift-tools-version:6.1
//
// Ferry's benchmarks: `ferry-bench` (a migration against plain SQL and WCDB's statement shapes, the
// app's cost, memory) and the micro-benchmarks (ordo-one/benchmark: the SQL front end, the rewrite
// cache, reads through a migration's union and one migration step). A package of its own so that the
// root package's build and an app's dependency graph do not pull in the benchmark tooling. See README.md
// in this directory.
//
//     swift run --package-path Benchmarks -c release ferry-bench
//
//     swift package --package-path Benchmarks benchmark
//     swift package --package-path Benchmarks benchmark thresholds check
import Foundation
import PackageDescription

// A path dependency is named after its directory, which is whatever the clone of Ferry is called.
let ferryPackage = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

let package = Package(
    name: "FerryBenchmarks",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "ferry-bench", targets: ["FerryBench"]),
    ],
    dependencies: [
        .package(path: ".."),
        // The trait list leaves out the default `RuntimeInterposer` trait, whose package is not needed.
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift.git", from: "0.2.0"),
    ],
    targets: [
        // Ferry against plain SQL and WCDB's statement shapes, app-side cost, memory:
        // `swift run --package-path Benchmarks -c release ferry-bench` (see README.md).
        .executableTarget(
            name: "FerryBench",
            dependencies: [
                .product(name: "Ferry", package: ferryPackage),
                // The baselines (plain SQL, WCDB's shapes) run on raw connections with prepared statements.
                .product(name: "_FerrySQLite", package: ferryPackage),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ],
            path: "FerryBench"
        ),
        // The plugin runs the executables under `Benchmarks/<Name>/`.
        .executableTarget(
            name: "FerryMicro",
            dependencies: [
                .product(name: "Ferry", package: ferryPackage),
                .product(name: "_FerrySQL", package: ferryPackage),
                .product(name: "_FerrySQLite", package: ferryPackage),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/FerryMicro",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
