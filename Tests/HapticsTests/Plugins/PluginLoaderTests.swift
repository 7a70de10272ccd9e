import Foundation
import Haptics
import Testing

@Suite("Plugin loader")
struct PluginLoaderTests {
    func fixtures() throws -> FixturePlugins.Built {
        try FixturePlugins.built.get()
    }

    @Test("loads the package's own plugins from the executable's directory")
    func loadsBuiltPlugins() {
        let report = PluginLoader(searchPath: PluginSearchPath(directories: [TestSupport.buildDirectory]), logger: TestSupport.quietLogger).loadAll()
        #expect(report.failures.isEmpty, "\(report.failures)")
        #expect(Set(report.backends.map(\.name)).isSuperset(of: ["null", "recording"]))
        for backend in report.backends {
            #expect(backend.path.hasPrefix(TestSupport.buildDirectory + "/libhaptics-"))
        }
    }

    @Test("each broken plugin gets its own typed error and the others still load")
    func brokenPluginsAreIsolated() throws {
        let directory = try fixtures().directory
        let report = PluginLoader(searchPath: PluginSearchPath(directories: [directory, TestSupport.buildDirectory]), logger: TestSupport.quietLogger).loadAll()
        let names = report.backends.map(\.name)
        #expect(names.contains("fixture-good"), "a plain C backend loads")
        #expect(names.contains("null") && names.contains("recording"), "the other plugins still load")

        func failure(_ variant: String) -> PluginLoadError? {
            report.failures.first { $0.path == "\(directory)/libhaptics-fixture-\(variant).so" }
        }
        #expect(failure("badabi") == .abiVersionMismatch(path: "\(directory)/libhaptics-fixture-badabi.so", found: 2, expected: 1))
        #expect(failure("shorttable") == .structSizeMismatch(path: "\(directory)/libhaptics-fixture-shorttable.so", found: 16, minimum: 120))
        #expect(failure("nosubmit") == .functionMissing(path: "\(directory)/libhaptics-fixture-nosubmit.so", function: "submit"))

        guard case .entryPointMissing(_, let symbol, let text)? = failure("noentry") else {
            Issue.record("noentry: \(String(describing: failure("noentry")))")
            return
        }
        #expect(symbol == "haptics_backend_fill_v1")
        #expect(text.contains("undefined symbol: haptics_backend_fill_v1"))

        guard case .dependencyMissing(_, let library, let dlerror)? = failure("needsdep") else {
            Issue.record("needsdep: \(String(describing: failure("needsdep")))")
            return
        }
        #expect(library == "libfixturedep.so")
        #expect(dlerror.contains("cannot open shared object file"))

        guard case .initializationFailed(_, let code, let messages)? = failure("initfails") else {
            Issue.record("initfails: \(String(describing: failure("initfails")))")
            return
        }
        #expect(code == -ENODEV)
        #expect(messages == ["fixture: no hardware found on /dev/fixture0"])
        #expect(report.failures.count == 6, "\(report.failures)")
    }

    @Test("the error texts name the file and the fix")
    func errorTexts() throws {
        let directory = try fixtures().directory
        let loader = PluginLoader(searchPath: PluginSearchPath(directories: [directory]), logger: TestSupport.quietLogger)
        #expect(throws: PluginLoadError.self) { try loader.load(path: "\(directory)/libhaptics-fixture-badabi.so") }
        do {
            _ = try loader.load(path: "\(directory)/libhaptics-fixture-needsdep.so")
            Issue.record("loaded a plugin whose dependency is missing")
        } catch {
            #expect("\(error)".hasPrefix("\(directory)/libhaptics-fixture-needsdep.so: needs libfixturedep.so, which is not installed"))
        }
        do {
            _ = try loader.load(path: "\(directory)/libhaptics-fixture-badabi.so")
        } catch {
            #expect("\(error)".contains("built for backend ABI version 2, this host speaks version 1"))
        }
    }

    @Test("a world-writable directory is refused; the good plugins elsewhere still load")
    func worldWritableDirectory() throws {
        let open = TestSupport.makeTemporaryDirectory("ww")
        try FileManager.default.copyItem(
            atPath: try fixtures().directory + "/libhaptics-fixture-good.so", toPath: open + "/libhaptics-fixture-good.so")
        #expect(chmod(open, 0o777) == 0)
        let report = PluginLoader(searchPath: PluginSearchPath(directories: [open, TestSupport.buildDirectory]), logger: TestSupport.quietLogger).loadAll()
        #expect(report.failures == [.directoryWorldWritable(directory: open)])
        #expect(!report.backends.map(\.name).contains("fixture-good"))
        #expect(report.backends.map(\.name).contains("recording"))
        #expect("\(report.failures[0])".contains("chmod o-w \(open)"))
    }

    @Test("a world-writable plugin file is refused")
    func worldWritableFile() throws {
        let directory = TestSupport.makeTemporaryDirectory("wwf")
        chmod(directory, 0o755)
        let path = directory + "/libhaptics-fixture-good.so"
        try FileManager.default.copyItem(atPath: try fixtures().directory + "/libhaptics-fixture-good.so", toPath: path)
        #expect(chmod(path, 0o666) == 0)
        let report = PluginLoader(searchPath: PluginSearchPath(directories: [directory]), logger: TestSupport.quietLogger).loadAll()
        #expect(report.failures == [.fileWorldWritable(path: path)])
        #expect(report.backends.isEmpty)
    }

    @Test("search order: HAPTICS_PLUGIN_PATH entries, then the executable's directory, then ../lib/haptics; first file name wins")
    func searchOrder() throws {
        let standard = PluginSearchPath.standard(pluginPath: "/opt/a::/opt/b")
        #expect(standard.directories == [
            "/opt/a", "/opt/b", TestSupport.buildDirectory, PluginSearchPath.executableDirectory()!.split(separator: "/").dropLast().map { "/" + $0 }.joined() + "/lib/haptics",
        ])
        // The same file name in two directories loads from the first.
        let first = TestSupport.makeTemporaryDirectory("first")
        chmod(first, 0o755)
        try FileManager.default.copyItem(atPath: try fixtures().directory + "/libhaptics-fixture-good.so", toPath: first + "/libhaptics-fixture-good.so")
        let loader = PluginLoader(searchPath: PluginSearchPath(directories: [first, try fixtures().directory]), logger: TestSupport.quietLogger)
        let files = loader.candidateFiles().files
        #expect(files.filter { $0.hasSuffix("/libhaptics-fixture-good.so") } == [first + "/libhaptics-fixture-good.so"])
    }

    @Test("a C backend works end to end through the ABI")
    func cBackendEndToEnd() throws {
        let backend = try PluginLoader(logger: TestSupport.quietLogger).load(path: try fixtures().directory + "/libhaptics-fixture-good.so")
        let devices = try backend.devices()
        #expect(devices.map(\.id) == ["fixture:c"])
        #expect(devices[0].actuator == .erm)
        let actuator = try backend.open(deviceID: "fixture:c")
        try actuator.wake()
        try actuator.submit(DriveFrame(time: .monotonicNow(), channels: [ChannelDrive(amplitude: 0.5)]))
        try actuator.stop()
        try actuator.sleep()
        actuator.close()
        #expect(throws: DeviceError.closed(deviceID: "fixture:c")) { try actuator.wake() }
        #expect(throws: DeviceError.self) { try backend.open(deviceID: "fixture:nope") }
    }
}
