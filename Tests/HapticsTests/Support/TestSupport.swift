import Foundation
import Haptics
import Logging

/// Shared set-up for the suites: where the freshly built plugins are, scratch directories, and
/// systems over the real `recording` backend loaded through dlopen.
enum TestSupport {
    /// The directory of the test runner, where `swift build` puts every `libhaptics-*.so`.
    static let buildDirectory = PluginSearchPath.executableDirectory()!

    /// The package root (for fixtures).
    static let packageRoot: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<4 { url.deleteLastPathComponent() }
        return url.path
    }()

    /// A new empty directory under the system's temporary directory.
    static func makeTemporaryDirectory(_ label: String = "test") -> String {
        var template = Array("/tmp/haptics-\(label)-XXXXXX".utf8CString)
        let path = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
        return path
    }

    /// A system that loads only the plugins built with the package, with the recording backend
    /// simulating `devices` and writing to `output`; in-process whatever runs on the developer's bus.
    static func recordingSystem(
        devices: String = "lra,erm,gamepad", output: String? = nil, clock: any HapticClock = SystemClock.shared,
        policy: PowerPolicy = PowerPolicy(), simulateWake: Bool = false
    ) -> HapticSystem {
        var settings = ["recording.devices": devices, "recording.simulate-wake": simulateWake ? "1" : "0"]
        settings["recording.output"] = output
        return HapticSystem(
            configuration: .init(
                searchPath: PluginSearchPath(directories: [buildDirectory]), settings: settings, clock: clock, powerPolicy: policy,
                logger: quietLogger, daemon: .never))
    }

    /// Runs `executable` with `arguments` and waits for it; standard output and error come back
    /// together. `environment` replaces the inherited one when given.
    static func run(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, output)
    }

    /// Writes an executable script at `path` from a child process (`install -m 755`), so this
    /// process never holds it open for writing: a child that another test forks meanwhile would
    /// inherit such a descriptor until its exec, and the script's own exec would then fail with
    /// ETXTBSY ("text file busy"; once in a host pass).
    static func writeExecutable(_ path: String, _ text: String) throws {
        let source = path + ".source"
        try text.write(toFile: source, atomically: false, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: source) }
        let installed = try run("/usr/bin/install", ["-m", "755", source, path])
        guard installed.status == 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "install \(path): \(installed.output)"]) }
    }

    /// Tests assert errors by type; the log would only repeat them.
    static let quietLogger: Logger = {
        var logger = Logger(label: "haptics.tests") { _ in SwiftLogNoOpLogHandler() }
        logger.logLevel = .critical
        return logger
    }()
}
