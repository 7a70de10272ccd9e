import Foundation
import Haptics
import Testing

@Suite("User policy")
struct PolicyTests {
    @Test("the settings file sets off, scale and intervals; bad values are errors naming the key")
    func file() throws {
        let policy = try HapticPolicy.parse(Array(#"{"enabled": false, "intensity_scale": 0.25, "minimum_interval_ms": {"selection": 40}}"#.utf8), path: "p.json")
        #expect(!policy.isEnabled)
        #expect(policy.intensityScale == 0.25)
        #expect(policy.minimumInterval(for: "selection") == 0.04)
        #expect(policy.minimumInterval(for: "impact") == 0.03)
        #expect(throws: PolicyError(source: "p.json", problem: "$.intensity_scale: 2 is outside the allowed range 0...1")) {
            try HapticPolicy.parse(Array(#"{"intensity_scale": 2}"#.utf8), path: "p.json")
        }
        #expect(throws: PolicyError(source: "p.json", problem: "$.volume: unknown key; allowed keys: enabled, intensity_scale, minimum_interval_ms")) {
            try HapticPolicy.parse(Array(#"{"volume": 2}"#.utf8), path: "p.json")
        }
    }

    @Test("load reads $XDG_CONFIG_HOME/haptics/policy.json, then the environment overrides it")
    func load() throws {
        let directory = TestSupport.makeTemporaryDirectory("policy")
        try FileManager.default.createDirectory(atPath: directory + "/haptics", withIntermediateDirectories: true)
        try #"{"intensity_scale": 0.5}"#.write(toFile: directory + "/haptics/policy.json", atomically: true, encoding: .utf8)
        // A child process (haptic-cal policy), so the environment of this one stays untouched.
        let result = try runLoadChild(environment: ["XDG_CONFIG_HOME": directory])
        #expect(result == "enabled=true scale=0.5")
        #expect(try runLoadChild(environment: ["XDG_CONFIG_HOME": directory, "HAPTICS_DISABLE": "1", "HAPTICS_INTENSITY_SCALE": "0.75"]) == "enabled=false scale=0.75")
        #expect(try runLoadChild(environment: ["XDG_CONFIG_HOME": directory, "HAPTICS_INTENSITY_SCALE": "loud"]).hasPrefix("Error: HAPTICS_INTENSITY_SCALE: 'loud' is not a number in 0...1"))
    }

    /// Runs `haptic-cal` (built beside the test runner) to print the loaded policy in a clean environment.
    func runLoadChild(environment: [String: String]) throws -> String {
        let (_, output) = try TestSupport.run(
            TestSupport.buildDirectory + "/haptic-cal", ["policy"], environment: environment.merging(["PATH": "/usr/bin:/bin"]) { a, _ in a })
        return output.split(separator: "\n").first.map(String.init) ?? ""
    }
}
