import HapticsSupport

#if canImport(Glibc)
import Glibc
#endif

/// An accelerometer read through the Linux IIO sysfs interface: `iio:deviceN/in_accel_{x,y,z}_raw`
/// with `in_accel_scale` (or per axis `in_accel_x_scale`) and an optional `in_accel_offset`
/// (`in_accel_x_offset`). Per the IIO ABI, acceleration in m/s² is `(raw + offset) × scale`; it is
/// reported here in g (÷ 9.80665). An ADXL345 (`adxl345_i2c`) or MPU-6050 (`inv_mpu6050_i2c`)
/// taped to the motor shows up this way.
public struct IIOAccelerometer: Sendable, Hashable {
    /// Standard gravity, m/s² per g.
    public static let standardGravity = 9.80665
    /// Where the kernel lists IIO devices.
    public static let standardRoot = "/sys/bus/iio/devices"

    /// One axis: its raw file and how to convert it.
    public struct Axis: Sendable, Hashable {
        /// `x`, `y` or `z`.
        public var name: String
        /// The `in_accel_<axis>_raw` file.
        public var rawPath: String
        /// m/s² per count.
        public var scale: Double
        /// Counts added before scaling.
        public var offset: Double
    }

    /// The device directory (`/sys/bus/iio/devices/iio:device0`).
    public var directory: String
    /// Its `name` file (`adxl345`), or the directory's name.
    public var name: String
    /// The axes found (one to three).
    public var axes: [Axis]
    /// Conversions per second (`in_accel_sampling_frequency` or `sampling_frequency`), Hz, if the driver says.
    public var samplingFrequency: Double?

    /// The accelerometer in `directory`.
    /// - Throws: ``CalibrationError/sensor(path:problem:)`` naming the file that is missing or unreadable.
    public init(directory: String) throws(CalibrationError) {
        self.directory = directory
        name = (try? Self.readText(directory + "/name"))?.trimmed ?? String(directory.split(separator: "/").last ?? "")
        var axes: [Axis] = []
        for axis in ["x", "y", "z"] {
            let raw = "\(directory)/in_accel_\(axis)_raw"
            guard Self.exists(raw) else { continue }
            let scale = try Self.number(first: ["\(directory)/in_accel_\(axis)_scale", "\(directory)/in_accel_scale"], what: "scale")
            guard let scale, scale > 0 else {
                throw .sensor(path: "\(directory)/in_accel_scale", problem: "missing or not a positive number; the IIO ABI needs a scale to convert raw counts")
            }
            let offset = try Self.number(first: ["\(directory)/in_accel_\(axis)_offset", "\(directory)/in_accel_offset"], what: "offset") ?? 0
            axes.append(Axis(name: axis, rawPath: raw, scale: scale, offset: offset))
        }
        guard !axes.isEmpty else { throw .sensor(path: directory, problem: "no in_accel_x_raw, in_accel_y_raw or in_accel_z_raw: not an accelerometer") }
        self.axes = axes
        let rate = try Self.number(first: ["\(directory)/in_accel_sampling_frequency", "\(directory)/sampling_frequency"], what: "sampling frequency")
        samplingFrequency = rate.flatMap { $0 > 0 ? $0 : nil }
    }

    /// The accelerometers under `root`, in device order.
    public static func all(root: String = standardRoot) -> [IIOAccelerometer] {
        deviceDirectories(root: root).compactMap { try? IIOAccelerometer(directory: $0) }
    }

    /// The accelerometer `request` names under `root`: nil for the first one; `iio:device2` or
    /// `2`; a path to a device directory; or a name from its `name` file (`adxl345`).
    public static func find(root: String = standardRoot, request: String?) throws(CalibrationError) -> IIOAccelerometer {
        if let request, request.contains("/") { return try IIOAccelerometer(directory: request) }
        let found = all(root: root)
        let listing = found.map { "\($0.directory.split(separator: "/").last ?? "") (\($0.name))" }
        guard let request, !request.isEmpty else {
            guard let first = found.first else { throw .noAccelerometer(root: root, request: nil, found: []) }
            return first
        }
        let wanted = request.allSatisfy(\.isNumber) ? "iio:device\(request)" : request
        if let match = found.first(where: { $0.directory.hasSuffix("/" + wanted) || $0.name.lowercased() == wanted.lowercased() }) { return match }
        throw .noAccelerometer(root: root, request: request, found: listing)
    }

    /// One reading of every axis, g (gravity included).
    public func read() throws(CalibrationError) -> [Double] {
        var values: [Double] = []
        values.reserveCapacity(axes.count)
        for axis in axes {
            guard let text = try? Self.readText(axis.rawPath), let raw = Double(text.trimmed), raw.isFinite else {
                throw .sensor(path: axis.rawPath, problem: "cannot read a whole number (is the device still there?)")
            }
            values.append((raw + axis.offset) * axis.scale / Self.standardGravity)
        }
        return values
    }

    // MARK: - sysfs

    static func deviceDirectories(root: String) -> [String] {
        directoryEntries(atPath: root).filter { $0.hasPrefix("iio:device") }
            .sorted { (Int($0.dropFirst(10)) ?? 0) < (Int($1.dropFirst(10)) ?? 0) }.map { root + "/" + $0 }
    }

    static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    /// The first of `paths` that exists, as a number.
    static func number(first paths: [String], what: String) throws(CalibrationError) -> Double? {
        for path in paths where exists(path) {
            // Double(_:) reads "nan" and "inf" too; neither is a reading.
            guard let text = try? readText(path), let value = Double(text.trimmed), value.isFinite else {
                throw .sensor(path: path, problem: "the \(what) is not a finite number")
            }
            return value
        }
        return nil
    }

    /// A small sysfs file's text (opened, read and closed each time: sysfs makes a fresh value per open).
    static func readText(_ path: String) throws(CalibrationError) -> String {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            throw .sensor(path: path, problem: String(cString: strerror(code)))
        }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 64)
        var count = 0
        while count < buffer.count {
            let got = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress! + count, $0.count - count) }
            if got < 0, errno == EINTR { continue }
            guard got > 0 else { break }
            count += got
        }
        return String(decoding: buffer[0..<count], as: UTF8.self)
    }
}
