import Foundation
import Testing

/// `haptic-cal` given extreme numbers, on its command line or in the files it reads: a usage error
/// (exit 64) naming the option, the value and the range, or an error naming the file, the key and
/// the range (exit 1); never a signal.
@Suite("haptic-cal: extreme numbers in options and files")
struct HapticCalInputTests {
    static let fixtures = TestSupport.packageRoot + "/Tests/Fixtures/"

    func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let config = TestSupport.makeTemporaryDirectory("cal-input")
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CONFIG_HOME"] = config
        environment["HAPTICS_PROFILE_PATH"] = nil
        environment["HAPTICS_RECORDING_DEVICES"] = "lra"
        return try TestSupport.run(TestSupport.buildDirectory + "/haptic-cal", arguments, environment: environment)
    }

    @Test(
        "numeric options are checked before anything opens, with the range in the message",
        arguments: [
            (["play", "recording:lra", "--intensity", "1e400"], "--intensity inf is outside 0…1"),
            (["play", "recording:lra", "--sharpness", "nan"], "--sharpness nan is outside 0…1"),
            (["play", "recording:lra", "--duration", "1e300"], "--duration 1e+300 is outside 0…30 seconds"),
            (["play", "recording:lra", "--duration=-0.5"], "--duration -0.5 is outside 0…30 seconds"),
            (["calibrate", "recording:lra", "--source", "simulated", "--model", "f0=1e300"], "--model: f0 '1e300' is outside 20…2000 Hz"),
            (["calibrate", "recording:lra", "--source", "simulated", "--model", "q=nan"], "--model: q 'nan' is outside 1…100"),
            (["verify", "recording:lra", "--source", "simulated", "--model", "seed=-1"], "--model: seed '-1' is not a whole number ≥ 0"),
            (["calibrate", "recording:lra", "--source", "simulated", "--model", "spin=3"], "--model: unknown model key 'spin'"),
        ])
    func options(_ arguments: [String], _ message: String) throws {
        let (status, output) = try run(arguments)
        #expect(status == 64, "\(output)")
        #expect(output.contains("Error: \(message)"), "\(output)")
    }

    @Test("trigger: each bad effect is a usage error naming the parameter and its range; a good one is set, held and released (recorded)")
    func trigger() throws {
        let cases: [([String], String)] = [
            (["--right", "weapon:start-position=0.1,end-position=0.5,strength=1"], "trigger effect: start-position 0.1 is outside 0.167…0.833 (zones 2…7)"),
            (["--left", "vibration:position=0,amplitude=1,frequency=1e400"], "trigger effect: frequency inf is outside 1…255 Hz"),
            (["--right", "feedback:position=0.2"], "trigger effect feedback: 'strength' is missing; it takes position, strength"),
            (["--right", "feedback:position=0.2,strength=high"], "'strength=high' is not a number"),
            (["--left", "multiple-position-feedback:strengths=1/1"], "strengths has 2 values; the trigger has 10 zones"),
            (["--right", "rumble"], "'rumble' is unknown; the effects are off, feedback"),
            (["--right", "off", "--hold", "nan"], "--hold nan is outside 0…3600 seconds"),
            ([], "give --right, --left or both"),
        ]
        for (options, message) in cases {
            let (status, output) = try run(["trigger", "recording:lra"] + options)
            #expect(status == 64 && output.contains(message), "\(options): \(output)")
        }
        let (status, output) = try run(["trigger", "recording:lra", "--right", "off"])
        #expect(status == 1 && output.contains("recording:lra: the device has no adaptive triggers"), "\(output)")

        let recording = TestSupport.makeTemporaryDirectory("cal-trigger") + "/trigger.jsonl"
        let set = try run([
            "trigger", "recording:dualsense", "--in-process", "--set", "recording.devices=dualsense", "--record", recording,
            "--right", "weapon:start-position=0.3,end-position=0.6,strength=1", "--left", "multiple-position-vibration:amplitudes=0/0/0/0/0/1/1/1/1/1,frequency=200",
            "--hold", "0.05",
        ])
        #expect(set.status == 0 && set.output.contains("R2 weapon:start-position=0.3,end-position=0.6,strength=1"), "\(set.output)")
        let lines = try String(contentsOfFile: recording, encoding: .utf8).split(separator: "\n").filter { $0.contains("\"triggers\"") || $0.contains("\"sleep\"") }
        #expect(lines.count == 3 && lines[0].contains("\"left\":\"multiple-position-vibration:amplitudes=0/0/0/0/0/1/1/1/1/1,frequency=200\"")
            && lines[1].contains("\"right\":\"off\",\"left\":\"off\"") && lines[2].contains("sleep"), "\(lines)")
    }

    @Test("files with extreme numbers are errors naming the file, the place and the range")
    func files() throws {
        let directory = TestSupport.makeTemporaryDirectory("cal-input-files")
        let trace = directory + "/far.trace"
        try "knob 0 90 width=15\nat 0 1\nat 1e300 2\n".write(toFile: trace, atomically: true, encoding: .utf8)
        let cases: [([String], String)] = [
            (
                ["play", "recording:lra", Self.fixtures + "ahap/invalid/time-past-limit.ahap"],
                Self.fixtures + "ahap/invalid/time-past-limit.ahap: $.Pattern[0].Event.Time: 1e+300 s is outside 0...3600 s"
            ),
            (["replay", trace, "recording:lra"], trace + ":3: time 1e300 is outside -1000000000...1000000000"),
            (
                ["plot", Self.fixtures + "fuzz/recording/inverted-frequency-range.jsonl", "-o", directory + "/plot.svg"],
                "inverted-frequency-range.jsonl:1: $.devices[0].channels[0].frequency_max_hz: 80 is outside the allowed range 300...100000"
            ),
            (
                ["profile", "import", Self.fixtures + "fuzz/profile/format-version-1e300.json"],
                "format-version-1e300.json: $.format_version: format version 1e+300 is newer than this build reads (5)"
            ),
        ]
        for (arguments, message) in cases {
            let (status, output) = try run(arguments)
            #expect(status == 1, "\(arguments): \(output)")
            #expect(output.contains(message), "\(arguments): \(output)")
        }
    }

    @Test("an AHAP file's audio events on a motor device are kept, not played: play says so after the haptic events played")
    func audioEventsNoted() throws {
        let (status, output) = try run(["play", "recording:lra", Self.fixtures + "ahap/valid/audio-events.ahap"])
        #expect(status == 0, "\(output)")
        #expect(output.contains("played \(Self.fixtures)ahap/valid/audio-events.ahap on recording:lra"), "\(output)")
        #expect(output.contains("note: 2 audio events (AudioContinuous, AudioCustom) not played: recording:lra is a motor device"), "\(output)")
        let (_, plain) = try run(["play", "recording:lra", "impact.light"])
        #expect(!plain.contains("note:"), "\(plain)")
    }
}
