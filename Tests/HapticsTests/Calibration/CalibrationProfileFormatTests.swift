import Foundation
import Haptics
import Testing

/// The profile file format: round trips, and errors that name the file, the key path and the range.
@Suite("Calibration profiles: format and validation")
struct CalibrationProfileFormatTests {
    static let lra = DeviceDescription(
        id: "recording:lra", name: "Simulated 175 Hz LRA", backend: "recording", actuator: .lra,
        channels: [ChannelDescription(name: "main", actuator: .lra, frequencyRange: 80...300, resonantFrequency: 175)],
        minimumUpdateInterval: 0.001, wakeLatency: 0.001)
    static let gamepad = DeviceDescription(
        id: "recording:gamepad", name: "Simulated dual-motor gamepad", backend: "recording", actuator: .dualRumble,
        channels: [
            ChannelDescription(name: "strong", actuator: .erm, nominalFrequency: 55), ChannelDescription(name: "weak", actuator: .erm, nominalFrequency: 160),
        ], minimumUpdateInterval: 0.01, wakeLatency: 0.008)

    static var calibratedLRA: CalibrationProfile {
        CalibrationProfile(
            deviceID: "recording:lra", deviceName: "Simulated 175 Hz LRA", source: .simulated,
            channels: [
                ChannelCalibration(
                    name: "main", deadZone: 0.0785, responseExponent: 1.002, fullScaleOutput: 1.987, resonantFrequency: 174.99, qFactor: 5.98,
                    frequencyResponse: [.init(frequency: 150, relativeOutput: 0.41), .init(frequency: 175.5, relativeOutput: 1), .init(frequency: 200, relativeOutput: 0.52)],
                    usableBand: 171.2...180.7)
            ],
            sharpness: .frequency, transient: .init(duration: 0.02), limits: .init(ratedLevel: 0.9, overdriveLevel: 1))
    }

    @Test("a profile survives encoding and decoding unchanged, every kind of sharpness mapping included")
    func roundTrip() throws {
        var gamepad = CalibrationProfile.uncalibrated(for: Self.gamepad)
        gamepad.deviceID = "recording:gamepad"
        gamepad.channels[0].deadZone = 0.118
        gamepad.transient = .init(duration: 0.055, overdriveGain: 1.25, overdriveDuration: 0.01)
        var erm = CalibrationProfile.uncalibrated(for: DeviceDescription(
            id: "recording:erm", name: "ERM", backend: "recording", actuator: .erm, channels: [ChannelDescription(name: "main", actuator: .erm)],
            minimumUpdateInterval: 0.001, wakeLatency: 0))
        erm.deviceID = nil
        for profile in [Self.calibratedLRA, gamepad, erm] {
            let text = profile.encodedJSON()
            #expect(try ProfileFormat.decode(Array(text.utf8)) == profile, "\(text)")
        }
        let text = Self.calibratedLRA.encodedJSON()
        // A profile that uses nothing version 2 added is written as version 1, for older builds.
        #expect(text.hasPrefix("{\n  \"format_version\": 1,\n  \"device_id\": \"recording:lra\""))
        #expect(text.contains("\"frequency_response\": [\n        [150, 0.41],\n        [175.5, 1],"))
        #expect(text.contains("\"usable_band_hz\": [171.2, 180.7]"))
    }

    @Test("version 2: a curve starting below drive 0, saturation, start and stop drives, times, a tap exponent and level round-trip")
    func versionTwo() throws {
        var profile = Self.calibratedLRA
        profile.channels[0].deadZone = -0.116
        profile.channels[0].saturationOutput = 3.7
        profile.channels[0].startDrive = 0.13
        profile.channels[0].stopDrive = 0.05
        profile.channels[0].riseTime = 0.0955
        profile.channels[0].fallTime = 0.0509
        profile.transient.intensityExponent = 0.9
        profile.transient.level = 0.962
        let text = profile.encodedJSON()
        #expect(text.hasPrefix("{\n  \"format_version\": 2,"))
        #expect(ProfileFormat.version(for: profile) == 2 && ProfileFormat.version(for: Self.calibratedLRA) == 1)
        #expect(try ProfileFormat.decode(Array(text.utf8)) == profile, "\(text)")
        for key in ["\"dead_zone\": -0.116", "\"saturation_output\": 3.7", "\"start_drive\": 0.13", "\"stop_drive\": 0.05", "\"rise_time_s\": 0.0955", "\"intensity_exponent\": 0.9", "\"level\": 0.962"] {
            #expect(text.contains(key), "\(key) in \(text)")
        }
    }

    @Test("version 3: a profile of levels measured from zero round-trips, and only it needs version 3")
    func versionThree() throws {
        var profile = Self.calibratedLRA
        profile.drive = .level
        profile.channels[0].startDrive = 0.15
        let text = profile.encodedJSON()
        #expect(text.hasPrefix("{\n  \"format_version\": 3,") && text.contains("\"drive\": \"level\""), "\(text)")
        #expect(ProfileFormat.version(for: profile) == 3)
        #expect(try ProfileFormat.decode(Array(text.utf8)) == profile, "\(text)")
        // Amplitudes are the default, written as before.
        profile.drive = .amplitude
        #expect(!profile.encodedJSON().contains("\"drive\"") && ProfileFormat.version(for: profile) == 2)
        // Taps trimmed by sharpness need version 3 too.
        profile.transient.sharpnessTrim = [0.943, 1.023, 1.039]
        let trimmed = profile.encodedJSON()
        #expect(trimmed.contains("\"sharpness_trim\": [0.943, 1.023, 1.039]") && ProfileFormat.version(for: profile) == 3, "\(trimmed)")
        #expect(try ProfileFormat.decode(Array(trimmed.utf8)) == profile, "\(trimmed)")
    }

    @Test("version 5: a device's own calibration round-trips, sorted by name; only it (or source device) needs version 5")
    func versionFive() throws {
        var profile = Self.calibratedLRA
        profile.deviceCalibration = ["lra_period": 57, "a_cal_comp": 13, "bemf_gain": 3, "a_cal_bemf": 122]
        let text = profile.encodedJSON()
        #expect(text.hasPrefix("{\n  \"format_version\": 5,"), "\(text)")
        let names = ["a_cal_bemf", "a_cal_comp", "bemf_gain", "lra_period"].map { text.range(of: "\"\($0)\"")!.lowerBound }
        #expect(names == names.sorted(), "written in name order: \(text)")
        #expect(try ProfileFormat.decode(Array(text.utf8)) == profile, "\(text)")
        var uncalibrated = CalibrationProfile.uncalibrated(for: Self.lra)
        uncalibrated.source = .device
        #expect(ProfileFormat.version(for: uncalibrated) == 5)
        #expect(try ProfileFormat.decode(Array(uncalibrated.encodedJSON().utf8)) == uncalibrated)
        profile.deviceCalibration = [:]
        #expect(ProfileFormat.version(for: profile) < 5 && !profile.encodedJSON().contains("device_calibration"))
    }

    /// Two maps of a softening LRA's band: at 0.2 g the resonance sits higher than where the main map
    /// (and the output curve) was measured, at 1.3 g lower.
    static let mapsByOutput: [ChannelCalibration.OutputFrequencyMap] = [
        .init(output: 0.2, points: [.init(frequency: 166, relativeOutput: 0.94), .init(frequency: 167.3, relativeOutput: 1), .init(frequency: 171.4, relativeOutput: 1.08)]),
        .init(output: 1.3, points: [.init(frequency: 166, relativeOutput: 1.02), .init(frequency: 167.3, relativeOutput: 1), .init(frequency: 171.4, relativeOutput: 0.9)]),
    ]

    @Test("version 4: frequency maps by output round-trip, need version 4, and are read between the two nearest outputs within their span")
    func versionFour() throws {
        var profile = Self.calibratedLRA
        profile.channels[0].frequencyResponseByOutput = Self.mapsByOutput
        let text = profile.encodedJSON()
        #expect(text.hasPrefix("{\n  \"format_version\": 4,") && text.contains("\"frequency_response_by_output\": ["), "\(text)")
        #expect(try ProfileFormat.decode(Array(text.utf8)) == profile, "\(text)")
        let channel = profile.channels[0]
        // At or beyond a map's output, that map; between two, linear in output.
        #expect(abs(channel.relativeOutput(at: 171.4, output: 0.1) - 1.08) < 1e-12)
        #expect(abs(channel.relativeOutput(at: 171.4, output: 2) - 0.9) < 1e-12)
        #expect(abs(channel.relativeOutput(at: 171.4, output: 0.75) - 0.99) < 1e-12)
        #expect(abs(channel.relativeOutput(at: 168.65, output: 0.2) - (1 + 0.08 * 1.35 / 4.1)) < 1e-12)
        // Outside their span, and for no frequency, the main map as before.
        #expect(channel.relativeOutput(at: 150, output: 0.2) == channel.relativeOutput(at: 150))
        #expect(channel.relativeOutput(at: 0, output: 0.2) == 1)
        // A drive and its output stay each other's inverse where the map depends on the output.
        for output in [0.15, 0.5, 0.9, 1.2] {
            let drive = channel.drive(forOutput: output, at: 171.4)
            #expect(abs(channel.output(atDrive: drive, frequency: 171.4) / output - 1) < 1e-3, "\(output) g → drive \(drive)")
        }
        // Against the frequency where every map is 1: at 1.2 g the band's top gives 0.916 of it (the
        // resonance has moved away), so it takes more drive; at 0.2 g it gives 1.08, so less.
        var linear = channel
        linear.saturationOutput = nil
        for (output, relative) in [(1.2, 1.08 + (0.9 - 1.08) / 1.1), (0.2, 1.08)] {
            let ratio = (linear.drive(forOutput: output, at: 171.4) - linear.deadZone) / (linear.drive(forOutput: output, at: 167.3) - linear.deadZone)
            #expect(abs(ratio - pow(1 / relative, 1 / linear.responseExponent)) < 1e-9, "\(output) g: \(ratio)")
        }
    }

    @Test("a tap's level by sharpness: the trims interpolated linearly between sharpnesses spread evenly from 0 to 1")
    func sharpnessTrim() {
        let shape = CalibrationProfile.TransientShape(duration: 0.02, level: 0.95, sharpnessTrim: [0.9, 1.0, 1.1])
        #expect(abs(shape.level(atSharpness: 0) - 0.855) < 1e-12)
        #expect(abs(shape.level(atSharpness: 0.25) - 0.9025) < 1e-12)
        #expect(abs(shape.level(atSharpness: 0.5) - 0.95) < 1e-12)
        #expect(abs(shape.level(atSharpness: 1) - 1.045) < 1e-12)
        #expect(abs(shape.level(atSharpness: 7) - 1.045) < 1e-12 && abs(shape.level(atSharpness: -1) - 0.855) < 1e-12)
        #expect(CalibrationProfile.TransientShape(duration: 0.02, level: 0.95).level(atSharpness: 0.3) == 0.95)
    }

    @Test("the profiles shipped in Hardware/profiles parse and match their board's device")
    func shippedProfilesParse() throws {
        let directory = TestSupport.packageRoot + "/Hardware/profiles"
        let files = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".json") }
        #expect(!files.isEmpty)
        for file in files {
            let profile = try ProfileFormat.read(path: directory + "/" + file)
            #expect(profile.source == .shipped, "\(file)")
            #expect(ProfileStore.fileName(for: profile.deviceID ?? "") == file)
        }
    }

    /// A valid document with one change, and the key path and words the error must contain.
    static let invalid: [(change: @Sendable (inout [String: Any]) -> Void, path: String, words: [String])] = [
        ({ $0["format_version"] = 6 }, "$.format_version", ["newer than this build reads (5)"]),
        ({ $0["format_version"] = 4; $0["device_calibration"] = ["a_cal_comp": 13] }, "$.device_calibration", ["needs \"format_version\": 5 (this file says 4)"]),
        ({ $0["format_version"] = 4; $0["source"] = "device" }, "$.source", ["source \"device\" needs \"format_version\": 5 (this file says 4)"]),
        ({ $0["format_version"] = 5; $0["device_calibration"] = [:] as [String: Any] }, "$.device_calibration", ["expected 1...16 values, found 0"]),
        ({ $0["format_version"] = 5; $0["device_calibration"] = ["A-CAL": 13] }, "$.device_calibration.A-CAL", ["\"A-CAL\" is not a calibration name"]),
        ({ $0["format_version"] = 5; $0["device_calibration"] = ["a_cal_comp": 2e9] }, "$.device_calibration.a_cal_comp", ["outside the allowed range"]),
        ({ $0["format_version"] = 5; $0["device_calibration"] = ["a_cal_comp": "13"] }, "$.device_calibration.a_cal_comp", ["a number"]),
        ({ $0["format_version"] = 1e300 }, "$.format_version", ["format version 1e+300 is newer than this build reads (5)"]),
        ({ $0["format_version"] = 9_223_372_036_854_775_808.0 }, "$.format_version", ["newer than this build reads (5)"]),
        ({ $0["format_version"] = 1.5 }, "$.format_version", ["whole number"]),
        ({ $0.removeValue(forKey: "format_version") }, "$.format_version", ["required key is missing"]),
        ({ $0["source"] = "guessed" }, "$.source", ["\"guessed\" is not one of", "simulated"]),
        ({ $0["colour"] = "red" }, "$.colour", ["unknown key"]),
        ({ $0["channels"] = [] }, "$.channels", ["expected 1...4 channels, found 0"]),
        ({ channel(&$0) { $0["dead_zone"] = 1.2 } }, "$.channels[0].dead_zone", ["1.2 is outside the allowed range 0...0.9"]),
        ({ channel(&$0) { $0["response_exponent"] = 0 } }, "$.channels[0].response_exponent", ["0 is outside the allowed range 0.2...5"]),
        ({ channel(&$0) { $0["full_scale_output"] = -1 } }, "$.channels[0].full_scale_output", ["-1 is outside the allowed range 0.001...100"]),
        ({ channel(&$0) { $0["full_scale_output"] = "2 g" } }, "$.channels[0].full_scale_output", ["expected a number, found string"]),
        ({ channel(&$0) { $0["q_factor"] = 0.1 } }, "$.channels[0].q_factor", ["outside the allowed range 0.5...1000"]),
        ({ channel(&$0) { $0["resonant_frequency_hz"] = 0 } }, "$.channels[0].resonant_frequency_hz", ["outside the allowed range 1...20000"]),
        ({ channel(&$0) { $0["name"] = "" } }, "$.channels[0].name", ["non-empty"]),
        ({ channel(&$0) { $0["usable_band_hz"] = [200, 150] } }, "$.channels[0].usable_band_hz", ["low < high", "[200, 150]"]),
        ({ channel(&$0) { $0["usable_band_hz"] = [150] } }, "$.channels[0].usable_band_hz", ["[low_hz, high_hz]"]),
        ({ channel(&$0) { $0["frequency_response"] = [[150, 0.5], [140, 0.6]] } }, "$.channels[0].frequency_response[1][0]", ["increase strictly", "140 Hz follows 150 Hz"]),
        ({ channel(&$0) { $0["frequency_response"] = [[150, 1.5]] } }, "$.channels[0].frequency_response[0][1]", ["1.5 is outside the allowed range 0...1"]),
        ({ channel(&$0) { $0["frequency_response"] = [[150, 0], [160, 0]] } }, "$.channels[0].frequency_response", ["every relative_output is 0"]),
        ({ channel(&$0) { $0["frequency_response"] = [[150, 0.5, 3]] } }, "$.channels[0].frequency_response[0]", ["pair"]),
        ({ channel(&$0) { $0.removeValue(forKey: "usable_band_hz") } }, "$.sharpness.mapping", ["\"frequency\" needs at least one channel with usable_band_hz"]),
        ({ $0["sharpness"] = ["mapping": "motor_mix", "low_channel": 0, "high_channel": 0] }, "$.sharpness.high_channel", ["other than low_channel"]),
        ({ $0["sharpness"] = ["mapping": "motor_mix", "low_channel": 0, "high_channel": 3] }, "$.sharpness.high_channel", ["whole number in 0...0, found 3"]),
        ({ $0["sharpness"] = ["mapping": "chaos"] }, "$.sharpness.mapping", ["not one of: none, frequency, motor_mix"]),
        ({ $0["transient"] = ["duration_s": 0.9] }, "$.transient.duration_s", ["0.9 is outside the allowed range 0.001...0.5"]),
        ({ $0["transient"] = ["duration_s": 0.02, "overdrive_duration_s": 0.03] }, "$.transient.overdrive_duration_s", ["outside the allowed range 0...0.02"]),
        ({ $0["transient"] = ["duration_s": 0.02, "overdrive_gain": 9] }, "$.transient.overdrive_gain", ["outside the allowed range 1...4"]),
        ({ $0["limits"] = ["rated_level": 0.8, "overdrive_level": 0.5] }, "$.limits.overdrive_level", ["outside the allowed range 0.8...1"]),
        ({ $0.removeValue(forKey: "transient") }, "$.transient", ["required key is missing"]),
        // Version 2's keys need version 2, and have their ranges.
        ({ channel(&$0) { $0["start_drive"] = 0.2 } }, "$.channels[0].start_drive", ["needs \"format_version\": 2"]),
        ({ $0["transient"] = ["duration_s": 0.02, "intensity_exponent": 0.9] }, "$.transient.intensity_exponent", ["needs \"format_version\": 2"]),
        ({ channel(&$0) { $0["dead_zone"] = -0.2 } }, "$.channels[0].dead_zone", ["-0.2 is outside the allowed range 0...0.9"]),
        ({ $0["format_version"] = 2; channel(&$0) { $0["dead_zone"] = -1.5 } }, "$.channels[0].dead_zone", ["-1.5 is outside the allowed range -1...0.9"]),
        ({ $0["format_version"] = 2; channel(&$0) { $0["start_drive"] = 0.2; $0["stop_drive"] = 0.3 } }, "$.channels[0].stop_drive", ["0...0.2"]),
        ({ $0["format_version"] = 2; channel(&$0) { $0["saturation_output"] = 0 } }, "$.channels[0].saturation_output", ["0.001...100"]),
        ({ $0["format_version"] = 2; channel(&$0) { $0["rise_time_s"] = -1 } }, "$.channels[0].rise_time_s", ["0...10"]),
        ({ $0["format_version"] = 2; $0["transient"] = ["duration_s": 0.02, "intensity_exponent": 3] }, "$.transient.intensity_exponent", ["0.5...2"]),
        ({ $0["transient"] = ["duration_s": 0.02, "level": 0.95] }, "$.transient.level", ["needs \"format_version\": 2"]),
        // Version 3's drive needs version 3, and is one of two words.
        ({ $0["format_version"] = 2; $0["drive"] = "level" }, "$.drive", ["drive needs \"format_version\": 3 (this file says 2)"]),
        ({ $0["format_version"] = 3; $0["drive"] = "volts" }, "$.drive", ["amplitude", "level"]),
        ({ $0["format_version"] = 2; $0["transient"] = ["duration_s": 0.02, "level": 0] }, "$.transient.level", ["0 is outside the allowed range 0.5...2"]),
        ({ $0["format_version"] = 2; $0["transient"] = ["duration_s": 0.02, "sharpness_trim": [1, 1]] }, "$.transient.sharpness_trim", ["needs \"format_version\": 3 (this file says 2)"]),
        ({ $0["format_version"] = 3; $0["transient"] = ["duration_s": 0.02, "sharpness_trim": [1]] }, "$.transient.sharpness_trim", ["expected 2 to 11 trims", "found 1"]),
        ({ $0["format_version"] = 3; $0["transient"] = ["duration_s": 0.02, "sharpness_trim": [1, 3]] }, "$.transient.sharpness_trim[1]", ["3 is outside the allowed range 0.5...2"]),
        // Version 4's maps by output need version 4: two to eight, outputs increasing, the same span.
        ({ $0["format_version"] = 3; channel(&$0) { $0["frequency_response_by_output"] = byOutput([0.2, 1.3]) } }, "$.channels[0].frequency_response_by_output", ["needs \"format_version\": 4 (this file says 3)"]),
        ({ $0["format_version"] = 4; channel(&$0) { $0["frequency_response_by_output"] = byOutput([0.2]) } }, "$.channels[0].frequency_response_by_output", ["expected 2…8 maps, found 1"]),
        ({ $0["format_version"] = 4; channel(&$0) { $0["frequency_response_by_output"] = byOutput([1.3, 0.2]) } }, "$.channels[0].frequency_response_by_output[1].output", ["increase strictly", "0.2 follows 1.3"]),
        ({ $0["format_version"] = 4; channel(&$0) { $0["frequency_response_by_output"] = byOutput([0.2, 1.3], last: 172) } }, "$.channels[0].frequency_response_by_output[1].frequency_response", ["same frequencies", "166–172 Hz", "166–171.4 Hz"]),
        ({ $0["format_version"] = 4; channel(&$0) { $0["frequency_response_by_output"] = byOutput([0.2, 1.3], value: 5) } }, "$.channels[0].frequency_response_by_output[1].frequency_response[1][1]", ["5 is outside the allowed range 0...4"]),
        ({ $0["format_version"] = 4; channel(&$0) { $0["frequency_response_by_output"] = byOutput([0, 1.3]) } }, "$.channels[0].frequency_response_by_output[0].output", ["0 is outside the allowed range 0.001...100"]),
    ]

    /// `frequency_response_by_output` at `outputs`, the last map ending at `last` Hz with `value` in its middle.
    static func byOutput(_ outputs: [Double], last: Double = 171.4, value: Double = 1) -> [[String: Any]] {
        outputs.enumerated().map { index, output in
            let isLast = index == outputs.count - 1
            return ["output": output, "frequency_response": [[166, 0.95], [167.3, isLast ? value : 1], [isLast ? last : 171.4, 1.05]]]
        }
    }

    static func channel(_ document: inout [String: Any], _ change: (inout [String: Any]) -> Void) {
        var channels = document["channels"] as! [[String: Any]]
        change(&channels[0])
        document["channels"] = channels
    }

    @Test("every invalid value is reported with the file, its key path, the value and the expected range", arguments: 0..<invalid.count)
    func validationErrors(_ index: Int) throws {
        let entry = Self.invalid[index]
        var document = try JSONSerialization.jsonObject(with: Data(Self.calibratedLRA.encodedJSON().utf8)) as! [String: Any]
        entry.change(&document)
        let bytes = [UInt8](try JSONSerialization.data(withJSONObject: document))
        let error = try #require(throws: ProfileError.self) { try ProfileFormat.decode(bytes, file: "/profiles/recording_lra.json") }
        #expect(error.file == "/profiles/recording_lra.json")
        #expect(error.location == entry.path, "\(error)")
        for word in entry.words { #expect(error.problem.contains(word), "\(error) should say '\(word)'") }
        #expect(error.description.hasPrefix("/profiles/recording_lra.json: \(entry.path): "))
    }

    @Test("a syntax error names the file, the line and the column")
    func syntaxError() throws {
        let text = "{\n  \"format_version\": 1,\n  \"source\" \"simulated\"\n}"
        let error = try #require(throws: ProfileError.self) { try ProfileFormat.decode(Array(text.utf8), file: "broken.json") }
        #expect(error.description == "broken.json: line 3, column 12: expected ':' after key \"source\"")
        let missing = try #require(throws: ProfileError.self) { try ProfileFormat.read(path: "/nonexistent/profile.json") }
        #expect(missing.description.hasPrefix("/nonexistent/profile.json: cannot read:"))
    }

    @Test("a profile is checked against the device it would drive: channel count, id, bands inside the channel's range")
    func deviceChecks() throws {
        try ProfileStore.check(Self.calibratedLRA, file: "p.json", fileID: "recording:lra", device: Self.lra)
        var wrongBand = Self.calibratedLRA
        wrongBand.channels[0].usableBand = 60...200
        let band = try #require(throws: ProfileError.self) { try ProfileStore.check(wrongBand, file: "p.json", device: Self.lra) }
        #expect(band.location == "$.channels[0].usable_band_hz" && band.problem.contains("outside the channel's range 80...300 Hz"))
        let count = try #require(throws: ProfileError.self) {
            var other = Self.calibratedLRA
            other.deviceID = "recording:gamepad"
            try ProfileStore.check(other, file: "p.json", device: Self.gamepad)
        }
        #expect(count.problem == "the profile has 1 channel(s); device 'recording:gamepad' has 2")
        let id = try #require(throws: ProfileError.self) { try ProfileStore.check(Self.calibratedLRA, file: "p.json", device: Self.gamepad) }
        #expect(id.problem == "the profile is for 'recording:lra', not for device 'recording:gamepad'")
        let renamed = try #require(throws: ProfileError.self) { try ProfileStore.check(Self.calibratedLRA, file: "p.json", fileID: "recording:erm", device: Self.lra) }
        #expect(renamed.problem.contains("its file name is for 'recording:erm'"))
    }
}
