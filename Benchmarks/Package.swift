// swift-tools-version:6.1
//
// Ferry's micro-benchmarks (ordo-one/benchmark): the SQL front end, the rewrite cache, reads through a
// migration's union and one migration step. A package of its own so that the root package's build and
// tests do not pull in the benchmark tooling. See README.md in this directory.
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
    dependencies: [
        .package(path: ".."),
        // The trait list leaves out the default `RuntimeInterposer` trait, whose package is not needed.
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        // The plugin runs the executables under `Benchmarks/<Name>/`.
        .executableTarget(
            name: "FerryMicro",
            dependencies: [
                .product(name: "Ferry", package: ferryPackage),
                .product(name: "FerrySQL", package: ferryPackage),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/FerryMicro",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
