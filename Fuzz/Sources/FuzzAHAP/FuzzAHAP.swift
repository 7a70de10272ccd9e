import FuzzSupport
import Haptics

/// AHAP import: any bytes give a pattern or an `AHAPError`. An accepted pattern keeps every time
/// within `HapticPattern.maximumTime`, exports to AHAP that imports as the same pattern, and plays
/// on a real engine (manual clock, an LRA, a gamepad and an ERM) sending only frames in range.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAHAP(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let pattern: HapticPattern
    do {
        pattern = try HapticPattern(ahapBytes: input(data, size))
    } catch {
        require(!error.description.isEmpty, "an error without a message")
        return 0
    }
    let duration = pattern.duration
    require(duration >= 0 && duration <= HapticPattern.maximumTime, "pattern lasts \(duration) s")

    let text = pattern.ahapText()
    do {
        let again = try HapticPattern(ahap: text)
        require(again == pattern, "export and import changed the pattern:\n\(text)")
    } catch {
        require(false, "the export of an accepted pattern does not import: \(error)\n\(text)")
    }

    // Played fast enough that an hour-long pattern costs a bounded number of engine passes.
    do {
        let rig = try FuzzEngine()
        let player = try rig.engine.makeAdvancedPlayer(with: pattern)
        let rate = min(max(duration / 0.25, 1), 100)
        player.playbackRate = rate
        try player.start(atTime: 0)
        rig.finish(after: duration / rate + 0.1)
    } catch {
        require(false, "an accepted pattern does not play: \(error)")
    }
    return 0
}
