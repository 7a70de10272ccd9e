import Haptics
import HapticsTools

/// Why a calibration, measurement or verification could not be done. Each case says what to do instead.
public enum CalibrationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A `--model` setting that cannot be used: the key, the value and the expected range.
    case invalidModel(String)
    /// The source cannot measure this device (a simulated source needs a recording device).
    case unsupportedDevice(deviceID: String, reason: String)
    /// The device failed.
    case device(DeviceError)
    /// The engine refused a stimulus.
    case engine(HapticEngineError)
    /// The recording the simulated source reads back could not be read.
    case recording(RecordingError)
    /// An accelerometer file could not be read or holds something unexpected: the path and the problem.
    case sensor(path: String, problem: String)
    /// No accelerometer matches the request under the IIO root.
    case noAccelerometer(root: String, request: String?, found: [String])
    /// The person's answers ended or could not be understood.
    case input(String)
    /// A measurement gave nothing usable (no output above the noise, a sweep without a peak).
    case measurement(String)
    /// The actuator (or whatever the sensor sits on) did not come to rest, or to a steady vibration,
    /// in the time allowed: what was seen.
    case notSettling(String)
    /// The measurements were made but do not make a profile worth writing: why, and what to try.
    case refused(CalibrationDiagnosis)
    /// A profile could not be read, checked or written.
    case profile(ProfileError)

    public var description: String {
        switch self {
        case .invalidModel(let problem): "--model: \(problem)"
        case .unsupportedDevice(let id, let reason): "\(id): \(reason)"
        case .device(let error): "\(error)"
        case .engine(let error): "engine: \(error)"
        case .recording(let error): "reading the recording back: \(error)"
        case .sensor(let path, let problem): "\(path): \(problem)"
        case .noAccelerometer(let root, let request, let found):
            (request.map { "no IIO accelerometer matches '\($0)' under \(root)" } ?? "no IIO accelerometer (in_accel_*_raw) under \(root)")
                + (found.isEmpty ? "; is the driver loaded (e.g. adxl345_i2c, inv_mpu6050_i2c)?" : "; found: \(found.joined(separator: ", "))")
        case .input(let problem): "input: \(problem)"
        case .measurement(let problem): "measurement: \(problem)"
        case .notSettling(let problem): "not settling: \(problem)"
        case .refused(let diagnosis): "\(diagnosis)"
        case .profile(let error): "\(error)"
        }
    }
}
