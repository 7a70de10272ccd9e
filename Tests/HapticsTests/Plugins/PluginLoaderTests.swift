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

    /// A fresh directory (mode 0755) holding a copy of the good fixture; returns the directory and the plugin's path.
    func directoryWithGoodPlugin(_ label: String) throws -> (directory: String, plugin: String) {
        let directory = TestSupport.makeTemporaryDirectory(label)
        #expect(chmod(directory, 0o755) == 0)
        let plugin = directory + "/libhaptics-fixture-good.so"
        try FileManager.default.copyItem(atPath: try fixtures().directory + "/libhaptics-fixture-good.so", toPath: plugin)
        #expect(chmod(plugin, 0o644) == 0)
        return (directory, plugin)
    }

    func loadAll(_ directories: [String]) -> PluginLoadReport {
        PluginLoader(searchPath: PluginSearchPath(directories: directories), logger: TestSupport.quietLogger).loadAll()
    }

    @Test("a world-writable directory is refused; the good plugins elsewhere still load")
    func worldWritableDirectory() throws {
        let (open, _) = try directoryWithGoodPlugin("ww")
        #expect(chmod(open, 0o777) == 0)
        let report = loadAll([open, TestSupport.buildDirectory])
        #expect(report.failures == [.unsafeDirectory(directory: open, reason: .worldWritable)])
        #expect(!report.backends.map(\.name).contains("fixture-good"))
        #expect(report.backends.map(\.name).contains("recording"))
        #expect("\(report.failures[0])".contains("chmod o-w \(open)"))
    }

    @Test("a group-writable directory, or one above it, is refused; a root-owned sticky one above (/tmp) is not")
    func groupWritableDirectories() throws {
        let (directory, plugin) = try directoryWithGoodPlugin("gw")
        #expect(chmod(directory, 0o775) == 0)
        #expect(loadAll([directory]).failures == [.unsafeDirectory(directory: directory, reason: .groupWritable)])
        #expect("\(loadAll([directory]).failures)".contains("chmod g-w \(directory)"))

        // A safe plugin directory inside an unsafe one: the parent could be renamed and replaced.
        #expect(chmod(directory, 0o755) == 0)
        let inner = directory + "/inner"
        #expect(mkdir(inner, 0o755) == 0)
        try FileManager.default.moveItem(atPath: plugin, toPath: inner + "/libhaptics-fixture-good.so")
        #expect(loadAll([inner]).backends.map(\.name) == ["fixture-good"])
        #expect(chmod(directory, 0o777) == 0)
        #expect(loadAll([inner]).failures == [.unsafeDirectory(directory: directory, reason: .worldWritable)])
        // The sticky bit makes a world-writable parent safe only when root owns it.
        #expect(chmod(directory, 0o1777) == 0)
        #expect(loadAll([inner]).backends.map(\.name) == ["fixture-good"], "a sticky root-owned parent is like /tmp")
        #expect(chown(directory, 65534, 65534) == 0)
        #expect(loadAll([inner]).failures == [.unsafeDirectory(directory: directory, reason: .foreignOwner(uid: 65534))])
    }

    @Test("a plugin file writable by others, or owned by another user, is refused")
    func unsafeFiles() throws {
        let (directory, path) = try directoryWithGoodPlugin("wwf")
        #expect(chmod(path, 0o666) == 0)
        #expect(loadAll([directory]).failures == [.unsafeFile(path: path, reason: .worldWritable)])
        #expect(chmod(path, 0o664) == 0)
        #expect(loadAll([directory]).failures == [.unsafeFile(path: path, reason: .groupWritable)])
        #expect(chmod(path, 0o644) == 0)
        #expect(chown(path, 65534, 65534) == 0)
        let foreign = loadAll([directory])
        #expect(foreign.failures == [.unsafeFile(path: path, reason: .foreignOwner(uid: 65534))])
        #expect("\(foreign.failures[0])".contains("belongs to uid 65534, neither root nor the user running this program"))
        #expect(chown(path, 0, 0) == 0)
        #expect(loadAll([directory]).backends.map(\.name) == ["fixture-good"])
    }

    @Test("a symbolic link is refused, even to a good plugin")
    func symbolicLink() throws {
        let (_, plugin) = try directoryWithGoodPlugin("link-target")
        let directory = TestSupport.makeTemporaryDirectory("link")
        #expect(chmod(directory, 0o755) == 0)
        let link = directory + "/libhaptics-fixture-good.so"
        #expect(symlink(plugin, link) == 0)
        let report = loadAll([directory])
        #expect(report.failures == [.unsafeFile(path: link, reason: .symbolicLink)])
        #expect(report.backends.isEmpty)
        #expect("\(report.failures[0])".contains("is a symbolic link"))
    }

    @Test("the file loaded is the file checked: one swapped after the check does not run")
    func swappedAfterCheck() throws {
        let (directory, plugin) = try directoryWithGoodPlugin("swap")
        let impostor = directory + "/impostor.so"
        try FileManager.default.copyItem(atPath: try fixtures().directory + "/libhaptics-fixture-abi10.so", toPath: impostor)
        var loader = PluginLoader(searchPath: PluginSearchPath(directories: [directory]), logger: TestSupport.quietLogger)
        loader.afterCheck = { path in
            // Between the check and the load, someone renames another library over the path.
            #expect(rename(impostor, path) == 0)
        }
        let backend = try loader.load(path: plugin)
        #expect(backend.name == "fixture-good", "the checked file was loaded, not the one renamed over it")
        #expect(!FileManager.default.fileExists(atPath: impostor), "the swap happened")
    }

    @Test("the host tells each plugin its real path (get_config(\"plugin.path\"))")
    func pluginPath() throws {
        let backend = try PluginLoader(logger: TestSupport.quietLogger).load(path: try fixtures().directory + "/libhaptics-fixture-good.so")
        let real = try #require(realpath(try fixtures().directory, nil))
        defer { free(real) }
        #expect(try backend.devices().first?.name == "C fixture device (\(String(cString: real))/libhaptics-fixture-good.so)")
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
