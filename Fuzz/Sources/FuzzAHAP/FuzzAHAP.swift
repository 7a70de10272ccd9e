import FuzzSupport
import Haptics

/// AHAP import and patterns made in code. Any bytes give a pattern or an error: AHAP text through
/// `HapticPattern(ahapBytes:)`, or, after a 0 byte (never valid JSON), records of raw `Double`
/// bit patterns through `HapticPattern(events:parameters:parameterCurves:)`, so every value a
/// Double can hold (huge, tiny, NaN, infinities) reaches the checks directly; mutating text rarely
/// makes a number large enough. An accepted pattern keeps every time within
/// `HapticPattern.maximumTime`, exports to AHAP that imports as the same pattern, and plays on a
/// real engine (manual clock, an LRA, a gamepad and an ERM) sending only frames in range.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAHAP(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = input(data, size)
    let pattern: HapticPattern
    if bytes.first == 0 {
        let records = Records(bytes.dropFirst())
        do {
            pattern = try HapticPattern(events: records.events, parameters: records.parameters, parameterCurves: records.curves)
        } catch {
            require(!error.description.isEmpty, "an error without a message")
            return 0
        }
    } else {
        do {
            pattern = try HapticPattern(ahapBytes: bytes)
        } catch {
            require(!error.description.isEmpty, "an error without a message")
            return 0
        }
    }
    let duration = pattern.duration
    require(duration >= 0 && duration <= HapticPattern.maximumTime + 1e-9, "pattern lasts \(duration) s")

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

/// A pattern's parts read from bytes: each record is a kind byte (event, parameter or curve), an
/// id byte, then `Double`s from 8 bytes each (little-endian bit patterns).
struct Records {
    var events: [HapticEvent] = []
    var parameters: [HapticDynamicParameter] = []
    var curves: [HapticParameterCurve] = []

    init(_ bytes: ArraySlice<UInt8>) {
        var reader = Reader(bytes: bytes)
        while let kind = reader.byte(), let id = reader.byte() {
            switch kind % 3 {
            case 0:
                let types = HapticEvent.EventType.allCases
                let type = types[Int(id) % types.count]
                guard let time = reader.double(), let duration = reader.double(), let intensity = reader.double(), let sharpness = reader.double()
                else { return }
                events.append(HapticEvent(
                    eventType: type, parameters: [.init(parameterID: .hapticIntensity, value: intensity), .init(parameterID: .hapticSharpness, value: sharpness)],
                    relativeTime: time, duration: duration, waveformPath: type == .audioCustom ? "sound.wav" : nil))
            case 1:
                let ids = HapticDynamicParameter.ID.allCases
                guard let value = reader.double(), let time = reader.double() else { return }
                parameters.append(HapticDynamicParameter(parameterID: ids[Int(id) % ids.count], value: value, relativeTime: time))
            default:
                let ids = HapticDynamicParameter.ID.allCases
                guard let time = reader.double(), let count = reader.byte() else { return }
                var points: [HapticParameterCurve.ControlPoint] = []
                for _ in 0..<(Int(count) % 40) {
                    guard let at = reader.double(), let value = reader.double() else { break }
                    points.append(.init(relativeTime: at, value: value))
                }
                curves.append(HapticParameterCurve(parameterID: ids[Int(id) % ids.count], controlPoints: points, relativeTime: time))
            }
        }
    }
}

struct Reader {
    var bytes: ArraySlice<UInt8>

    mutating func byte() -> UInt8? { bytes.popFirst() }

    mutating func double() -> Double? {
        guard bytes.count >= 8 else { return nil }
        let bits = bytes.prefix(8).reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        bytes = bytes.dropFirst(8)
        return Double(bitPattern: bits)
    }
}
