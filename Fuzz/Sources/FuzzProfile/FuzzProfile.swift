import FuzzSupport
import Haptics

/// The calibration-profile format: any bytes give a profile or a `ProfileError`. An accepted
/// profile encodes to text that decodes to it, maps every intensity and sharpness to drives in
/// range, and drives a real engine (manual clock) through a tap and a pulse.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzProfile(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let profile: CalibrationProfile
    do {
        profile = try ProfileFormat.decode(input(data, size), file: "fuzz.json")
    } catch {
        require(!error.description.isEmpty, "an error without a message")
        return 0
    }
    let text = ProfileFormat.encode(profile)
    do {
        let again = try ProfileFormat.decode(Array(text.utf8), file: "encoded.json")
        require(again == profile, "encoding changed the profile:\n\(text)")
    } catch {
        require(false, "an encoded profile does not decode: \(error)\n\(text)")
    }

    // A device the profile fits: as many channels, each able to play any usable band.
    let channels = profile.channels.indices.map { index in
        ChannelDescription(name: "c\(index)", actuator: .lra, frequencyRange: 1...20_000, resonantFrequency: 175)
    }
    let device = DeviceDescription(
        id: profile.deviceID ?? "fuzz:profile", name: "profile", backend: "fuzz", actuator: .lra, channels: channels, minimumUpdateInterval: 0.001, wakeLatency: 0.001)
    do { try ProfileStore.check(profile, file: "fuzz.json", device: device) } catch { require(false, "a decoded profile does not fit its device: \(error)") }
    let mapper = DriveMapper(device: device, profile: profile)
    for intensity in [0, 1e-9, 0.05, 0.5, 1] {
        for sharpness in [0, 0.3, 1.0] {
            for gain in [1, profile.transient.overdriveGain] {
                for drive in mapper.drives(intensity: intensity, sharpness: sharpness, gain: gain) {
                    require(drive.amplitude.isFinite && (0...1).contains(drive.amplitude), "drive \(drive.amplitude) for intensity \(intensity)")
                    require(drive.frequency.isFinite && drive.frequency >= 0, "frequency \(drive.frequency)")
                }
            }
        }
    }
    do {
        let rig = try FuzzEngine(devices: [device], profiles: [device.id: profile])
        let pattern = try HapticPattern(events: [
            HapticEvent(eventType: .hapticTransient, parameters: [.init(parameterID: .hapticIntensity, value: 0.7)], relativeTime: 0),
            HapticEvent(
                eventType: .hapticContinuous, parameters: [.init(parameterID: .hapticSharpness, value: 0.9)], relativeTime: 0.05, duration: 0.05),
        ])
        try rig.engine.makePlayer(with: pattern).start(atTime: 0)
        rig.finish(after: 0.2)
    } catch {
        require(false, "a decoded profile does not play: \(error)")
    }
    return 0
}
