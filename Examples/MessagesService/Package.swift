// swift-tools-version:6.1
//
// An example service: a Hummingbird 2 HTTP service over a database whose messages table migrates
// while it serves, with Ferry's migration running as a swift-service-lifecycle service and its
// metrics exported for Prometheus. A package of its own, so that Ferry's build stays light.
//
//     swift run --package-path Examples/MessagesService messages-service --db DIR/app.db --plan DIR/plan.json --port 8080
//
// See README.md in this directory.
import Foundation
import PackageDescription

// A path dependency is named after its directory, which is whatever the clone of Ferry is called.
let ferryPackage = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().lastPathComponent

let package = Package(
    name: "MessagesService",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "messages-service", targets: ["MessagesService"]),
    ],
    dependencies: [
        // The service products are behind their trait (an app that links only `Ferry` fetches swift-log alone).
        .package(path: "../..", traits: ["SQLCipher", "ServiceLifecycle"]),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.0"),
    ],
    targets: [
        .executableTarget(
            name: "MessagesService",
            dependencies: [
                .product(name: "Ferry", package: ferryPackage),
                .product(name: "FerryMetrics", package: ferryPackage),
                .product(name: "FerryServiceLifecycle", package: ferryPackage),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Starts the built service as a process, drives it over HTTP, stops it with SIGTERM
        // mid-migration, restarts it, and checks the database with Ferry.
        .testTarget(
            name: "MessagesServiceTests",
            dependencies: [
                .product(name: "Ferry", package: ferryPackage),
                "MessagesService",  // built before the tests run
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
