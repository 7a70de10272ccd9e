import ALSADevices
import CHapticsABI
import CHapticsSystem
import HapticsPluginKit
import HapticsSupport
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The `alsa` backend: waveform devices (voice coils, tactile transducers, exciters) on ALSA PCMs,
/// through alsa-lib. The core renders patterns into samples for them (ABI 1.4's sample path); this
/// backend converts the samples to the card's format, puts each actuator on its channel and writes
/// them, the card's clock pacing the stream.
///
/// Devices:
/// - one per device file (`alsa:NAME`, `Hardware/alsa/README.md`) found in `/etc/haptics/alsa.d`,
///   `$XDG_CONFIG_HOME/haptics/alsa.d` and the setting `alsa.devices` (files and directories,
///   colon-separated);
/// - a DualSense or DualSense Edge on USB, found by itself (`alsa:054c:0ce6:usb-PORT`): its card's
///   channels 3–4 are the left and right voice coils, 1–2 stay silent. `alsa.dualsense` set to `off`
///   turns that off.
///
/// Settings for tests: `alsa.proc-root` (default `/proc/asound`) and `alsa.sysfs-root` (`/sys`).
///
/// Safety: `stop` drops what the card holds (silent at once), `sleep` stops the stream, `close`
/// closes the PCM; when the process dies the kernel closes it, and a PCM that is not fed plays
/// nothing, so no stop guard is needed.
@_cdecl("haptics_backend_fill_v1")
public func alsaBackendFill(
    _ host: UnsafePointer<haptics_host_v1>, _ table: UnsafeMutablePointer<haptics_backend_v1>, _ size: Int
) -> Int32 {
    fillBackendTable(name: "alsa", host: host, table: table, size: size) { services in ALSABackend(services: services) }
}

final class ALSABackend: BackendDriver {
    let services: HostServices
    let search: ConfigSearch
    let procRoot: String
    let sysfsRoot: String
    let findsPads: Bool

    /// The setting listing extra device files and directories.
    static let settingKey = "alsa.devices"

    init(services: HostServices) {
        self.services = services
        var environment: [String: String] = [:]
        for name in ["XDG_CONFIG_HOME", "HOME"] {
            if let value = haptics_secure_getenv(name) { environment[name] = String(cString: value) }
        }
        search = ConfigSearch.standard(
            directory: "alsa.d", settingKey: Self.settingKey, noun: "device file", setting: services.configuration(Self.settingKey), environment: environment)
        procRoot = services.configuration("alsa.proc-root") ?? "/proc/asound"
        sysfsRoot = services.configuration("alsa.sysfs-root") ?? "/sys"
        findsPads = services.configuration("alsa.dualsense") != "off"
    }

    /// Every output of every valid device file and every DualSense on USB, and each file that could
    /// not be used.
    func outputs() -> (outputs: [ALSAOutput], failures: [ConfigFileError]) {
        let loaded = search.load(
            naming: "device ids are alsa:NAME", parse: { (path) throws(ConfigFileError) in try ALSADeviceFile.load(path: path) }, name: \.name)
        var outputs = loaded.values.map { ALSAOutput(file: $0.value) }
        let failures = loaded.failures
        if findsPads {
            outputs += SoundCard.scan(procRoot: procRoot, sysfsRoot: sysfsRoot).compactMap(ALSAOutput.dualSense(card:))
        }
        return (outputs, failures)
    }

    /// One device per output, and one unavailable listing per file that could not be used. Opens
    /// no card.
    func devices() -> [DeviceSpec] {
        let found = outputs()
        return found.outputs.map(Self.spec) + found.failures.map(Self.unusableFile)
    }

    func open(deviceID: String) throws(BackendFailure) -> any DeviceDriver {
        let found = outputs()
        guard let output = found.outputs.first(where: { $0.id == deviceID }) else {
            if let failure = found.failures.first(where: { Self.unusableFileID($0) == deviceID }) {
                throw BackendFailure(code: EINVAL, "alsa: \(failure)")
            }
            let known = found.outputs.map(\.id)
            throw BackendFailure(
                code: ENODEV,
                "alsa: no device '\(deviceID)' (device files in \(search.locations.map(\.path).joined(separator: ", ")); DualSense cards in \(procRoot))"
                    + (known.isEmpty ? "; none found: write one (Hardware/alsa/README.md) or set alsa.devices" : "; found: \(known.joined(separator: ", "))"))
        }
        let pcm = try PCM(output: output)
        services.log(
            HAPTICS_LOG_DEBUG,
            "\(deviceID): opened \(output.pcm): \(output.channels) channels at \(output.rate) Hz, period \(pcm.periodFrames) frames, buffer \(pcm.bufferFrames) frames")
        return ALSADevice(pcm: pcm)
    }

    static func spec(_ output: ALSAOutput) -> DeviceSpec {
        let channels = output.actuators.map { actuator in
            ChannelSpec(
                name: actuator.name, actuator: actuator.kind == .lra ? HAPTICS_ACTUATOR_LRA : HAPTICS_ACTUATOR_VOICE_COIL, amplitudeSteps: 32_768,
                frequencyRange: Float(actuator.frequencyRange.lowerBound)...Float(actuator.frequencyRange.upperBound),
                resonantFrequency: Float(actuator.resonantFrequency ?? 0))
        }
        var spec = DeviceSpec(
            id: output.id, name: output.name, actuator: HAPTICS_ACTUATOR_VOICE_COIL, channels: channels,
            minimumUpdateIntervalNanoseconds: 1_000_000, wakeLatencyNanoseconds: 1_000_000, physicalID: output.physicalID, preference: 100)
        spec.sampleStream = SampleStreamSpec(
            rate: UInt32(output.rate), periodFrames: UInt32(output.periodFrames), bufferFrames: UInt32(output.bufferFrames),
            latencyNanoseconds: output.latencyNanoseconds)
        return spec
    }

    static func unusableFileID(_ failure: ConfigFileError) -> String {
        DeviceSpec.unusableFileID(backend: "alsa", category: "devices", failure)
    }

    static func unusableFile(_ failure: ConfigFileError) -> DeviceSpec {
        DeviceSpec.unusableFile(backend: "alsa", category: "devices", noun: "ALSA device file", failure)
    }
}

/// One open waveform device: its PCM, used by one call at a time.
final class ALSADevice: DeviceDriver {
    private let pcm: Mutex<PCM?>

    init(pcm: PCM) { self.pcm = Mutex(pcm) }

    private func with<T>(_ body: (PCM) throws(BackendFailure) -> T) throws(BackendFailure) -> T {
        try pcm.withLock { (open: inout PCM?) throws(BackendFailure) -> T in
            guard let current = open else { throw BackendFailure(code: ENODEV, "alsa: the device was closed") }
            return try body(current)
        }
    }

    func wake() throws(BackendFailure) { try with { pcm throws(BackendFailure) in try pcm.prepare() } }
    func sleep() throws(BackendFailure) { try with { pcm throws(BackendFailure) in try pcm.drop() } }
    func stop() throws(BackendFailure) { try with { pcm throws(BackendFailure) in try pcm.drop() } }

    func submit(_ frame: FrameView) throws(BackendFailure) {
        throw BackendFailure(code: EOPNOTSUPP, "alsa: this device takes samples (ABI 1.4), not frames; the host is older than the backend")
    }

    func writeSamples(_ block: SampleBlock) throws(BackendFailure) -> SamplesWritten {
        try with { pcm throws(BackendFailure) in try pcm.write(block) }
    }

    func close() {
        pcm.withLock { open in
            open?.close()
            open = nil
        }
    }
}
