import Haptics
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// Plays stimuli on a device in real time through its own ``HapticEngine`` (with the default
/// policy: the user's intensity scale must not bend a calibration), for the sources that need the
/// world to react: a person feeling it, an accelerometer on it.
public final class RealtimePlayback: Sendable {
    /// The device played on.
    public let device: HapticDevice
    let engine: HapticEngine

    /// Playback on `device`.
    public init(device: HapticDevice, logger: Logger = Logger(label: "haptics.calibration")) throws(CalibrationError) {
        self.device = device
        do {
            engine = try HapticEngine(devices: [device], policy: HapticPolicy(), logger: logger)
        } catch {
            throw .engine(error)
        }
        engine.isAutoShutdownEnabled = false
    }

    deinit { engine.stop() }

    /// The engine's clock now.
    public func now() -> HapticInstant { engine.clock.now() }

    /// Starts `pattern` through `profile` at `lead` seconds from now and returns that instant; the
    /// pattern then plays on the engine's scheduler thread while the caller does its part.
    @discardableResult
    public func start(_ pattern: HapticPattern, profile: CalibrationProfile, lead: Double = 0.02) throws(CalibrationError) -> (
        start: HapticInstant, player: any HapticPatternPlayer
    ) {
        engine.setProfile(profile, forDevice: device.description.id)
        let start = now().advanced(bySeconds: lead)
        do {
            let player = try engine.makePlayer(with: pattern)
            try player.start(atTime: start.seconds)
            return (start, player)
        } catch {
            throw .engine(error)
        }
    }

    /// Plays `pattern` and returns once it has finished and the device has gone idle (at most
    /// `length + 1` seconds), so a recording backend has written it out.
    public func play(_ pattern: HapticPattern, profile: CalibrationProfile, length: Double) throws(CalibrationError) {
        let (start, player) = try start(pattern, profile: profile)
        Self.sleep(until: start.advanced(bySeconds: length))
        let deadline = start.advanced(bySeconds: length + 1)
        while device.powerState != .idle, now() < deadline { Self.sleep(seconds: 0.002) }
        withExtendedLifetime(player) {}
    }

    /// Sleeps until the monotonic clock reads `instant`.
    static func sleep(until instant: HapticInstant) {
        let remaining = instant.seconds(since: HapticInstant.monotonicNow())
        if remaining > 0 { sleep(seconds: remaining) }
    }

    /// Sleeps for `seconds`.
    static func sleep(seconds: Double) {
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - Double(Int(seconds))) * 1e9))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0, errno == EINTR { request = remaining }
    }
}
