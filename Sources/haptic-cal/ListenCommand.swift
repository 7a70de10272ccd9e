import ArgumentParser
import Dispatch
import Foundation
import Haptics
import HapticsAudioAnalysis

/// `haptic-cal listen DEVICE --source CAPTURE`: live audio drives a device.
struct Listen: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Let live audio drive a device: an ALSA capture (a microphone, a loopback, a sound server's monitor).",
        discussion: """
            The capture's band around the device's usable band (from its calibration profile; else 30–250 Hz) is followed \
            with an automatic gain and onset emphasis, and plays as a continuous vibration whose intensity and sharpness follow \
            it. Runs until --seconds pass or Ctrl-C, then leaves the device stopped, and prints the latency from audio in to \
            drive out. On a desktop, capture what plays with --source pulse (or pipewire) after choosing the monitor source, \
            e.g. `pactl set-default-source $(pactl get-default-sink).monitor`.
            """)

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The device: an id (see `haptic-cal list`), a unique id prefix, or part of its name.")
    var device: String

    @Option(
        help: ArgumentHelp(
            "The audio to follow: an ALSA capture PCM (default, hw:CARD=Loopback,DEV=1, pulse, pipewire), or BACKEND:PCM to name the backend.",
            valueName: "capture"))
    var source = "default"

    @Option(help: ArgumentHelp("Stop after this many seconds (default: run until Ctrl-C).", valueName: "seconds"))
    var seconds: Double?

    @Option(help: ArgumentHelp("The band to follow, in Hz, as LOW-HIGH (default: the device's usable band).", valueName: "low-high"))
    var band: String?

    @Option(help: ArgumentHelp("Audio below this level (dBFS) is silence, -120…0.", valueName: "dB"))
    var gate = LiveHapticsOptions().gate

    @Option(help: ArgumentHelp("How much an onset adds above the envelope, 0…1.", valueName: "amount"))
    var emphasis = LiveHapticsOptions().onsetEmphasis

    @Option(help: ArgumentHelp("Scales every intensity, 0…1.", valueName: "scale"))
    var intensity = 1.0

    @Option(help: ArgumentHelp("Frames read at a time (default: 5 ms at the capture's rate).", valueName: "frames"))
    var period: Int?

    func validate() throws {
        if let seconds { guard seconds.isFinite, seconds > 0, seconds <= 86_400 else { throw ValidationError("--seconds \(seconds) is outside 0…86400") } }
        if let period { guard (16...65_536).contains(period) else { throw ValidationError("--period \(period) is outside 16…65536 frames") } }
        do { try options().validate() } catch { throw ValidationError("\(error)") }
    }

    /// The options as given.
    func options() throws -> LiveHapticsOptions {
        var options = LiveHapticsOptions()
        if let band {
            let parts = band.split(separator: "-").map { Double($0.trimmingCharacters(in: .whitespaces)) }
            guard parts.count == 2, let low = parts[0], let high = parts[1], low < high else {
                throw ValidationError("--band '\(band)' is not LOW-HIGH in Hz with LOW below HIGH, e.g. --band 40-200")
            }
            options.band = low...high
        }
        options.gate = gate
        options.onsetEmphasis = emphasis
        options.intensity = intensity
        return options
    }

    func run() throws {
        let options = try options()
        // The capture is this process's whichever process owns the device: through hapticsd the
        // plugins are loaded here for it alone. This second set of backends records to /dev/null
        // (the recording backend truncates its output as it starts: the device's system writes it).
        var settings = global.backendSettings()
        settings["recording.output"] = "/dev/null"
        let captureSystem = HapticSystem(configuration: .init(searchPath: global.searchPath, settings: settings, logger: quietLogger(), daemon: .never))
        let capture: AudioCapture
        do { capture = try captureSystem.openCapture(source, periodFrames: period) } catch { throw CommandFailure("\(error)") }
        defer { capture.close() }
        let (report, description, _) = try global.withDevice(device) { description, engine in
            let live = try LiveHaptics(capture: capture, engine: engine, options: options)
            let how = live.mode == .signal ? "the filtered signal, \(Int((live.signalDelay * 1000).rounded())) ms behind" : "intensity and sharpness frames"
            print("listening to \(capture.backendName):\(capture.source) (\(capture.format)), band \(Int(live.band.lowerBound))–\(Int(live.band.upperBound)) Hz, on \(description.id) (\(how))")
            // Ctrl-C and SIGTERM end the run, which leaves the device stopped.
            var sources: [any DispatchSourceSignal] = []
            for number in [SIGINT, SIGTERM] {
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler { live.stop() }
                source.resume()
                sources.append(source)
            }
            defer { for source in sources { source.cancel() } }
            return live.run(for: seconds)
        }
        print(Self.summary(report, deviceID: description.id))
        if let failure = report.failure { throw CommandFailure(failure) }
    }

    /// The run in a few lines: audio, onsets, updates, overruns, latency p50/p99.
    static func summary(_ report: LiveHapticsReport, deviceID: String) -> String {
        func ms(_ seconds: Double?) -> String { seconds.map { String(format: "%.1f ms", $0 * 1000) } ?? "–" }
        return """
            \(String(format: "%.1f", report.seconds)) s of audio in \(report.blocks) blocks, \(report.onsets) onsets, \(report.updates) drive updates to \(deviceID), \(report.overruns) overruns
            latency audio in → drive out: p50 \(ms(report.latency(percentile: 0.5))), p99 \(ms(report.latency(percentile: 0.99))), max \(ms(report.latency(percentile: 1)))
            """
    }
}
