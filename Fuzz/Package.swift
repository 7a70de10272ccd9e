// swift-tools-version: 6.1
//
// libFuzzer harnesses for swift-haptics' input parsers: a package of their own, built only by
// Scripts/fuzz with `-sanitize=fuzzer,address` into .build/fuzz, so the normal build never
// compiles them or their instrumentation. Each harness is an `LLVMFuzzerTestOneInput` function
// and a main that hands it to libFuzzer's driver; see Docs/Fuzzing.md.
import PackageDescription

let haptics = "swift-haptics"

let package = Package(
    name: "swift-haptics-fuzz",
    dependencies: [
        .package(name: haptics, path: ".."),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        .target(name: "CLibFuzzer"),
        .target(
            name: "FuzzSupport",
            dependencies: ["CLibFuzzer", .product(name: "Haptics", package: haptics), .product(name: "Logging", package: "swift-log")]),
        .executableTarget(name: "FuzzJSON", dependencies: ["FuzzSupport", .product(name: "HapticsSupport", package: haptics)]),
        .executableTarget(name: "FuzzAHAP", dependencies: ["FuzzSupport", .product(name: "Haptics", package: haptics)]),
        .executableTarget(name: "FuzzProfile", dependencies: ["FuzzSupport", .product(name: "Haptics", package: haptics)]),
        .executableTarget(name: "FuzzBoard", dependencies: ["FuzzSupport", .product(name: "GPIOBoards", package: haptics)]),
        .executableTarget(name: "FuzzALSA", dependencies: ["FuzzSupport", .product(name: "ALSADevices", package: haptics)]),
        .executableTarget(
            name: "FuzzTrace",
            dependencies: ["FuzzSupport", .product(name: "Haptics", package: haptics), .product(name: "HapticsInteraction", package: haptics)]),
        .executableTarget(name: "FuzzPolicy", dependencies: ["FuzzSupport", .product(name: "Haptics", package: haptics)]),
        .executableTarget(name: "FuzzHaptic", dependencies: ["FuzzSupport", .product(name: "Haptics", package: haptics)]),
        .executableTarget(
            name: "FuzzRecording",
            dependencies: ["FuzzSupport", .product(name: "Haptics", package: haptics), .product(name: "HapticsTools", package: haptics)]),
    ]
)
