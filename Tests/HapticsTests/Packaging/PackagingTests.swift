import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What `Scripts/install` and `Scripts/package-deb` produce runs like Linux software: from the
/// installed prefix or the extracted package, with the Swift toolchain out of reach (not on `PATH`
/// or `LD_LIBRARY_PATH`, no library resolving into it, and, as root, its runtime directory covered
/// by an empty tmpfs in a private mount namespace).
///
/// `swift test` holds the lock on `.build`, so the scripts build in their own scratch directory,
/// `.build/packaging`: one release build (about 2.5 min from scratch on 2 cores) that every test
/// here shares, incremental afterwards; `Scripts/docs` builds the documentation there too.
@Suite("Packaging: Scripts/install and Scripts/package-deb, run without the toolchain; Scripts/docs", .serialized)
struct PackagingTests {
    static let scratch = TestSupport.packageRoot + "/.build/packaging"

    /// The outcome of a script run, and where it put things.
    struct Produced: Sendable {
        var status: Int32
        var output: String
        var path: String
    }

    /// `Scripts/install --prefix /usr/local` staged under `.build/packaging/test-install`.
    static let installed: Produced = {
        let stage = scratch + "/test-install"
        try? FileManager.default.removeItem(atPath: stage)
        let result = runScript("install", ["--prefix", "/usr/local", "--destdir", stage, "--scratch-path", scratch])
        return Produced(status: result.status, output: result.output, path: stage + "/usr/local")
    }()

    /// `Scripts/package-deb` into `.build/packaging/test-deb` (lintian runs in the test, once).
    static let package: Produced = {
        let output = scratch + "/test-deb"
        try? FileManager.default.removeItem(atPath: output)
        let result = runScript("package-deb", ["--scratch-path", scratch, "--output", output, "--no-lintian"])
        let deb = result.output.split(separator: "\n").last.map(String.init) ?? ""
        return Produced(status: result.status, output: result.output, path: deb)
    }()

    static func runScript(_ name: String, _ arguments: [String]) -> (status: Int32, output: String) {
        do {
            return try TestSupport.run(TestSupport.packageRoot + "/Scripts/" + name, arguments)
        } catch {
            return (-1, "Scripts/\(name) did not start: \(error)")
        }
    }

    /// The toolchain's runtime directory: where the build tree's haptic-cal finds libswiftCore.so.
    static let toolchainRuntime: String = {
        let (_, output) = (try? TestSupport.run("/usr/bin/ldd", [TestSupport.buildDirectory + "/haptic-cal"])) ?? (1, "")
        for line in output.split(separator: "\n") {
            let words = line.split(separator: " ")
            if words.first?.trimmingCharacters(in: .whitespaces) == "libswiftCore.so", words.count >= 3 {
                return URL(fileURLWithPath: String(words[2])).resolvingSymlinksInPath().deletingLastPathComponent().path
            }
        }
        return ""
    }()

    /// An environment with nothing of the toolchain: a plain PATH, no LD_LIBRARY_PATH, no hapticsd.
    static func plainEnvironment(_ home: String, _ extra: [String: String] = [:]) -> [String: String] {
        var environment = ["PATH": "/usr/bin:/bin", "HOME": home, "XDG_CONFIG_HOME": home, "HAPTICS_DAEMON": "off", "LANG": "C.UTF-8"]
        environment.merge(extra) { $1 }
        return environment
    }

    /// Whether this process may make a mount namespace (root, and a kernel and sandbox that allow it);
    /// without one, the PATH, LD_LIBRARY_PATH and ldd checks remain.
    static let canHideToolchain: Bool = {
        guard getuid() == 0, !toolchainRuntime.isEmpty else { return false }
        let probe = try? TestSupport.run("/usr/bin/unshare", ["--mount", "/bin/sh", "-c", "mount -t tmpfs none \"$0\"", toolchainRuntime])
        return probe?.status == 0
    }()

    /// Runs an installed program with the plain environment; as root, inside a mount namespace in
    /// which the toolchain's runtime directory is an empty tmpfs, so not one library can come from it.
    static func runWithoutToolchain(_ program: String, _ arguments: [String], _ extra: [String: String] = [:]) throws -> (status: Int32, output: String) {
        let home = TestSupport.makeTemporaryDirectory("packaged-home")
        defer { try? FileManager.default.removeItem(atPath: home) }
        let environment = plainEnvironment(home, extra)
        guard canHideToolchain else { return try TestSupport.run(program, arguments, environment: environment) }
        let script = "mount -t tmpfs none \"$0\" && exec \"$@\""
        return try TestSupport.run("/usr/bin/unshare", ["--mount", "/bin/sh", "-c", script, toolchainRuntime, program] + arguments, environment: environment)
    }

    /// Every ELF file under `root` resolves its libraries outside the toolchain, the Swift runtime
    /// from `runtime`, and none is missing.
    static func checkLibraries(under root: String, runtime: String) throws {
        let files = FileManager.default.enumerator(atPath: root)?.compactMap { $0 as? String } ?? []
        var checked = 0
        for file in files.map({ root + "/" + $0 }) {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: file, isDirectory: &isDirectory), !isDirectory.boolValue,
                let handle = FileHandle(forReadingAtPath: file)
            else { continue }
            let magic = try handle.read(upToCount: 4) ?? Data()
            try handle.close()
            guard magic == Data([0x7F, 0x45, 0x4C, 0x46]) else { continue }
            checked += 1
            let (status, output) = try TestSupport.run("/usr/bin/ldd", [file], environment: ["PATH": "/usr/bin:/bin"])
            #expect(status == 0, "ldd \(file): \(output)")
            #expect(!output.contains("not found"), "\(file): \(output)")
            #expect(!output.contains(toolchainRuntime + "/"), "\(file) resolves a library from the toolchain: \(output)")
            for line in output.split(separator: "\n") where line.contains("libswiftCore.so") || line.contains("libFoundation") || line.contains("libdispatch.so") {
                let resolved = line.split(separator: " ").dropFirst(2).first.map { URL(fileURLWithPath: String($0)).standardized.path } ?? ""
                #expect(resolved.hasPrefix(runtime + "/"), "\(file): \(line)")
            }
        }
        #expect(checked >= 13, "only \(checked) ELF files under \(root)")
    }

    /// The installed haptic-cal lists every plugin from the installed plugin directory and the
    /// simulated devices, plays an impact, and reads the shipped profiles.
    static func checkRuns(prefix: String) throws {
        let haptic = prefix + "/bin/haptic-cal"
        let list = try runWithoutToolchain(haptic, ["list"])
        #expect(list.status == 0, "\(list.output)")
        for backend in ["evdev", "gpio", "hid", "null", "recording"] {
            let padded = backend.padding(toLength: 10, withPad: " ", startingAt: 0)
            #expect(list.output.contains("  \(padded) \(prefix)/lib/haptics/libhaptics-\(backend).so"), "\(backend) not loaded from the prefix: \(list.output)")
        }
        #expect(list.output.contains("recording:lra") && list.output.contains("Simulated 175 Hz LRA"), "\(list.output)")
        #expect(!list.output.contains("failed"), "\(list.output)")

        let play = try runWithoutToolchain(haptic, ["play", "recording:lra", "impact.heavy"], ["HAPTICS_RECORDING_DEVICES": "lra"])
        #expect(play.status == 0, "\(play.output)")
        #expect(play.output.contains("played impact.heavy on recording:lra") && play.output.contains("frame") && play.output.contains("sleep"), "\(play.output)")

        let profiles = try runWithoutToolchain(haptic, ["profile", "show"])
        #expect(profiles.status == 0, "\(profiles.output)")
        let shipped = try FileManager.default.contentsOfDirectory(atPath: TestSupport.packageRoot + "/Hardware/profiles").filter { $0.hasSuffix(".json") }
        #expect(shipped.count >= 2)
        for file in shipped {
            #expect(profiles.output.contains(prefix + "/share/haptics/profiles/" + file), "\(file) not read from the prefix: \(profiles.output)")
        }
    }

    /// Every command and subcommand path of `program`, from the parser's own description of itself.
    static func commandPaths(_ program: String) throws -> [[String]] {
        let (status, output) = try TestSupport.run(TestSupport.buildDirectory + "/" + program, ["--experimental-dump-help"])
        try #require(status == 0, "\(output)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
        var paths: [[String]] = []
        func walk(_ command: [String: Any], _ path: [String]) {
            guard let name = command["commandName"] as? String else { return }
            let here = path + [name]
            paths.append(here)
            for subcommand in command["subcommands"] as? [[String: Any]] ?? [] { walk(subcommand, here) }
        }
        walk(try #require(json["command"] as? [String: Any]), [])
        return paths
    }

    @Test("Scripts/install: the installed haptic-cal finds its plugins, plays and reads the shipped profiles without the toolchain")
    func installedPrefix() throws {
        let installed = Self.installed
        try #require(installed.status == 0, "\(installed.output)")
        try #require(!Self.toolchainRuntime.isEmpty, "ldd found no libswiftCore.so for the build tree's haptic-cal")
        let prefix = installed.path
        for file in [
            "bin/haptic-cal", "bin/hapticsd", "lib/haptics/libhaptics-recording.so", "lib/haptics/libhaptics-hid.so", "lib/haptics/haptics-stop-guard",
            "lib/haptics/swift/libswiftCore.so", "lib/udev/rules.d/70-haptics-gamepads.rules", "lib/udev/rules.d/70-haptics-vibrators.rules",
            "share/haptics/boards/rpi-drv2603-lra.json", "share/hapticsd/themes/default.json", "share/haptics/installed-files",
        ] {
            #expect(FileManager.default.fileExists(atPath: prefix + "/" + file), "\(file) was not installed")
        }
        try Self.checkLibraries(under: prefix, runtime: prefix + "/lib/haptics/swift")
        if Self.canHideToolchain {
            // The control: where the toolchain is hidden, the build tree's haptic-cal (its runtime is the toolchain's) cannot start.
            let control = try Self.runWithoutToolchain(TestSupport.buildDirectory + "/haptic-cal", ["list"])
            #expect(control.status != 0 && control.output.contains("libswift"), "\(control.output)")
        }
        try Self.checkRuns(prefix: prefix)
    }

    @Test("Scripts/install: a man page for every command and subcommand, bash, zsh and fish completions naming every subcommand")
    func manualsAndCompletions() throws {
        let installed = Self.installed
        try #require(installed.status == 0, "\(installed.output)")
        let share = installed.path + "/share"
        for program in ["haptic-cal", "hapticsd"] {
            let paths = try Self.commandPaths(program)
            #expect(paths.count >= (program == "haptic-cal" ? 14 : 1))
            for path in paths {
                let page = share + "/man/man1/" + path.joined(separator: ".") + ".1"
                #expect(FileManager.default.fileExists(atPath: page), "no man page \(page)")
                if let text = try? String(contentsOfFile: page, encoding: .utf8) {
                    #expect(text.contains(".Nm \"\(path.joined(separator: " "))\"") || text.contains(".Nm \(path.joined(separator: " "))"), "\(page) names another command")
                }
            }
            let completions = [
                share + "/bash-completion/completions/" + program, share + "/zsh/site-functions/_" + program,
                share + "/fish/vendor_completions.d/" + program + ".fish",
            ]
            for file in completions {
                let text = try String(contentsOfFile: file, encoding: .utf8)
                for path in paths.dropFirst() {
                    #expect(text.contains(path.last!), "\(file) does not complete \(path.joined(separator: " "))")
                }
            }
            let syntax = try TestSupport.run("/bin/bash", ["-n", completions[0]])
            #expect(syntax.status == 0, "\(syntax.output)")
        }
    }

    @Test("Scripts/install --uninstall removes every file it installed and the directories left empty")
    func uninstall() throws {
        let stage = Self.scratch + "/test-uninstall"
        try? FileManager.default.removeItem(atPath: stage)
        defer { try? FileManager.default.removeItem(atPath: stage) }
        let prefix = stage + "/opt/haptics"
        try FileManager.default.createDirectory(atPath: prefix + "/share/keep", withIntermediateDirectories: true)
        let install = Self.runScript("install", ["--prefix", "/opt/haptics", "--destdir", stage, "--scratch-path", Self.scratch, "--system-policy-dir", "/opt/haptics/policy"])
        try #require(install.status == 0, "\(install.output)")
        #expect(FileManager.default.fileExists(atPath: prefix + "/bin/haptic-cal"))
        let removed = Self.runScript("install", ["--prefix", "/opt/haptics", "--destdir", stage, "--uninstall"])
        #expect(removed.status == 0, "\(removed.output)")
        let left = FileManager.default.enumerator(atPath: prefix)?.compactMap { $0 as? String }.sorted() ?? []
        #expect(left == ["share", "share/keep"], "left behind: \(left)")
        let again = Self.runScript("install", ["--prefix", "/opt/haptics", "--destdir", stage, "--uninstall"])
        #expect(again.status == 1 && again.output.contains("installed-files is missing"), "\(again.output)")
    }

    @Test("Scripts/package-deb: contents, Depends, lintian without errors; extracted, it runs without the toolchain; the maintainer scripts reload udev")
    func debianPackage() throws {
        let package = Self.package
        try #require(package.status == 0 && package.path.hasSuffix(".deb"), "\(package.output)")
        try #require(!Self.toolchainRuntime.isEmpty)
        let deb = package.path
        #expect(URL(fileURLWithPath: deb).lastPathComponent.hasPrefix("swift-haptics_0"))

        let shippedProfiles = try FileManager.default.contentsOfDirectory(atPath: TestSupport.packageRoot + "/Hardware/profiles").filter { $0.hasSuffix(".json") }
        #expect(shippedProfiles.count >= 2)
        let contents = try TestSupport.run("/usr/bin/dpkg-deb", ["--contents", deb])
        #expect(contents.status == 0, "\(contents.output)")
        for file in [
            "./usr/bin/haptic-cal", "./usr/bin/hapticsd", "./usr/lib/haptics/libhaptics-recording.so", "./usr/lib/haptics/haptics-stop-guard",
            "./usr/lib/haptics/swift/libswiftCore.so", "./usr/lib/udev/rules.d/70-haptics-gamepads.rules", "./usr/share/man/man1/haptic-cal.play.1.gz",
            "./usr/share/bash-completion/completions/haptic-cal", "./usr/share/zsh/vendor-completions/_haptic-cal", "./usr/share/fish/vendor_completions.d/haptic-cal.fish",
            "./usr/share/haptics/boards/rpi-drv2603-lra.json", "./usr/share/doc/swift-haptics/copyright",
            "./usr/share/dbus-1/system.d/org.swifthaptics.Haptics1.conf", "./usr/lib/systemd/user/hapticsd.service",
        ] + shippedProfiles.map({ "./usr/share/haptics/profiles/" + $0 }) {
            #expect(contents.output.contains(" " + file + "\n") || contents.output.contains(" " + file + " "), "\(file) is not in the package")
        }
        #expect(!contents.output.contains("installed-files"), "the install manifest is in the package")
        #expect(!contents.output.contains("/usr/local"), "\(contents.output)")

        let fields = try TestSupport.run("/usr/bin/dpkg-deb", ["--field", deb, "Depends", "Architecture", "Version"])
        for library in ["libhidapi-hidraw0", "libgpiod2", "libudev1", "libasound2", "libsndfile1", "libsystemd0", "libc6", "libstdc++6"] {
            #expect(fields.output.contains(library), "Depends lacks \(library): \(fields.output)")
        }
        #expect(!fields.output.contains("swift"), "\(fields.output)")

        let lintian = try TestSupport.run("/usr/bin/lintian", ["--allow-root", "--tag-display-limit", "0", deb])
        let errors = lintian.output.split(separator: "\n").filter { $0.hasPrefix("E: ") }
        #expect(errors.isEmpty, "lintian: \(lintian.output)")

        let root = Self.scratch + "/test-deb-root"
        try? FileManager.default.removeItem(atPath: root)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let extracted = try TestSupport.run("/usr/bin/dpkg-deb", ["--extract", deb, root])
        try #require(extracted.status == 0, "\(extracted.output)")
        try Self.checkLibraries(under: root + "/usr", runtime: root + "/usr/lib/haptics/swift")
        try Self.checkRuns(prefix: root + "/usr")

        // The maintainer scripts, with a udevadm that writes down how it was called.
        let control = root + "/DEBIAN"
        let unpacked = try TestSupport.run("/usr/bin/dpkg-deb", ["--control", deb, control])
        try #require(unpacked.status == 0, "\(unpacked.output)")
        let bin = root + "/fake-bin"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        try TestSupport.writeExecutable(bin + "/udevadm", "#!/bin/sh\necho \"$@\" >> \"\(root)/udevadm.log\"\n")
        for (script, argument) in [("postinst", "configure"), ("postrm", "remove")] {
            try? FileManager.default.removeItem(atPath: root + "/udevadm.log")
            let ran = try TestSupport.run("/bin/sh", [control + "/" + script, argument], environment: ["PATH": bin + ":/usr/bin:/bin"])
            #expect(ran.status == 0, "\(script): \(ran.output)")
            let calls = (try? String(contentsOfFile: root + "/udevadm.log", encoding: .utf8)) ?? ""
            #expect(calls == "control --reload-rules\ntrigger --subsystem-match=hidraw --action=change\ntrigger --subsystem-match=input --action=change\n", "\(script): \(calls)")
        }
    }

    @Test("Scripts/docs: the DocC catalog and the symbols' comments build without a warning; every article and the main types are in the site")
    func documentation() throws {
        let output = Self.scratch + "/test-docs"
        try? FileManager.default.removeItem(atPath: output)
        defer { try? FileManager.default.removeItem(atPath: output) }
        let result = Self.runScript("docs", ["--scratch-path", Self.scratch, "--output", output])
        #expect(result.status == 0, "\(result.output)")
        #expect(!result.output.contains("warning:"), "\(result.output)")
        let site = output + "/data/documentation/haptics/"
        let articles = [
            ("gettingstarted", "Getting started"), ("thepowermodel", "The power model"), ("ahaponlinux", "AHAP on Linux"),
            ("gamepadsandmotors", "Playing on gamepads and motors"), ("calibration", "Calibration"), ("writingabackend", "Writing a backend in Swift or C"),
        ]
        for (page, title) in articles {
            let json = (try? String(contentsOfFile: site + page + ".json", encoding: .utf8)) ?? ""
            #expect(json.contains("\"title\":\"\(title)\""), "no article \(page) in \(output)")
            #expect(FileManager.default.fileExists(atPath: output + "/documentation/haptics/" + page + "/index.html"))
        }
        for symbol in ["hapticsystem", "hapticengine", "hapticpattern", "impactfeedbackgenerator", "powermodel", "pluginloader"] {
            #expect(FileManager.default.fileExists(atPath: site + symbol + ".json"), "no page for \(symbol)")
        }
    }
}
