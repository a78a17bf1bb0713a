// swift-tools-version:6.1
//
// Ferry: online SQLite data migration and versioned schema migrations.
//
// One SQLite engine per build, chosen by a package trait (never both: the two libraries export the
// same unversioned `sqlite3_*` symbols and break each other at run time):
//   - `SQLCipher` (default): SQLCipher 4.6.1 (SQLite 3.46.1), installed by `scripts/setup`.
//   - `SystemSQLite`: Debian's libsqlite3 (3.40.1); encryption then throws `FerryError.unsupported`.
//
// What an app fetches is what it uses. An app that links the `Ferry` product fetches swift-log
// alone: the packages of the other products are behind traits that are off by default, and SwiftPM
// leaves out the dependencies of disabled traits (test-only packages, swift-property-based, are
// pruned anyway):
//   - `Metrics`: the `FerryMetrics` product (swift-metrics);
//   - `ServiceLifecycle`: the `FerryServiceLifecycle` product (swift-service-lifecycle; enables
//     `Metrics`);
//   - `CommandLineTool`: the `ferry` executable (swift-argument-parser);
//   - `Development`: all three, for this repository's own builds (`make demo`, `make test`).
// An app that wants a service product names its traits with the engine's, e.g.
// `.package(url: …, from: …, traits: ["SQLCipher", "ServiceLifecycle"])`. Without its trait, a
// product's target compiles empty (its sources are `#if`-guarded), and `ferry` only says which
// trait it needs.
//
// The benchmarks (`ferry-bench` and the micro-benchmarks) are a package of their own,
// `Benchmarks/Package.swift`, so that neither this package's build nor an app that depends on Ferry
// pulls in the benchmark tooling.
import PackageDescription

let package = Package(
    name: "Ferry",
    platforms: [.macOS(.v13)],
    products: [
        // The library apps link. Its dependency graph is swift-log alone (see the traits above).
        .library(name: "Ferry", targets: ["Ferry"]),
        // Unstable, for `Benchmarks/` alone (underscored: no API promise between versions). Both
        // modules are `package` inside: Ferry's own targets use them. What stays public is what
        // the benchmarks call: the SQL front end's `FrontEndBenchmarks` SPI, and the raw
        // connection (`Connection`, `Statement`: they bypass Ferry's rewriter and guard) with the
        // value types Ferry re-exports. Apps use `Ferry`.
        .library(name: "_FerrySQL", targets: ["FerrySQL"]),
        .library(name: "_FerrySQLite", targets: ["FerrySQLite"]),
        // For services: the migration's metrics through swift-metrics (no backend), and background
        // auto-migration as a swift-service-lifecycle `Service`. Products of their own, each behind
        // its trait (off by default), so that an app that links only `Ferry` never fetches their
        // packages.
        .library(name: "FerryMetrics", targets: ["FerryMetrics"]),
        .library(name: "FerryServiceLifecycle", targets: ["FerryServiceLifecycle"]),
        // The command-line tool (trait `CommandLineTool`).
        .executable(name: "ferry", targets: ["FerryCLI"]),
    ],
    traits: [
        .trait(name: "SQLCipher", description: "Link SQLCipher 4.6.1: plain and encrypted databases."),
        .trait(name: "SystemSQLite", description: "Link the system libsqlite3; no encryption."),
        .trait(name: "Metrics", description: "The FerryMetrics product: the migration's metrics through swift-metrics."),
        .trait(name: "ServiceLifecycle", description: "The FerryServiceLifecycle product: auto-migration as a swift-service-lifecycle Service.",
               enabledTraits: ["Metrics"]),
        .trait(name: "CommandLineTool", description: "The ferry command-line tool (swift-argument-parser)."),
        .trait(name: "Development", description: "Everything this repository builds and tests: the tool and the service products.",
               enabledTraits: ["CommandLineTool", "ServiceLifecycle"]),
        .default(enabledTraits: ["SQLCipher"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.0"),
        // `swift package generate-documentation --target Ferry` (the DocC catalog, checked in CI).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // MARK: SQLite engines (exactly one is linked, by trait)
        .systemLibrary(name: "CSQLCipher", pkgConfig: "sqlcipher"),
        .systemLibrary(name: "CSQLite", providers: [.apt(["libsqlite3-dev"])]),

        // MARK: Connection layer
        .target(
            name: "FerrySQLite",
            dependencies: [
                .target(name: "CSQLCipher", condition: .when(traits: ["SQLCipher"])),
                .target(name: "CSQLite", condition: .when(traits: ["SystemSQLite"])),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // MARK: SQL front end (no SQLite calls)
        .target(name: "FerrySQL", exclude: ["README.md"]),

        // MARK: Public library
        .target(
            name: "Ferry",
            dependencies: [
                "FerrySQLite",
                "FerrySQL",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // MARK: Services
        .target(name: "FerryMetrics", dependencies: ["Ferry", .product(name: "Metrics", package: "swift-metrics", condition: .when(traits: ["Metrics"]))]),
        .target(
            name: "FerryServiceLifecycle",
            dependencies: [
                "Ferry",
                "FerryMetrics",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["ServiceLifecycle"])),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // MARK: Command-line tool
        .executableTarget(
            name: "FerryCLI",
            dependencies: [
                "Ferry",
                "FerrySQLite",  // the demo writes its legacy database, and commands peek at a target's header
                .product(name: "ArgumentParser", package: "swift-argument-parser", condition: .when(traits: ["CommandLineTool"])),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // MARK: Tests
        // One sandbox helper and the lookup of built executables, for every test target.
        .target(name: "FerryTestSupport", path: "Tests/FerryTestSupport"),
        // The crash and ownership tests' second process (never a test itself).
        .executableTarget(name: "FerryTestChild", dependencies: ["Ferry"], path: "Tests/FerryTestChild"),
        .testTarget(name: "FerrySQLiteTests", dependencies: ["FerrySQLite", "FerryTestSupport"]),
        .testTarget(
            name: "FerrySQLTests",
            dependencies: [
                "FerrySQL",
                "FerryTestSupport",
                // Only for CorpusExecutionTests, which runs corpus queries before and after printing.
                "FerrySQLite",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(name: "FerryTests", dependencies: ["Ferry", "FerrySQLite", "CFerryFaultVFS", "FerryTestSupport", "FerryTestChild"]),
        // A fault-injecting SQLite VFS for the fault tests (Tests/FerryTests/Faults): it wraps the
        // default VFS and links the same engine as Ferry (the define picks SQLCipher's header).
        .target(
            name: "CFerryFaultVFS",
            dependencies: [
                .target(name: "CSQLCipher", condition: .when(traits: ["SQLCipher"])),
                .target(name: "CSQLite", condition: .when(traits: ["SystemSQLite"])),
            ],
            path: "Tests/CFerryFaultVFS",
            cSettings: [.define("FERRY_FAULT_SQLCIPHER", .when(traits: ["SQLCipher"]))]
        ),
        .testTarget(
            name: "FerryServicesTests",
            dependencies: [
                "Ferry",
                "FerryMetrics",
                "FerryServiceLifecycle",
                "FerryTestSupport",
                .product(name: "MetricsTestKit", package: "swift-metrics", condition: .when(traits: ["ServiceLifecycle"])),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["ServiceLifecycle"])),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle", condition: .when(traits: ["ServiceLifecycle"])),
            ]
        ),
        // Runs the built `ferry` executable as a subprocess (the dependency makes sure it is built).
        .testTarget(name: "FerryCLITests", dependencies: ["Ferry", "FerrySQLite", "FerryCLI", "FerryTestSupport"]),

        // MARK: The documentation's snippets
        // Every ```swift block of README.md, Docs/ and the DocC articles, extracted by
        // scripts/extract-doc-snippets into Tests/DocSnippets/Generated (checked in, and checked to be
        // current by `make test`), so that building the tests compiles the documentation.
        .target(
            name: "DocSnippets",
            dependencies: [
                "Ferry",
                "FerryMetrics",
                "FerryServiceLifecycle",
                // The pages of the service products compile with their traits (`requires=`).
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["ServiceLifecycle"])),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/DocSnippets"
        ),
        // Runs one scope of a document's snippets in its current directory (the documents name
        // relative paths: each run gets a directory of its own, never the tests' process's).
        .executableTarget(name: "DocSnippetRunner", dependencies: ["DocSnippets"], path: "Tests/DocSnippetRunner"),
        .testTarget(name: "DocSnippetTests", dependencies: ["Ferry", "FerrySQLite", "DocSnippets", "DocSnippetRunner", "FerryTestSupport"]),

        // MARK: Fuzzing the SQL front end (see Sources/FerrySQL/README.md and scripts/fuzz-sql)
        .executableTarget(name: "FerrySQLFuzz", dependencies: ["FerrySQL"], path: "Tests/FerrySQLFuzz"),
    ],
    swiftLanguageModes: [.v6]
)
