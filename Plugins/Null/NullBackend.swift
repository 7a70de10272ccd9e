import CHapticsABI
import HapticsPluginKit

#if canImport(Glibc)
import Glibc
#endif

/// The `null` backend: one device that accepts everything and outputs nothing. Useful to measure
/// the core's own overhead and to run apps where no hardware is wanted.
@_cdecl("haptics_backend_fill_v1")
public func nullBackendFill(
    _ host: UnsafePointer<haptics_host_v1>, _ table: UnsafeMutablePointer<haptics_backend_v1>, _ size: Int
) -> Int32 {
    fillBackendTable(name: "null", host: host, table: table, size: size) { _ in NullBackend() }
}

final class NullBackend: BackendDriver {
    static let device = DeviceSpec(
        id: "null:0", name: "Null device (outputs nothing)", actuator: HAPTICS_ACTUATOR_LRA,
        channels: [ChannelSpec(name: "main", actuator: HAPTICS_ACTUATOR_LRA, frequencyRange: 1...1000)],
        minimumUpdateIntervalNanoseconds: 0, wakeLatencyNanoseconds: 0)

    func devices() throws(BackendFailure) -> [DeviceSpec] { [Self.device] }

    func open(deviceID: String) throws(BackendFailure) -> any DeviceDriver {
        guard deviceID == Self.device.id else { throw BackendFailure(code: ENODEV, "null: no device '\(deviceID)'; the only one is null:0") }
        return NullDevice()
    }
}

final class NullDevice: DeviceDriver {
    func wake() throws(BackendFailure) {}
    func sleep() throws(BackendFailure) {}
    func submit(_ frame: FrameView) throws(BackendFailure) {}
    func stop() throws(BackendFailure) {}
    func close() {}
}
