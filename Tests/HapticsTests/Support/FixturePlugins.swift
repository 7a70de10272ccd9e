import Foundation
import Haptics
import Testing

/// Builds the C fixture plugins in `Tests/Fixtures/plugins` with the system C compiler, once per
/// test run, into a fresh directory.
enum FixturePlugins {
    struct Built: Sendable {
        /// Holds the good fixture and every broken variant, each named `libhaptics-fixture-VARIANT.so`.
        let directory: String
        /// The C hosts of `Tests/Fixtures/abi/abi_host.c`: one of ABI 1.0, one of a later 1.x.
        let host10: String
        let laterHost: String
    }

    static let variants: [(name: String, defines: [String])] = [
        ("good", []),
        ("badabi", ["FIXTURE_BAD_ABI"]),
        ("shorttable", ["FIXTURE_SHORT_TABLE"]),
        ("nosubmit", ["FIXTURE_MISSING_SUBMIT"]),
        ("noentry", ["FIXTURE_NO_ENTRY"]),
        ("initfails", ["FIXTURE_INIT_FAILS"]),
        ("needsdep", ["FIXTURE_NEEDS_DEP"]),
        ("abi10", ["FIXTURE_ABI_1_0"]),
        ("future", ["FIXTURE_FUTURE"]),
    ]

    static let built: Result<Built, CompileError> = {
        let directory = TestSupport.makeTemporaryDirectory("fixtures")
        chmod(directory, 0o755)
        let source = TestSupport.packageRoot + "/Tests/Fixtures/plugins"
        let include = TestSupport.packageRoot + "/Sources/CHapticsABI/include"
        let frozen = TestSupport.packageRoot + "/Tests/Fixtures/abi"
        do {
            let dependencyDirectory = TestSupport.makeTemporaryDirectory("fixture-dep")
            try compile(["-shared", "-fPIC", "-o", dependencyDirectory + "/libfixturedep.so", source + "/fixture_dep.c"])
            for variant in variants {
                var arguments = ["-shared", "-fPIC", "-Wall", "-Werror", "-I", include, "-I", frozen, "-DFIXTURE_NAME=\"fixture-\(variant.name)\""]
                arguments += variant.defines.map { "-D\($0)" }
                arguments += ["-o", "\(directory)/libhaptics-fixture-\(variant.name).so", source + "/fixture_backend.c"]
                if variant.name == "needsdep" { arguments += ["-L", dependencyDirectory, "-lfixturedep"] }
                try compile(arguments)
            }
            // The plugin's dependency disappears, as when a package is uninstalled.
            try FileManager.default.removeItem(atPath: dependencyDirectory)
            let hosts = TestSupport.makeTemporaryDirectory("abi-hosts")
            let hostSource = frozen + "/abi_host.c"
            try compile(["-Wall", "-Werror", "-DHOST_ABI_1_0", "-I", frozen, "-o", hosts + "/abi-host-1.0", hostSource, "-ldl"])
            try compile(["-Wall", "-Werror", "-I", include, "-o", hosts + "/abi-host-later", hostSource, "-ldl"])
            return .success(Built(directory: directory, host10: hosts + "/abi-host-1.0", laterHost: hosts + "/abi-host-later"))
        } catch let error as CompileError {
            return .failure(error)
        } catch {
            return .failure(CompileError(output: "\(error)"))
        }
    }()

    struct CompileError: Error, CustomStringConvertible {
        let output: String
        var description: String { "compiling the fixture plugins failed: \(output)" }
    }

    static func compile(_ arguments: [String]) throws {
        let (status, output) = try TestSupport.run("/usr/bin/env", ["cc"] + arguments)
        guard status == 0 else { throw CompileError(output: "cc \(arguments.joined(separator: " ")): \(output)") }
    }
}
