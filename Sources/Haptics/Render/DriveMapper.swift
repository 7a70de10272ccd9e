#if canImport(Glibc)
import Glibc
#endif

/// Turns intensity and sharpness into per-channel drive for one device, through its profile.
///
/// This is where "sharpness 0.8" becomes a 230 Hz drive on an LRA, more of the weak motor on a
/// gamepad, or nothing at all on a single ERM; and where intensity becomes the drive level that
/// gives the same output on every calibrated device.
public struct DriveMapper: Sendable, Hashable {
    /// The device.
    public let device: DeviceDescription
    /// Its profile.
    public let profile: CalibrationProfile

    /// A mapper for `device` through `profile` (the uncalibrated default when nil). A profile whose
    /// channel count does not match the device is replaced by the default.
    public init(device: DeviceDescription, profile: CalibrationProfile? = nil) {
        self.device = device
        let fallback = CalibrationProfile.uncalibrated(for: device)
        if let profile, profile.channels.count == device.channels.count {
            self.profile = profile
        } else {
            self.profile = fallback
        }
    }

    /// The drive of every channel for `intensity` (0 … 1, or up to the profile's tap
    /// ``CalibrationProfile/TransientShape/level`` where that trims a tap up) and `sharpness`
    /// (0 … 1); `gain` multiplies the drive above the dead zone (a transient's kick) and lifts the
    /// limit from the rated to the overdrive level.
    public func drives(intensity: Double, sharpness: Double, gain: Double = 1) -> [ChannelDrive] {
        var result = [ChannelDrive](repeating: .off, count: device.channels.count)
        forEachDrive(intensity: intensity, sharpness: sharpness, gain: gain) { index, drive in result[index] = drive }
        return result
    }

    /// Mixes what ``drives(intensity:sharpness:gain:)`` gives into `mixed` (one entry per channel),
    /// keeping on each channel the stronger drive: how the engine sums voices, in place, with no
    /// array built.
    func mix(intensity: Double, sharpness: Double, gain: Double, into mixed: inout [ChannelDrive]) {
        forEachDrive(intensity: intensity, sharpness: sharpness, gain: gain) { index, drive in
            if drive.amplitude > mixed[index].amplitude { mixed[index] = drive }
        }
    }

    /// Calls `body` with each channel that is driven and its drive (channels left out are off).
    private func forEachDrive(intensity: Double, sharpness: Double, gain: Double, _ body: (Int, ChannelDrive) -> Void) {
        let target = max(0, min(intensity, max(profile.transient.level, 1))) * CalibrationProfile.referenceOutput
        let sharpness = max(0, min(sharpness, 1))
        let cap = gain > 1 ? profile.limits.overdriveLevel : profile.limits.ratedLevel
        guard target > 0 else { return }

        func drive(_ index: Int, output: Double, frequency: Double) {
            // The kick multiplies the part of the drive above the dead zone, so kicked taps stay
            // proportional to intensity.
            let channel = profile.channels[index]
            var level = channel.drive(forOutput: output, at: frequency)
            if level > 0, channel.deadZone < 0 {
                // The smallest drive gives output here: keep it from rounding to nothing.
                level = max(level, 1 / Double(max(device.channels[index].amplitudeSteps - 1, 1)))
            }
            let kicked = level > channel.deadZone ? channel.deadZone + (level - channel.deadZone) * gain : level
            body(index, ChannelDrive(amplitude: min(kicked, cap), frequency: frequency))
        }

        switch profile.sharpness {
        case .none:
            for index in device.channels.indices where device.channels[index].actuator != .trigger {
                drive(index, output: target, frequency: 0)
            }
        case .frequency:
            for index in profile.channels.indices {
                guard let band = profile.channels[index].usableBand, band.lowerBound > 0 else { continue }
                // What the device will play: a device that plays whole periods cannot play every
                // frequency of the band, and the profile's map holds outputs where it can.
                let frequency = device.playedFrequency(band.lowerBound * pow(band.upperBound / band.lowerBound, sharpness), within: band)
                drive(index, output: target, frequency: frequency)
            }
        case .motorMix(let low, let high):
            let angle = sharpness * Double.pi / 2
            if device.channels.indices.contains(low) { drive(low, output: target * cos(angle), frequency: 0) }
            if device.channels.indices.contains(high) { drive(high, output: target * sin(angle), frequency: 0) }
        }
    }
}
