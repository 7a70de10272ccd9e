import Foundation
import Haptics
import HapticsTools
import HapticsCalibration
import Testing

/// The interactive source: its staircase and matching logic, and the whole flow driven through a
/// real pty by a scripted respondent who "feels" what the recording backend received.
@Suite("Calibration: interactive source")
struct CalibrationInteractiveTests {
    @Test("a 1-up/2-down staircase settles where a listener detects 70.7 % of stimuli")
    func staircaseConverges() {
        // A listener whose detection probability is logistic around 0.2: p(x) = 1/(1 + e^(−(x − 0.2)/0.02)).
        var generator = SeededRandom(seed: 42)
        var estimates: [Double] = []
        for _ in 0..<200 {
            var staircase = Staircase(start: 0.5, step: 0.08, minimumStep: 0.005, reversals: 14, maximumTrials: 200)
            while !staircase.isFinished {
                let p = 1 / (1 + exp(-(staircase.level - 0.2) / 0.02))
                staircase.record(detected: generator.uniform() < p)
            }
            estimates.append(staircase.threshold)
        }
        let mean = estimates.reduce(0, +) / Double(estimates.count)
        // p = 0.707 at x = 0.2 + 0.02 × ln(0.707/0.293) = 0.2176.
        #expect(abs(mean - 0.2176) < 0.01, "mean threshold \(mean)")
    }

    @Test("a deterministic listener's threshold is found within the smallest step; bisection finds a match or saturates")
    func deterministicProcedures() {
        var staircase = Staircase(start: 0.3, step: 0.08, minimumStep: 0.01, reversals: 8)
        while !staircase.isFinished { staircase.record(detected: staircase.level > 0.137) }
        #expect(abs(staircase.threshold - 0.137) <= 0.01, "\(staircase.threshold)")
        var search = MatchSearch(range: 0...1, start: 0.5, tolerance: 0.01)
        while !search.isFinished { search.record(search.level > 0.62 ? .stronger : .weaker) }
        #expect(abs(search.level - 0.62) < 0.01 && !search.saturated)
        var weak = MatchSearch(range: 0.1...1, start: 0.6, tolerance: 0.02)
        while !weak.isFinished { weak.record(.weaker) }
        #expect(weak.saturated && weak.level == 1)
    }

    /// What the respondent knows of the device: the simulated LRA's physics (the default model).
    static let truth = ModelParameters.defaultModel(for: CalibrationProfileFormatTests.lra).channels[0]

    /// The respondent: reads the prompts from the pty, looks at what the recording backend was sent
    /// since its last answer (each vibration is a run of non-silent frames), feels it through the
    /// true model (perceived strength = steady output in g, felt above 0.02 g) and answers.
    final class Respondent {
        let recording: String
        var framesSeen = 0
        var questions = 0

        init(recording: String) {
            self.recording = recording
        }

        /// The vibrations (strength in g) played since the last answer.
        func newVibrations() throws -> [Double] {
            let frames = try Recording(contentsOf: recording).frames(for: "recording:lra").map(\.frame)
            defer { framesSeen = frames.count }
            var runs: [Double] = []
            var current: Double?
            for frame in frames.dropFirst(framesSeen) {
                let drive = frame.channels[0]
                if drive.amplitude > 0 {
                    current = max(current ?? 0, CalibrationInteractiveTests.truth.steadyOutput(drive: drive.amplitude, frequency: drive.frequency))
                } else if let strength = current {
                    runs.append(strength)
                    current = nil
                }
            }
            if let current { runs.append(current) }
            return runs
        }

        func answer(_ prompt: String) throws -> String {
            questions += 1
            let felt = try newVibrations()
            if prompt.contains("[y/n]") {
                return (felt.last ?? 0) > 0.02 ? "y" : "n"
            }
            guard felt.count == 2 else {
                Issue.record("expected A and B before '\(prompt)', felt \(felt)")
                return "q"
            }
            let factor = prompt.contains("than half of A") ? 0.5 : prompt.contains("than a quarter of A") ? 0.25 : 1
            let ratio = felt[1] / (factor * felt[0])
            return abs(ratio - 1) < 0.02 ? "=" : ratio > 1 ? "s" : "w"
        }
    }

    /// A dialog answered in-process by a respondent who feels a gamepad: each vibration's strength is
    /// the power sum of both motors' steady outputs for what the recording backend received.
    final class GamepadDialog: LineDialog {
        let recording: String
        let model = ModelParameters.defaultModel(for: CalibrationProfileFormatTests.gamepad)
        var framesSeen = 0
        var lines: [String] = []
        var answers: [String] = []

        init(recording: String) {
            self.recording = recording
        }

        func say(_ line: String) { lines.append(line) }

        func felt() -> [Double] {
            guard let frames = try? Recording(contentsOf: recording).frames(for: "recording:gamepad").map(\.frame) else { return [] }
            defer { framesSeen = frames.count }
            var runs: [Double] = [], current: Double?
            for frame in frames.dropFirst(framesSeen) {
                let power = zip(model.channels, frame.channels).map { pow($0.steadyOutput(drive: $1.amplitude), 2) }.reduce(0, +)
                if frame.channels.contains(where: { $0.amplitude > 0 }) {
                    current = max(current ?? 0, power.squareRoot())
                } else if let strength = current {
                    runs.append(strength)
                    current = nil
                }
            }
            if let current { runs.append(current) }
            return runs
        }

        func ask(_ prompt: String) -> String? {
            lines.append(prompt)
            let answer = reply(to: prompt)
            answers.append(answer)
            return answer
        }

        func reply(to prompt: String) -> String {
            let runs = felt()
            if prompt.contains("[y/n]") { return (runs.last ?? 0) > 0.02 ? "y" : "n" }
            guard runs.count == 2 else { return "q" }
            let factor = prompt.contains("than half of A") ? 0.5 : prompt.contains("than a quarter of A") ? 0.25 : 1
            let ratio = runs[1] / (factor * runs[0])
            return abs(ratio - 1) < 0.02 ? "=" : ratio > 1 ? "s" : "w"
        }
    }

    @Test("interactive on a gamepad: each motor's threshold and curve, then the weak motor balanced against the strong one")
    func gamepadBalance() throws {
        let recording = TestSupport.makeTemporaryDirectory("interactive-gamepad") + "/recording.jsonl"
        let system = TestSupport.recordingSystem(devices: "gamepad", output: recording)
        let device = try system.openDevice("recording:gamepad")
        defer { device.close() }
        let dialog = GamepadDialog(recording: recording)
        let source = InteractiveSource(playback: try RealtimePlayback(device: device, logger: TestSupport.quietLogger), dialog: dialog, settings: .quick)
        let result = try Calibrator().calibrate(source)
        let channels = result.profile.channels
        #expect(dialog.answers.count > 40 && !dialog.answers.contains("q"), "every question was about vibrations the respondent felt")
        #expect(dialog.lines.contains { $0.contains("4. Balance") })
        // Felt above 0.02 g: a square-law motor is felt well above its dead zone: d = dz + (1 − dz)·√(0.02/peak).
        let strongThreshold = 0.12 + 0.88 * (0.02 / 3.0).squareRoot(), weakThreshold = 0.10 + 0.90 * (0.02 / 1.5).squareRoot()
        #expect(abs(channels[0].deadZone - strongThreshold) <= 0.02, "strong threshold \(channels[0].deadZone), expected \(strongThreshold)")
        #expect(abs(channels[1].deadZone - weakThreshold) <= 0.02, "weak threshold \(channels[1].deadZone), expected \(weakThreshold)")
        // The weak motor (1.5 g) at full strength feels half the strong one (3 g).
        #expect(abs(channels[1].fullScaleOutput / channels[0].fullScaleOutput - 0.5) <= 0.05, "\(channels.map(\.fullScaleOutput))")
        #expect(result.profile.sharpness == .motorMix(low: 0, high: 1))
        #expect(result.profile.source == .interactive)
    }

    @Test("the interactive flow through a pty, answered by a scripted respondent, fits the device it felt")
    func throughAPty() throws {
        let directory = TestSupport.makeTemporaryDirectory("interactive")
        let recording = directory + "/recording.jsonl"
        let pty = try #require(PseudoTerminal.open())
        let master = pty.master
        defer { close(master) }
        let slave = open(pty.slavePath, O_RDWR | O_NOCTTY)
        try #require(slave >= 0)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: TestSupport.buildDirectory + "/haptic-cal")
        process.arguments = [
            "calibrate", "recording:lra", "--source", "interactive", "--quick", "--set", "recording.devices=lra", "--set", "recording.simulate-wake=0",
            "--record", recording,
        ]
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CONFIG_HOME"] = directory
        process.environment = environment
        let terminal = FileHandle(fileDescriptor: slave, closeOnDealloc: false)
        process.standardInput = terminal
        process.standardOutput = terminal
        process.standardError = terminal
        try process.run()
        close(slave)

        let respondent = Respondent(recording: recording)
        var transcript = ""
        var pending = ""
        let deadline = Date().addingTimeInterval(180)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while Date() < deadline {
            var descriptor = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 200) >= 0 else { break }
            if descriptor.revents & Int16(POLLIN) != 0 {
                let count = read(master, &buffer, buffer.count)
                if count <= 0 { break }
                let text = String(decoding: buffer[0..<count], as: UTF8.self)
                transcript += text
                pending += text
            } else if descriptor.revents & Int16(POLLHUP | POLLERR) != 0 {
                break
            } else if !process.isRunning {
                break
            }
            // A prompt is a line ending in "[answers]: " with nothing after it yet.
            if pending.hasSuffix("[y/n]: ") || pending.hasSuffix("[s/w/=]: ") {
                let prompt = pending.split(separator: "\n").last.map(String.init) ?? pending
                pending = ""
                let reply = try respondent.answer(prompt)
                _ = (reply + "\n").withCString { write(master, $0, strlen($0)) }
            }
        }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(transcript.suffix(2000))")
        #expect(transcript.contains("Interactive calibration of recording:lra"))
        #expect(respondent.questions > 20, "the staircase and the matches asked questions: \(respondent.questions)")

        let profile = try ProfileFormat.read(path: directory + "/haptics/profiles/recording_lra.json")
        let channel = profile.channels[0]
        #expect(profile.source == .interactive)
        #expect(abs(channel.deadZone - 0.08) <= 0.02, "threshold-based dead zone \(channel.deadZone), truth 0.08 (felt above 0.02 g)")
        #expect(abs(channel.responseExponent - 1) <= 0.1, "exponent \(channel.responseExponent): the respondent feels output linearly")
        let f0 = try #require(channel.resonantFrequency)
        #expect(abs(f0 - 175) <= 5, "resonance from the sharpness sweep: \(f0) Hz")
        let band = try #require(channel.usableBand)
        #expect(band.contains(175))
        print("interactive: \(respondent.questions) answers; dead zone \(channel.deadZone), exponent \(channel.responseExponent), f0 \(f0) Hz, Q \(channel.qFactor ?? 0), band \(band)")
    }
}

/// The POSIX pty calls, looked up at run time (Glibc's Swift module leaves out the XSI ones).
enum PseudoTerminal {
    typealias OpenPT = @convention(c) (Int32) -> Int32
    typealias Grant = @convention(c) (Int32) -> Int32
    typealias Name = @convention(c) (Int32, UnsafeMutablePointer<CChar>, Int) -> Int32

    /// A new pty: the master's descriptor and the slave's path.
    static func open() -> (master: Int32, slavePath: String)? {
        let handle = dlopen(nil, RTLD_NOW)
        guard let openSymbol = dlsym(handle, "posix_openpt"), let grantSymbol = dlsym(handle, "grantpt"),
            let unlockSymbol = dlsym(handle, "unlockpt"), let nameSymbol = dlsym(handle, "ptsname_r")
        else { return nil }
        let master = unsafeBitCast(openSymbol, to: OpenPT.self)(O_RDWR | O_NOCTTY)
        guard master >= 0 else { return nil }
        var name = [CChar](repeating: 0, count: 128)
        guard unsafeBitCast(grantSymbol, to: Grant.self)(master) == 0, unsafeBitCast(unlockSymbol, to: Grant.self)(master) == 0,
            unsafeBitCast(nameSymbol, to: Name.self)(master, &name, name.count) == 0
        else {
            close(master)
            return nil
        }
        return (master, String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }
}
