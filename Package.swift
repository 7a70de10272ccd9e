// swift-tools-version: 6.1
//
// swift-haptics: a plugin-based haptic hardware abstraction layer for Linux.
//
// Layout (see README.md and Docs/Architecture.md):
//   Sources/CHapticsABI     the versioned C contract every backend plugin implements
//   Sources/Haptics         the core: clock, devices, power model, plugin loader, patterns, engine
//   Sources/HapticsPluginKit  helpers for writing a backend in Swift (linked into plugins, never the host)
//   Sources/haptic-cal      the CLI
//   Sources/haptics-bench   the benchmark executable (release build, prints tables)
//   Sources/hapticsd        the haptics service (D-Bus, sd-bus); Sources/HapticsDaemon is its library
//   Sources/HapticsBus      the one Swift face of sd-bus (libsystemd), for the service and its client plugin
//   Plugins/*               backends, each a `.dynamic` product `libhaptics-NAME.so` loaded with dlopen
//   Tests/                  Swift Testing suites; Tests/VMRig holds the helpers for the kernel VM rig
import PackageDescription

let package = Package(
    name: "swift-haptics",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Haptics", targets: ["Haptics"]),
        .executable(name: "haptic-cal", targets: ["haptic-cal"]),
        .executable(name: "haptics-bench", targets: ["haptics-bench"]),
        .executable(name: "hapticsd", targets: ["hapticsd"]),
        // Installed beside the hardware plugins: stops their actuators when a process dies unseen (SIGKILL, OOM).
        .executable(name: "haptics-stop-guard", targets: ["haptics-stop-guard"]),
        // Backends: the loader picks up files named libhaptics-NAME.so.
        .library(name: "haptics-null", type: .dynamic, targets: ["HapticsNullBackend"]),
        .library(name: "haptics-recording", type: .dynamic, targets: ["HapticsRecordingBackend"]),
        .library(name: "haptics-hid", type: .dynamic, targets: ["HapticsHIDBackend"]),
        .library(name: "haptics-gpio", type: .dynamic, targets: ["HapticsGPIOBackend"]),
        .library(name: "haptics-i2c", type: .dynamic, targets: ["HapticsI2CBackend"]),
        // The client transport the core loads with dlopen when hapticsd runs (not a backend: another prefix).
        .library(name: "hapticsd-client", type: .dynamic, targets: ["HapticsDaemonClient"]),
        .library(name: "haptics-evdev", type: .dynamic, targets: ["HapticsEvdevBackend"]),
        .library(name: "haptics-alsa", type: .dynamic, targets: ["HapticsALSABackend"]),
        .library(name: "HapticsCalibration", targets: ["HapticsCalibration"]),
        .library(name: "HapticsInteraction", targets: ["HapticsInteraction"]),
        .library(name: "HapticsTools", targets: ["HapticsTools"]),
        // Audio files (WAV, FLAC, Ogg, MP3) decoded into clips for AHAP AudioCustom events (libsndfile).
        .library(name: "HapticsAudioFile", targets: ["HapticsAudioFile"]),
        .library(name: "HapticsAudioAnalysis", targets: ["HapticsAudioAnalysis"]),
        // The JSON layer, the board-file and ALSA device-file readers, for the fuzzing harnesses in Fuzz/ (a package of
        // their own, so the sanitizer build never touches this one's).
        .library(name: "HapticsSupport", targets: ["HapticsSupport"]),
        .library(name: "GPIOBoards", targets: ["GPIOBoards"]),
        .library(name: "ALSADevices", targets: ["ALSADevices"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
        // `swift package generate-documentation` (Scripts/docs): a command plugin, never linked.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // The contract.
        .target(name: "CHapticsABI"),

        // The core. Links no hardware library.
        .target(name: "CHapticsSystem"),
        .target(name: "HapticsSupport", dependencies: ["CHapticsSystem", .product(name: "SystemPackage", package: "swift-system")]),
        .target(
            name: "Haptics",
            dependencies: [
                "CHapticsABI", "CHapticsSystem", "HapticsSupport", "HapticsTriggers", .product(name: "Logging", package: "swift-log"),
            ]),

        // Backend side.
        .target(
            name: "HapticsPluginKit",
            dependencies: ["CHapticsABI", "CHapticsSystem", "HapticsSupport", "HapticsTriggers"]),
        .target(name: "HapticsNullBackend", dependencies: ["CHapticsABI", "HapticsPluginKit"], path: "Plugins/Null"),
        // The recording backend, and its file format defined once (the backend writes it, HapticsTools reads it).
        .target(name: "HapticsRecordingFormat", dependencies: ["HapticsSupport", "HapticsTriggers"], path: "Plugins/Recording/Format"),
        .target(
            name: "HapticsRecordingBackend", dependencies: ["CHapticsABI", "HapticsPluginKit", "HapticsSupport", "HapticsRecordingFormat", "HapticsTriggers", "DRV260x"], path: "Plugins/Recording",
            exclude: ["Format"]),
        // HID gamepads: pure report encoders (tested directly) and the hidapi backend.
        // The stop guard both hardware plugins link (signals, exit) and its supervisor (every other death).
        .target(name: "HapticsStopGuard", path: "Plugins/StopGuard/Library"),
        .executableTarget(name: "haptics-stop-guard", dependencies: ["HapticsStopGuard"], path: "Plugins/StopGuard/Supervisor"),
        .target(name: "HapticsTriggers", dependencies: ["CHapticsABI"]),
        .target(name: "HIDReports", dependencies: ["HapticsTriggers"], path: "Plugins/HID/Reports"),
        .target(
            name: "HapticsHIDBackend", dependencies: ["CHapticsABI", "HapticsPluginKit", "HapticsSupport", "HIDReports", "CHidapi", "HapticsStopGuard", "StopGuardKit"],
            path: "Plugins/HID/Backend"),
        // GPIO/PWM motors: board files and sysfs PWM (pure, tested directly), libgpiod v1/v2 shim, the backend.
        .target(name: "GPIOBoards", dependencies: ["HapticsSupport", "DRV260x"], path: "Plugins/GPIO/Boards"),
        // Haptic driver ICs on I²C (DRV2605L): registers, voltages, plans and the ROM library (pure,
        // tested directly), the i2c-dev shim and the backend.
        .target(name: "DRV260x", path: "Plugins/I2C/Chip"),
        .target(name: "CI2CShim", path: "Plugins/I2C/Shim"),
        .target(
            name: "HapticsI2CBackend", dependencies: ["CHapticsABI", "HapticsPluginKit", "HapticsSupport", "GPIOBoards", "GPIOLineKit", "CGpiodShim", "DRV260x", "CI2CShim", "HapticsStopGuard", "StopGuardKit"],
            path: "Plugins/I2C/Backend"),
        .target(name: "CGpiodShim", dependencies: ["CGpiod"], path: "Plugins/GPIO/Shim"),
        // GPIO output lines through the shim: the gpio backend's enables and directions, the i2c backend's EN.
        .target(name: "GPIOLineKit", dependencies: ["CGpiodShim", "GPIOBoards", "HapticsPluginKit", "HapticsSupport", "HapticsStopGuard"], path: "Plugins/GPIO/Lines"),
        // The stop guard's Swift face for the plugins that link it: its warnings, for the host's log.
        .target(name: "StopGuardKit", dependencies: ["HapticsStopGuard", "HapticsPluginKit"], path: "Plugins/StopGuard/Swift"),
        .target(
            name: "HapticsGPIOBackend", dependencies: ["CHapticsABI", "HapticsPluginKit", "HapticsSupport", "GPIOBoards", "GPIOLineKit", "CGpiodShim", "HapticsStopGuard", "StopGuardKit"],
            path: "Plugins/GPIO/Backend"),
        // Kernel force feedback (evdev): pure effect rendering and classification (tested directly), the
        // ioctl shim, and the libudev backend.
        .target(name: "EvdevEffects", path: "Plugins/Evdev/Effects"),
        .target(name: "CEvdevShim", path: "Plugins/Evdev/Shim"),
        .target(
            name: "HapticsEvdevBackend", dependencies: ["CHapticsABI", "HapticsPluginKit", "HapticsSupport", "EvdevEffects", "CEvdevShim", "CUdev"],
            path: "Plugins/Evdev/Backend"),
        // Waveform devices on ALSA PCMs: device files and DualSense cards (pure, tested directly), the alsa-lib backend.
        .target(name: "ALSADevices", dependencies: ["HapticsSupport"], path: "Plugins/ALSA/Devices"),
        .target(
            name: "HapticsALSABackend", dependencies: ["CHapticsABI", "HapticsPluginKit", "HapticsSupport", "ALSADevices", "HIDReports", "CAlsa", "CHapticsSystem", "HapticsStopGuard"],
            path: "Plugins/ALSA/Backend"),
        .systemLibrary(
            name: "CAlsa", path: "Plugins/CAlsa", pkgConfig: "alsa",
            providers: [.apt(["libasound2-dev"])]),
        .systemLibrary(
            name: "CUdev", path: "Plugins/CUdev", pkgConfig: "libudev",
            providers: [.apt(["libudev-dev"])]),
        .systemLibrary(
            name: "CHidapi", path: "Plugins/CHidapi", pkgConfig: "hidapi-hidraw",
            providers: [.apt(["libhidapi-dev"])]),
        .systemLibrary(
            name: "CGpiod", path: "Plugins/CGpiod", pkgConfig: "libgpiod",
            providers: [.apt(["libgpiod-dev"])]),

        // The service: sd-bus through one Swift wrapper; the interface tables in C (sd-bus's macros).
        .systemLibrary(
            name: "CSystemd", path: "Sources/CSystemd", pkgConfig: "libsystemd",
            providers: [.apt(["libsystemd-dev"])]),
        .target(name: "HapticsBus", dependencies: ["CSystemd"]),
        .target(name: "CHapticsdInterfaces", dependencies: ["CSystemd"], path: "Sources/hapticsd-interfaces"),
        .target(
            name: "HapticsDaemon",
            dependencies: [
                "Haptics", "HapticsSupport", "HapticsBus", "CHapticsdInterfaces", "CSystemd", "CHapticsSystem", "HapticsAudioAnalysis",
                .product(name: "Logging", package: "swift-log"),
            ]),
        .executableTarget(
            name: "hapticsd",
            dependencies: [
                "HapticsDaemon", "Haptics", "HapticsBus", .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        .target(
            name: "HapticsDaemonClient", dependencies: ["CHapticsABI", "HapticsBus", "HapticsSupport", "HapticsPluginKit", "HapticsTriggers"],
            path: "Plugins/DaemonClient"),

        // Tools over the core, out of it: the SVG charts every plot is drawn with, and the reader of
        // the recording backend's files.
        .target(name: "HapticsTools", dependencies: ["Haptics", "HapticsSupport", "HapticsRecordingFormat"]),
        // Audio files decoded into clips (AHAP AudioCustom events), through libsndfile; the core does not link it.
        .systemLibrary(
            name: "CSndfile", path: "Sources/CSndfile", pkgConfig: "sndfile",
            providers: [.apt(["libsndfile1-dev"])]),
        .target(name: "HapticsAudioFile", dependencies: ["Haptics", "CSndfile"]),
        // Audio to haptics: onsets, envelopes and brightness from audio, as a `.haptic` clip (pure Swift).
        .target(name: "HapticsAudioAnalysis", dependencies: ["Haptics"]),

        // Calibration: measurement sources, fitting, profiles on disk.
        .target(
            name: "HapticsCalibration", dependencies: ["Haptics", "HapticsSupport", "HapticsTools", .product(name: "Logging", package: "swift-log")]),

        // Interaction haptics: hit regions, magnetism, detents, traces.
        .target(name: "HapticsInteraction", dependencies: ["Haptics", "HapticsSupport", "HapticsTools"]),

        // Tools.
        .executableTarget(
            name: "haptic-cal",
            dependencies: [
                "Haptics", "HapticsSupport", "HapticsTools", "HapticsCalibration", "HapticsInteraction", "HapticsAudioFile", "HapticsAudioAnalysis",
                .product(name: "ArgumentParser", package: "swift-argument-parser"), .product(name: "Logging", package: "swift-log"),
            ]),
        .executableTarget(
            name: "haptics-bench",
            dependencies: [
                "Haptics", "HapticsSupport", "HapticsTools", "HapticsBus", "HapticsAudioFile", "HapticsAudioAnalysis",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),
        // A program written against the public API only, run by the tests with and without hapticsd.
        .executableTarget(name: "haptics-impact-example", dependencies: ["Haptics"], path: "Examples/Swift/ImpactExample"),

        // Tests. Backends are never linked in: tests load them with dlopen like any host.
        .target(name: "CVMRig", path: "Tests/CVMRig"),
        // Per-thread heap allocation counts, for the tests that pin "no allocation on the trigger path".
        .target(name: "CMallocCounter", path: "Tests/CMallocCounter"),
        // A client that opens devices, drives them and dies the way a test asks (the stop-guard tests).
        .executableTarget(name: "haptics-crash-probe", dependencies: ["Haptics"], path: "Tests/CrashProbe"),
        .target(name: "VMRig", dependencies: ["CVMRig", "CHidapi", "CGpiod"], path: "Tests/VMRig"),
        .testTarget(name: "HapticsTests", dependencies: [
                "Haptics", "HapticsSupport", "HapticsTools", "HapticsCalibration", "HapticsInteraction", "HIDReports", "GPIOBoards", "DRV260x", "CI2CShim", "ALSADevices", "EvdevEffects", "VMRig", "HapticsDaemon",
                "HapticsBus", "CSystemd", "CHidapi", "CGpiod", "CMallocCounter", "HapticsAudioFile", "HapticsAudioAnalysis", .product(name: "Logging", package: "swift-log"),
            ]),
    ]
)
