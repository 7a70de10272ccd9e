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
        let chosen = profile.flatMap { $0.channels.count == device.channels.count ? $0 : nil } ?? CalibrationProfile.uncalibrated(for: device)
        self.profile = chosen
        sendsLevels = chosen.drive == .level && device.envelope?.acceptsLevels == true
        startWindow = chosen.channels.contains { $0.startDrive != nil } ? PatternTimeline.startWindow : 0
        highestIntensity = max(chosen.transient.highestLevel, 1)
    }

    /// Whether the drives are levels the device takes as they are: the frames the engine sends for
    /// them are marked ``DriveFrame/levels``. A profile of levels for a device that does not take
    /// them (a backend older than ABI 1.3) has its levels turned into amplitudes through the
    /// device's envelope instead, the nearest the device has.
    public let sendsLevels: Bool

    /// How long a sustained vibration is started at its channels' start thresholds, in seconds:
    /// 0.02 where a channel has a ``ChannelCalibration/startDrive``, else 0 (nothing to start).
    public let startWindow: Double

    /// The largest intensity a drive may be asked for: 1, or more where the profile's taps are trimmed up.
    let highestIntensity: Double

    /// The drive of every channel for `intensity` (0 … 1, or up to the profile's tap
    /// ``CalibrationProfile/TransientShape/highestLevel`` where that trims a tap up) and `sharpness`
    /// (0 … 1); `gain` multiplies the drive above the dead zone (a transient's kick) and lifts the
    /// limit from the rated to the overdrive level; `starting` (a sustained vibration's first
    /// 20 ms) lifts a drive under a channel's ``ChannelCalibration/startDrive`` to it, so the
    /// actuator breaks away from rest.
    public func drives(intensity: Double, sharpness: Double, gain: Double = 1, starting: Bool = false) -> [ChannelDrive] {
        var result = [ChannelDrive](repeating: .off, count: device.channels.count)
        forEachDrive(intensity: intensity, sharpness: sharpness, gain: gain, starting: starting) { index, drive in result[index] = drive }
        return result
    }

    /// Mixes what ``drives(intensity:sharpness:gain:starting:)`` gives into `mixed` (one entry per channel),
    /// keeping on each channel the stronger drive: how the engine sums voices, in place, with no
    /// array built.
    func mix(intensity: Double, sharpness: Double, gain: Double, starting: Bool = false, into mixed: inout [ChannelDrive]) {
        forEachDrive(intensity: intensity, sharpness: sharpness, gain: gain, starting: starting) { index, drive in
            if drive.amplitude > mixed[index].amplitude { mixed[index] = drive }
        }
    }

    /// Calls `body` with each channel that is driven and its drive (channels left out are off).
    private func forEachDrive(intensity: Double, sharpness: Double, gain: Double, starting: Bool = false, _ body: (Int, ChannelDrive) -> Void) {
        let target = max(0, min(intensity, highestIntensity)) * CalibrationProfile.referenceOutput
        let sharpness = max(0, min(sharpness, 1))
        let cap = gain > 1 ? profile.limits.overdriveLevel : profile.limits.ratedLevel
        guard target > 0 else { return }
        let envelope = device.envelope ?? .passThrough
        let convertsLevels = profile.drive == .level && !envelope.acceptsLevels

        func drive(_ index: Int, output: Double, frequency: Double) {
            // The kick multiplies the part of the drive above the dead zone, so kicked taps stay
            // proportional to intensity.
            let channel = profile.channels[index]
            var level = channel.drive(forOutput: output, at: frequency)
            if level > 0, channel.deadZone < 0 {
                // The smallest drive gives output here: keep it from rounding to nothing.
                level = max(level, 1 / Double(max(device.channels[index].amplitudeSteps - 1, 1)))
            }
            // A sustained vibration's start: under the start threshold the actuator would stay at
            // rest, so it gets the threshold until it has broken away, then holds what was asked
            // (above the stop threshold a running motor keeps turning).
            if starting, let start = channel.startDrive, level > 0, level < start { level = start }
            let kicked = level > channel.deadZone ? channel.deadZone + (level - channel.deadZone) * gain : level
            let capped = min(kicked, cap)
            body(index, ChannelDrive(amplitude: convertsLevels ? envelope.amplitude(forLevel: capped) : capped, frequency: frequency))
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
