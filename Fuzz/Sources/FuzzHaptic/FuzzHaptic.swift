import FuzzSupport
import Haptics

/// `.haptic` clip import and export. Any bytes give a clip or an error with a message. An accepted
/// clip writes text that reads back as the same clip; its pattern is valid, starts by its first
/// breakpoint and ends by its last, renders its amplitude envelope, and plays on a real engine
/// (manual clock, an LRA, a gamepad and an ERM) sending only frames in range; the clip made back
/// from that pattern passes the reader's checks. The same bytes through `HapticPattern(document:)`
/// give a pattern or an error, never a crash.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHaptic(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = input(data, size)
    do {
        _ = try HapticPattern(document: bytes)
    } catch {
        require(!error.description.isEmpty, "a document error without a message")
    }
    let clip: HapticClip
    do {
        clip = try HapticClip(hapticBytes: bytes)
    } catch {
        require(!error.description.isEmpty, "an error without a message")
        return 0
    }
    let text = clip.hapticText()
    do {
        let again = try HapticClip(haptic: text)
        require(again == clip, "export and import changed the clip:\n\(text)")
    } catch {
        require(false, "the text of an accepted clip does not read: \(error)\n\(text)")
    }

    let pattern = clip.pattern
    require(pattern.duration <= clip.duration + 1e-9, "the pattern (\(pattern.duration) s) outlasts the clip (\(clip.duration) s)")
    // Where the envelope is a line (not at a step), the pattern renders it.
    if clip.amplitude.count <= 64, clip.duration > 0, clip.duration < 5 {
        for sample in pattern.strongestVoice(transientDuration: 0, spacing: clip.duration / 50) where sample.time < clip.duration {
            let steps = clip.amplitude.contains { abs($0.time - sample.time) < 1e-6 }
            guard !steps else { continue }
            let expected = clip.amplitude(at: sample.time)
            require(abs(sample.intensity - min(1, expected)) < 1e-6, "at \(sample.time) s the pattern renders \(sample.intensity), the clip \(expected)")
        }
    }

    do {
        let back = HapticClip(pattern: pattern)
        _ = try HapticClip(version: back.version, metadata: back.metadata, amplitude: back.amplitude, frequency: back.frequency)
    } catch {
        require(false, "the clip made from the pattern fails the reader's checks: \(error)")
    }

    do {
        let rig = try FuzzEngine()
        let player = try rig.engine.makeAdvancedPlayer(with: pattern)
        let rate = min(max(pattern.duration / 0.25, 1), 100)
        player.playbackRate = rate
        try player.start(atTime: 0)
        rig.finish(after: pattern.duration / rate + 0.1)
    } catch {
        require(false, "an accepted clip does not play: \(error)")
    }
    return 0
}
