#if canImport(Glibc)
import Glibc
#endif

/// A device operation that failed, named in ``DeviceError``.
public enum DeviceOperation: String, Sendable, Hashable {
    case enumerate, open, wake, sleep, submit, stop
    /// `write_samples`: a block of samples for a device that takes them.
    case writeSamples = "write_samples"
    /// `wait_samples`: waiting for room in a sample device's buffer.
    case waitSamples = "wait_samples"
    /// `set_triggers`: adaptive-trigger effects (ABI 1.6).
    case setTriggers = "set_triggers"
    /// `play_native`: effects stored in the device (ABI 1.7).
    case playNative = "play_native"
    /// `self_calibrate`: the device's own calibration (ABI 1.7).
    case selfCalibrate = "self_calibrate"
    /// `restore_calibration`: stored results of the device's own calibration (ABI 1.7).
    case restoreCalibration = "restore_calibration"
    /// `native_feedback`: which stored effect plays a vocabulary effect (ABI 1.8).
    case nativeFeedback = "native_feedback"
    /// `start_native`: stored effects started without waiting for their end (ABI 1.8).
    case startNative = "start_native"
}

/// Why a device could not be found, opened or driven. Each case names the device and the fix.
public enum DeviceError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No backend lists a device matching `query`; `available` lists the ids that exist.
    case notFound(query: String, available: [String])
    /// More than one device matches `query`.
    case ambiguous(query: String, matches: [String])
    /// The backend reported a failure: `errno` is the negated return code, `message` its `last_error` text.
    case backendFailure(deviceID: String?, backend: String, operation: DeviceOperation, errno: Int32, message: String)
    /// The device was closed by its owner and cannot be used any more.
    case closed(deviceID: String)
    /// The device has no adaptive triggers (or its backend predates them, ABI 1.6).
    case noAdaptiveTriggers(deviceID: String)
    /// A trigger effect the device cannot play: the parameter, its value and its range.
    case invalidTriggerEffect(deviceID: String, AdaptiveTriggerError)
    /// The device has no effects of its own (or its backend predates them, ABI 1.7).
    case noNativeEffects(deviceID: String)
    /// The device does not calibrate itself (or its backend predates it, ABI 1.7).
    case noSelfCalibration(deviceID: String)

    /// The device is gone (unplugged): the backend returned `-ENODEV`.
    public var isDeviceLost: Bool {
        if case .backendFailure(_, _, _, let code, _) = self { return code == ENODEV }
        return false
    }

    public var description: String {
        switch self {
        case .notFound(let query, let available):
            let list = available.isEmpty ? "no devices were found (see `haptic-cal list`)" : "available: " + available.joined(separator: ", ")
            return "no device matches '\(query)'; \(list)"
        case .ambiguous(let query, let matches):
            return "'\(query)' matches several devices (\(matches.joined(separator: ", "))); give the full id"
        case .backendFailure(let deviceID, let backend, let operation, let code, let message):
            let subject = deviceID ?? "backend '\(backend)'"
            let detail = message.isEmpty ? describeErrno(code) : "\(message) [\(describeErrno(code))]"
            return "\(subject): \(operation.rawValue) failed: \(detail)"
        case .closed(let deviceID):
            return "\(deviceID): the device was closed; open it again"
        case .noAdaptiveTriggers(let deviceID):
            return "\(deviceID): the device has no adaptive triggers (a DualSense or DualSense Edge has; see `haptic-cal list`)"
        case .invalidTriggerEffect(let deviceID, let error):
            return "\(deviceID): \(error)"
        case .noNativeEffects(let deviceID):
            return "\(deviceID): the device has no effects of its own (a DRV2605 or DRV2605L driver IC has its ROM library; see `haptic-cal info`)"
        case .noSelfCalibration(let deviceID):
            return "\(deviceID): the device does not calibrate itself (a DRV260x driver IC does); calibrate it with --source"
        }
    }
}
