import ALSADevices
import FuzzSupport

/// ALSA device files: any bytes give a device file or a `ConfigFileError` with a message. An
/// accepted file gives an output the backend can open as described: 1…4 actuators on distinct
/// channels within the PCM's, bands below half the rate around the resonance, levels in 0.01…1,
/// and a period that fits in its buffer.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzALSA(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let file: ALSADeviceFile
    do {
        file = try ALSADeviceFile.parse(input(data, size), path: "fuzz.json")
    } catch {
        require(!error.description.isEmpty, "an error without a message")
        return 0
    }
    let output = ALSAOutput(file: file)
    require(output.id == "alsa:" + file.name && (1...32).contains(output.channels), "\(output.id), \(output.channels) channels")
    require(output.periodFrames >= 1 && output.bufferFrames >= 2 * output.periodFrames, "period \(output.periodFrames), buffer \(output.bufferFrames)")
    require((1...4).contains(output.actuators.count), "\(output.actuators.count) actuators")
    require(Set(output.actuators.map(\.channel)).count == output.actuators.count, "two actuators share a channel")
    for actuator in output.actuators {
        require((1...output.channels).contains(actuator.channel), "channel \(actuator.channel) of \(output.channels)")
        let band = actuator.frequencyRange
        require(band.lowerBound > 0 && band.lowerBound < band.upperBound && band.upperBound < Double(output.rate) / 2, "band \(band)")
        if let resonance = actuator.resonantFrequency { require(band.contains(resonance), "resonance \(resonance) outside \(band)") }
        require((0.01...1).contains(actuator.ratedLevel), "rated level \(actuator.ratedLevel)")
    }
    return 0
}
