import ArgumentParser
import Foundation
import Haptics
import HapticsAudioAnalysis
import HapticsAudioFile
import HapticsTools
import Synchronization

/// `haptic-cal play DEVICE [FILE.ahap | EFFECT]`: plays a raw pulse, an AHAP file or a named
/// feedback effect, and shows what a recording device received.
struct Play: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Play a pulse, an AHAP file or a feedback effect on a device.",
        discussion: """
            Without FILE-OR-EFFECT, plays a pulse of --intensity, --sharpness and --duration (0 s: a transient tap). \
            On a recording device, prints every power transition and frame the backend received, with its time.
            """)

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The device: an id (see `haptic-cal list`), a unique id prefix, or part of its name.")
    var device: String

    @Argument(
        help: ArgumentHelp(
            "An AHAP file, a .haptic clip, a feedback effect name (see `haptic-cal effects`), or a DRV2605L's ROM effects: drv2605:strong-click-100,wait:100ms,sharp-click-60.",
            valueName: "file-or-effect"))
    var what: String?

    @Option(help: "Pulse intensity, 0…1.")
    var intensity: Double = 1

    @Option(help: "Pulse sharpness, 0…1.")
    var sharpness: Double = 0.5

    @Option(help: "Pulse duration in seconds, 0…30 (0 plays a transient tap).")
    var duration: Double = 0.1

    @Option(help: ArgumentHelp("Write an SVG plot of the recorded frames (recording devices).", valueName: "file"))
    var svg: String?

    @Flag(help: "Derive haptics from the audio files an AHAP's AudioCustom events name (as haptic-cal convert does), and play them with the pattern.")
    var audioToHaptics = false

    func validate() throws {
        guard intensity.isFinite, (0...1).contains(intensity) else {
            throw ValidationError("--intensity \(intensity) is outside 0…1")
        }
        guard sharpness.isFinite, (0...1).contains(sharpness) else {
            throw ValidationError("--sharpness \(sharpness) is outside 0…1")
        }
        guard duration.isFinite, (0...HapticEvent.maximumContinuousDuration).contains(duration) else {
            throw ValidationError("--duration \(duration) is outside 0…30 seconds")
        }
    }

    func run() throws {
        if let what, what.hasPrefix(Self.nativePrefix) {
            try playNative(String(what.dropFirst(Self.nativePrefix.count)))
            return
        }
        var (pattern, label) = try patternToPlay()
        if audioToHaptics {
            let (derived, notes) = try withHapticsFromAudio(pattern)
            pattern = derived
            for note in notes { print("note: \(note)") }
        }
        let feedback = what.flatMap { FeedbackEffect.named($0) }?.name
        let (clipNotes, description, recording) = try global.withDevice(device) { description, engine in
            var clipNotes = try registerClips(of: pattern, on: description, engine: engine)
            // A vocabulary effect plays as a feedback generator plays it: from the device's own
            // stored effects where one fits.
            if let feedback, let stored = engine.devices.first?.nativeFeedback(feedback, scale: 1) {
                clipNotes.append("\(description.id) plays \(feedback) from its own effects: \(stored)")
            }
            let player = try engine.makeAdvancedPlayer(with: pattern, intensityScale: 1, feedback: feedback)
            let finished = Completion()
            let stopped = Mutex<String?>(nil)
            engine.stoppedHandler = { reason in
                stopped.withLock { $0 = "\(reason)" }
                finished.signal(nil)
            }
            player.completionHandler = { error in finished.signal(error) }
            try player.start(atTime: 0)
            let limit = pattern.duration + 5
            guard let error = finished.wait(seconds: limit) else { throw PlayError.timedOut(seconds: limit) }
            if let reason = stopped.withLock({ $0 }) { throw PlayError.stopped(reason) }
            if let failure = error { throw PlayError.failed("\(failure)") }
            return clipNotes
        }
        print("played \(label) on \(description.id) (\(description.name))")
        for note in clipNotes { print("note: \(note)") }
        guard let recording else { return }
        printTimeline(recording, description: description)
        if let svg {
            try writeSVG(RecordingPlot.chart(recording: recording, deviceID: description.id, pattern: pattern).render(), to: svg)
            print("wrote \(svg)")
        }
    }

    /// `pattern` with the haptics of each `AudioCustom` event's audio file added at the event's
    /// time, scaled by its `AudioVolume` (files read relative to the AHAP's directory, each
    /// analysed once); and what was done.
    func withHapticsFromAudio(_ pattern: HapticPattern) throws -> (HapticPattern, [String]) {
        let custom = pattern.events.filter { $0.type == .audioCustom && $0.waveformPath != nil }
        guard !custom.isEmpty else { return (pattern, ["--audio-to-haptics: the pattern has no AudioCustom event; nothing derived"]) }
        let directory = what.map { ($0 as NSString).deletingLastPathComponent } ?? "."
        var derived: [String: HapticPattern] = [:]
        var events = pattern.events
        for event in custom {
            let path = event.waveformPath!
            if derived[path] == nil {
                let file = path.hasPrefix("/") ? path : (directory.isEmpty ? path : directory + "/" + path)
                derived[path] = try AudioConversion.clip(ofFile: file, options: AudioToHapticsOptions()).clip.pattern
            }
            let volume = event.parameters.first { $0.id == .audioVolume }?.value ?? 1
            for haptic in derived[path]!.events {
                var shifted = haptic
                shifted.relativeTime += event.relativeTime
                shifted.parameters = shifted.parameters.map { $0.id == .hapticIntensity ? HapticEventParameter(parameterID: .hapticIntensity, value: $0.value * volume) : $0 }
                events.append(shifted)
            }
        }
        let combined = try HapticPattern(events: events, parameters: pattern.parameters, parameterCurves: pattern.parameterCurves)
        let added = events.count - pattern.events.count
        return (combined, ["--audio-to-haptics: \(added) haptic events derived from \(derived.count) audio file\(derived.count == 1 ? "" : "s") (\(custom.count) AudioCustom event\(custom.count == 1 ? "" : "s"))"])
    }

    /// What names a device's own effects: `drv2605:strong-click-100,wait:100ms,sharp-click-60`.
    static let nativePrefix = "drv2605:"

    /// Plays effects stored in the device (a DRV2605L's ROM library) and returns once they played.
    func playNative(_ sequence: String) throws {
        let system = global.makeSystem()
        let description = try system.resolve(device)
        guard description.hasNativeEffects else {
            if case .daemon = system.mode {
                throw CommandFailure("\(description.id): effects stored in a device play only in the process that owns it: stop hapticsd or add --in-process")
            }
            throw CommandFailure("\(description.id) has no effects of its own: \(Self.nativePrefix)… names a DRV2605 or DRV2605L's ROM library effects")
        }
        let opened = try system.openDevice(description.id)
        defer { opened.close() }
        try opened.playNative(sequence)
        print("played \(Self.nativePrefix)\(sequence) on \(description.id) (\(description.name))")
    }

    /// Decodes the clips `pattern`'s `AudioCustom` events name (paths relative to the AHAP file's
    /// directory) and registers each with `engine` under the path as the file writes it, when the
    /// device is a waveform device (which plays `AudioContinuous` events too); returns notes on
    /// what will not be played, and why.
    func registerClips(of pattern: HapticPattern, on description: DeviceDescription, engine: HapticEngine) throws -> [String] {
        let custom = pattern.events.filter { $0.type == .audioCustom }
        var notes: [String] = []
        guard description.sampleStream != nil else {
            let audio = pattern.events.filter { !$0.type.isHaptic }
            if !audio.isEmpty {
                let kinds = Set(audio.map(\.type.rawValue)).sorted().joined(separator: ", ")
                notes.append(
                    "\(audio.count) audio event\(audio.count == 1 ? "" : "s") (\(kinds)) not played: \(description.id) is a motor device; "
                        + "audio events play on waveform devices (voice coils, the DualSense's coils, a transducer on a sound card)")
            }
            return notes
        }
        if pattern.events.contains(where: { $0.type == .audioContinuous && $0.parameters.contains { $0.id == .audioBrightness || $0.id == .audioPan } }) {
            notes.append("AudioBrightness and AudioPan of AudioContinuous events not applied: each plays as a sine in the coil's band")
        }
        guard !custom.isEmpty else { return notes }
        let directory = what.map { ($0 as NSString).deletingLastPathComponent } ?? "."
        var registered = 0
        for path in Set(custom.compactMap(\.waveformPath)).sorted() {
            let file = path.hasPrefix("/") ? path : (directory.isEmpty ? path : directory + "/" + path)
            let clip = try AudioClip(contentsOfFile: file)
            do {
                try engine.registerAudioResource(clip, named: path)
                registered += 1
            } catch {
                // A service started before an upgrade that brought clips: the haptics still play.
                guard case .serviceFailure(let name, _) = error, name == "org.freedesktop.DBus.Error.UnknownMethod" else { throw error }
                notes.append("\(custom.count) AudioCustom event\(custom.count == 1 ? "" : "s") not played: the running hapticsd predates clips; restart it")
                return notes
            }
        }
        if custom.contains(where: { $0.waveformUsesVolumeEnvelope == true }) {
            notes.append("EventWaveformUseVolumeEnvelope is not applied: clips play at their AudioVolume")
        }
        let ignored = Set(custom.flatMap { $0.parameters.map(\.id) }.filter { [.audioPan, .audioPitch, .audioBrightness].contains($0) }.map(\.rawValue)).sorted()
        if !ignored.isEmpty { notes.append("\(ignored.joined(separator: ", ")) of AudioCustom events not applied: clips play at their AudioVolume") }
        print("clips: \(registered) file\(registered == 1 ? "" : "s") decoded for \(custom.count) AudioCustom event\(custom.count == 1 ? "" : "s")")
        return notes
    }

    /// The pattern and how to name it.
    func patternToPlay() throws -> (HapticPattern, String) {
        guard let what else {
            let parameters = [HapticEventParameter(parameterID: .hapticIntensity, value: intensity), .init(parameterID: .hapticSharpness, value: sharpness)]
            let event = duration == 0
                ? HapticEvent(eventType: .hapticTransient, parameters: parameters, relativeTime: 0)
                : HapticEvent(eventType: .hapticContinuous, parameters: parameters, relativeTime: 0, duration: duration)
            let label = duration == 0
                ? "a tap (intensity \(intensity), sharpness \(sharpness))"
                : "a \(fixed(duration * 1000, 0)) ms pulse (intensity \(intensity), sharpness \(sharpness))"
            return (try HapticPattern(events: [event]), label)
        }
        if let effect = FeedbackEffect.named(what) { return (effect.pattern, effect.name) }
        if what.hasSuffix(".haptic") { return (try HapticClip(contentsOfFile: what).pattern, what) }
        if what.hasSuffix(".ahap") || what.contains("/") { return (try HapticPattern(contentsOfFile: what), what) }
        throw ValidationError("'\(what)' is neither an AHAP file, a .haptic clip nor a feedback effect; `haptic-cal effects` lists the effects")
    }

    func printTimeline(_ recording: Recording, description: DeviceDescription) {
        let entries = recording.entries(for: description.id)
        guard let origin = entries.first?.time else { return }
        let names = description.channels.map(\.name)
        print("  \(padLeft("time", 11))  event  \(names.joined(separator: " | "))")
        for entry in entries {
            let time = padLeft("+" + fixed(entry.time.seconds(since: origin) * 1000, 3) + " ms", 11)
            switch entry.event {
            case .frame(let frame):
                let channels = frame.channels.map { drive in
                    drive.amplitude > 0 && drive.frequency > 0 ? "\(fixed(drive.amplitude, 3)) @ \(fixed(drive.frequency, 1)) Hz" : fixed(drive.amplitude, 3)
                }
                print("  \(time)  frame  \(channels.joined(separator: " | "))")
            case .triggers(let right, let left):
                print("  \(time)  triggers  R2 \(right?.text ?? "unchanged") | L2 \(left?.text ?? "unchanged")")
            case .native(let sequence, _):
                print("  \(time)  native  \(sequence)")
            default:
                print("  \(time)  \(entry.event.name)")
            }
        }
        let frames = recording.frames(for: description.id)
        if let first = frames.first, let wake = entries.first(where: { $0.event == .wake }) {
            print("  first frame \(fixed(first.received.seconds(since: wake.time) * 1000, 3)) ms after wake; \(frames.count) frames")
        }
    }
}

/// Why a play did not complete.
enum PlayError: Error, CustomStringConvertible {
    case timedOut(seconds: Double)
    case stopped(String)
    case failed(String)

    var description: String {
        switch self {
        case .timedOut(let seconds): "playback did not finish within \(fixed(seconds, 1)) s"
        case .stopped(let reason): "playback stopped: \(reason)"
        case .failed(let reason): "playback failed: \(reason)"
        }
    }
}

/// A one-shot signal carrying an optional error, waited on with a timeout.
final class Completion: Sendable {
    private let state = Mutex<(done: Bool, error: String?)>((false, nil))
    private let semaphore = DispatchSemaphore(value: 0)

    func signal(_ error: (any Error)?) {
        let first = state.withLock { state -> Bool in
            guard !state.done else { return false }
            state = (true, error.map { "\($0)" })
            return true
        }
        if first { semaphore.signal() }
    }

    /// nil on timeout; `.some(nil)` when finished without error.
    func wait(seconds: Double) -> String?? {
        guard semaphore.wait(timeout: .now() + seconds) == .success else { return nil }
        return .some(state.withLock { $0.error })
    }
}
