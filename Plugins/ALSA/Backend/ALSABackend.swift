import ALSADevices
import CHapticsABI
import CHapticsSystem
import HapticsPluginKit
import HapticsSupport
import HIDReports
import HapticsStopGuard
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
///   turns that off. `alsa.dualsense-period-us` (1000…100000, default 5000) and
///   `alsa.dualsense-periods` (2…16, default 3) size its buffer: longer periods cost less CPU
///   and more periods survive a busier machine, both at more latency.
///
/// Settings for tests: `alsa.proc-root` (default `/proc/asound`) and `alsa.sysfs-root` (`/sys`).
///
/// Hotplug: one monitor per process watches `/dev/snd` for PCM nodes (and `/dev` for `/dev/snd`
/// itself, on a machine whose first card comes later); each change rescans, so a pad plugged in
/// while a program runs is announced (`HAPTICS_EVENT_DEVICE_ADDED`), and one unplugged is announced
/// gone and its open device marked lost.
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
    /// The outputs of the last scan and the open devices.
    let registry: DeviceRegistry<ALSAOutput, ALSADevice>
    let search: ConfigSearch
    let procRoot: String
    let sysfsRoot: String
    let findsPads: Bool
    /// A pad's period in microseconds and periods in its buffer, or why a setting cannot be used.
    let padBuffer: Result<(periodMicroseconds: Int, periods: Int), BackendFailure>

    /// The setting listing extra device files and directories.
    static let settingKey = "alsa.devices"

    init(services: HostServices) {
        self.services = services
        search = ConfigSearch.standard(
            directory: "alsa.d", settingKey: Self.settingKey, noun: "device file", setting: services.configuration(Self.settingKey),
            environment: services.searchEnvironment)
        procRoot = services.configuration("alsa.proc-root") ?? "/proc/asound"
        sysfsRoot = services.configuration("alsa.sysfs-root") ?? "/sys"
        findsPads = services.configuration("alsa.dualsense") != "off"
        registry = DeviceRegistry(backend: "alsa", noun: "device", services: services)
        padBuffer = Result { () throws(BackendFailure) in
            (try Self.integer(services, "alsa.dualsense-period-us", in: 1_000...100_000, default: ALSAOutput.dualSensePeriodMicroseconds, of: "microseconds"),
             try Self.integer(services, "alsa.dualsense-periods", in: 2...16, default: ALSAOutput.dualSensePeriods, of: "periods"))
        }
    }

    /// The whole number setting `key` gives, `fallback` when unset; a failure naming the setting,
    /// the value and the range otherwise.
    static func integer(
        _ services: HostServices, _ key: String, in range: ClosedRange<Int>, default fallback: Int, of unit: String
    ) throws(BackendFailure) -> Int {
        guard let setting = services.configuration(key) else { return fallback }
        guard let value = Int(setting), range.contains(value) else {
            throw BackendFailure(
                code: EINVAL,
                "setting \(key) is \(setting.debugDescription): expected a whole number of \(unit) from \(range.lowerBound) to \(range.upperBound) (default \(fallback)); fix or unset it")
        }
        return value
    }

    /// Every output of every valid device file and every DualSense on USB, and each file that could
    /// not be used.
    func outputs() -> (outputs: [ALSAOutput], failures: [ConfigFileError]) {
        let loaded = search.load(
            naming: "device ids are alsa:NAME", parse: { (path) throws(ConfigFileError) in try ALSADeviceFile.load(path: path) }, name: \.name)
        var outputs = loaded.values.map { ALSAOutput(file: $0.value) }
        let failures = loaded.failures
        if findsPads {
            // With a setting that cannot be used the pad is still listed (unavailable, saying why).
            let buffer = try? padBuffer.get()
            outputs += SoundCard.scan(procRoot: procRoot, sysfsRoot: sysfsRoot).compactMap { card in
                guard let buffer else { return ALSAOutput.dualSense(card: card) }
                return ALSAOutput.dualSense(card: card, periodMicroseconds: buffer.periodMicroseconds, periods: buffer.periods)
            }
        }
        return (outputs, failures)
    }

    /// One device per output, and one unavailable listing per file that could not be used. Opens
    /// no card.
    ///
    /// A pad whose card another process holds (a sound server, as on most desktops) is listed
    /// unavailable, naming the holder: the host then serves the pad through its rumble emulation
    /// (its hid or evdev listing, same physical id) until the card is free.
    func devices() -> [DeviceSpec] {
        let found = rescan()
        do throws(BackendFailure) {
            try registry.follow(Self.monitor) { [weak self] _ in
                guard let self else { return ([], 0) }
                return (self.outputs().outputs, Self.nextGeneration())
            }
        } catch {
            services.log(HAPTICS_LOG_WARNING, "alsa: no hotplug monitor (\(error.message)): devices plugged in later show at the next listing")
        }
        let padFailure: String? = if case .failure(let failure) = padBuffer { failure.message } else { nil }
        return found.outputs.map { output in
            var spec = Self.spec(output)
            if output.isDualSense, let padFailure { spec.unavailableReason = padFailure }
            if spec.unavailableReason == nil, let card = output.padCard, let pid = card.playbackOwnerPID(procRoot: procRoot), pid != getpid() {
                spec.unavailableReason =
                    "its sound card \(card.id) is in use by \(SoundCard.process(pid)): the pad's rumble (hid or evdev) serves it meanwhile; "
                    + "for the coils, free the card or play through PipeWire's Direct profile (Hardware/alsa/README.md)"
            }
            return spec
        } + found.failures.map(Self.unusableFile)
    }

    func open(deviceID: String) throws(BackendFailure) -> any DeviceDriver {
        let found = rescan()
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
        if output.isDualSense, case .failure(let failure) = padBuffer { throw failure }
        let pcm = try PCM(output: output)
        services.log(
            HAPTICS_LOG_DEBUG,
            "\(deviceID): opened \(output.pcm): \(output.channels) channels at \(output.rate) Hz, period \(pcm.periodFrames) frames, buffer \(pcm.bufferFrames) frames")
        var mode: PadModeSwitch?
        if let productID = output.padProductID {
            if let node = output.padHidraw {
                mode = PadModeSwitch(node: node, productID: productID, deviceID: deviceID, services: services)
            } else {
                services.log(
                    HAPTICS_LOG_WARNING,
                    "\(deviceID): no hidraw node of the pad under \(output.physicalID ?? "its USB device"): its rumble emulation cannot be switched off, and once a program has asked it for rumble the coils stay silent until it is plugged in again")
            }
        }
        let device = ALSADevice(pcm: pcm, mode: mode)
        registry.opened(device, as: output)
        return device
    }

    func destroy() { registry.stopFollowing() }

    /// Lists the outputs and applies them to the registry (what appeared and went since the last
    /// scan is announced, an open device whose card went is marked lost).
    func rescan() -> (outputs: [ALSAOutput], failures: [ConfigFileError]) {
        let found = outputs()
        registry.apply(found.outputs, generation: Self.nextGeneration())
        return found
    }

    /// Scans are numbered process-wide, so an older one is never applied after a newer one.
    private static let generations = Atomic<UInt64>(0)
    static func nextGeneration() -> UInt64 { generations.add(1, ordering: .relaxed).newValue }

    /// The process's monitor: PCM nodes coming and going under `/dev/snd`. Its scan is only a
    /// signal: each backend instance lists with its own settings.
    static let monitor = HotplugMonitor<Void>(
        threadName: "haptics-alsa-hp", timing: .init(pendingMilliseconds: 50), source: { SoundNodeSource() }, scan: {}, isPending: { _ in false })

    static func spec(_ output: ALSAOutput) -> DeviceSpec {
        let channels = output.actuators.map { actuator in
            ChannelSpec(
                name: actuator.name, actuator: actuator.kind == .lra ? HAPTICS_ACTUATOR_LRA : HAPTICS_ACTUATOR_VOICE_COIL, amplitudeSteps: 32_768,
                frequencyRange: Float(actuator.frequencyRange.lowerBound)...Float(actuator.frequencyRange.upperBound),
                resonantFrequency: Float(actuator.resonantFrequency ?? 0))
        }
        var spec = DeviceSpec(
            id: output.id, name: output.name, actuator: HAPTICS_ACTUATOR_VOICE_COIL, channels: channels,
            minimumUpdateIntervalNanoseconds: 1_000_000, wakeLatencyNanoseconds: 1_000_000, physicalID: output.physicalID,
            preference: output.isDualSense ? padPreference : 100)
        spec.sampleStream = SampleStreamSpec(
            rate: UInt32(output.rate), periodFrames: UInt32(output.periodFrames), bufferFrames: UInt32(output.bufferFrames),
            latencyNanoseconds: output.latencyNanoseconds)
        // A DualSense's triggers, through the same hidraw node as its mode switch.
        spec.adaptiveTriggers = output.padProductID != nil && output.padHidraw != nil
        return spec
    }

    /// A pad's coils are preferred to its rumble (hidraw 200, evdev 100): on a DualSense the
    /// rumble is the firmware's emulation played on these same two coils, and the two cannot sound
    /// together (the emulation must be off for the coils to be heard), so the pad is one device
    /// with two ways in, and the direct one serves it while it can.
    static let padPreference: Int32 = 300

    static func unusableFileID(_ failure: ConfigFileError) -> String {
        DeviceSpec.unusableFileID(backend: "alsa", category: "devices", failure)
    }

    static func unusableFile(_ failure: ConfigFileError) -> DeviceSpec {
        DeviceSpec.unusableFile(backend: "alsa", category: "devices", noun: "ALSA device file", failure)
    }
}

/// One open waveform device: its PCM (and a DualSense's mode switch), used by one call at a time.
final class ALSADevice: DeviceDriver, LosableDevice {
    private let pcm: Mutex<PCM?>
    private let mode: PadModeSwitch?
    /// Why the device is gone, once a scan found its card unplugged (apart from `pcm`'s lock, which
    /// a blocked write holds for up to a period).
    private let lost = Mutex<BackendFailure?>(nil)

    init(pcm: PCM, mode: PadModeSwitch?) {
        self.pcm = Mutex(pcm)
        self.mode = mode
    }

    @discardableResult
    func markLost(_ message: String) -> BackendFailure {
        lost.withLock { lost in
            if lost == nil { lost = BackendFailure(code: ENODEV, message) }
            return lost!
        }
    }

    private func with<T>(_ body: (PCM) throws(BackendFailure) -> T) throws(BackendFailure) -> T {
        if let failure = lost.withLock({ $0 }) { throw failure }
        return try pcm.withLock { (open: inout PCM?) throws(BackendFailure) -> T in
            guard let current = open else { throw BackendFailure(code: ENODEV, "alsa: the device was closed") }
            return try body(current)
        }
    }

    func wake() throws(BackendFailure) {
        try with { pcm throws(BackendFailure) in try pcm.prepare() }
        mode?.coils()
    }

    func sleep() throws(BackendFailure) {
        try with { pcm throws(BackendFailure) in try pcm.drop() }
        mode?.rumble()
    }

    func stop() throws(BackendFailure) { try with { pcm throws(BackendFailure) in try pcm.drop() } }

    func setTriggers(right: AdaptiveTriggerEffect?, left: AdaptiveTriggerEffect?) throws(BackendFailure) {
        if let failure = lost.withLock({ $0 }) { throw failure }
        guard let mode else { throw BackendFailure(code: EOPNOTSUPP, "alsa: this device has no adaptive triggers") }
        try mode.setTriggers(right: right, left: left)
    }

    func submit(_ frame: FrameView) throws(BackendFailure) {
        throw BackendFailure(code: EOPNOTSUPP, "alsa: this device takes samples (ABI 1.4), not frames; the host is older than the backend")
    }

    func writeSamples(_ block: SampleBlock) throws(BackendFailure) -> SamplesWritten {
        try with { pcm throws(BackendFailure) in try pcm.write(block) }
    }

    func waitForSamples(frames: Int, timeoutNanoseconds: UInt64) throws(BackendFailure) -> Int {
        try with { pcm throws(BackendFailure) in try pcm.wait(frames: frames, timeoutNanoseconds: timeoutNanoseconds) }
    }

    func close() {
        pcm.withLock { open in
            open?.close()
            open = nil
        }
        mode?.close()
    }
}

/// A DualSense's firmware mode, switched through output report 0x02 on its hidraw node: the voice
/// coils follow the USB audio stream only while no rumble emulation is selected. ``coils()`` (on
/// wake) clears it (``DualSense/audioHapticsReport(transport:sequence:)``); ``rumble()`` (on sleep
/// and close) selects it again with both motors off, the state a rumble player expects. Owns the
/// node's descriptor. A node that cannot be opened or written is logged once, naming the node and
/// the fix; the coils still play.
///
/// It also sets the pad's adaptive triggers (``setTriggers(right:left:)``, report 0x02's trigger
/// blocks). While an effect holds either trigger, the stop guard holds a report that sets both free
/// (and gives the pad its rumble emulation back, motors off), so every kind of death releases them;
/// ``rumble()`` and ``close()`` release them too.
final class PadModeSwitch: Sendable {
    private struct State {
        var fd: Int32 = -1
        var coils = false
        var warned = false
        /// Which triggers hold an effect other than off (right, left).
        var triggers = TriggerEngagement()
        /// The stop-guard slot holding the release report while a trigger is engaged, else -1.
        var guardSlot: Int32 = -1
    }

    private let state = Mutex(State())
    private let node: String
    private let rumbleMode: DualSense.VibrationMode
    private let deviceID: String
    private let services: HostServices

    init(node: String, productID: UInt16, deviceID: String, services: HostServices) {
        self.node = node
        rumbleMode = DualSense.vibrationMode(productID: productID, updateVersion: nil)
        self.deviceID = deviceID
        self.services = services
    }

    /// Hands the coils the audio stream.
    func coils() { send(DualSense.audioHapticsReport(transport: .usb, sequence: 0), coils: true) }

    /// Gives the pad its rumble emulation back, motors off, and sets its triggers free.
    func rumble() {
        let (coils, engaged) = state.withLock { ($0.coils, $0.triggers.any) }
        if coils { send(engaged ? releaseReport : DualSense.stopReport(transport: .usb, sequence: 0, mode: rumbleMode), coils: false) }
        if engaged {
            if !coils { send(DualSense.releasingTriggers(DualSense.audioHapticsReport(transport: .usb, sequence: 0), transport: .usb), coils: false) }
            state.withLock { state in
                state.triggers = TriggerEngagement()
                haptics_stop_guard_unregister(state.guardSlot)
                state.guardSlot = -1
            }
        }
    }

    /// Rumble emulation back, motors off, both triggers free: what the stop guard writes.
    private var releaseReport: [UInt8] { DualSense.releasingTriggers(DualSense.stopReport(transport: .usb, sequence: 0, mode: rumbleMode), transport: .usb) }

    /// Sets the triggers' effects (nil: as they are): checked first, so an effect the pad cannot play
    /// changes nothing; a write that fails is thrown, naming the node.
    func setTriggers(right: AdaptiveTriggerEffect?, left: AdaptiveTriggerEffect?) throws(BackendFailure) {
        let blocks: DualSense.TriggerBlocks
        do throws(AdaptiveTriggerError) { blocks = try DualSense.TriggerBlocks(right: right, left: left) } catch {
            throw BackendFailure(code: EINVAL, "\(deviceID): \(error)")
        }
        let report = blocks.report(transport: .usb, sequence: 0)
        // Registered before the write: a death right after it still releases them.
        if blocks.after(state.withLock { $0.triggers }).any { try registerRelease() }
        let failure = state.withLock { state -> BackendFailure? in
            if state.fd < 0 { state.fd = Glibc.open(node, O_WRONLY | O_CLOEXEC) }
            guard state.fd >= 0 else { return BackendFailure(code: errno, "\(deviceID): cannot open \(node) for the triggers: \(String(cString: strerror(errno)))") }
            let entered = haptics_stop_guard_enter(state.guardSlot)
            defer { if entered == 0 { haptics_stop_guard_leave(state.guardSlot) } }
            guard entered == 0 else { return BackendFailure(code: ESHUTDOWN, "\(deviceID): the process is stopping") }
            let written = report.withUnsafeBytes { Glibc.write(state.fd, $0.baseAddress, $0.count) }
            guard written == report.count else {
                return BackendFailure(code: written < 0 ? errno : EIO, "\(deviceID): cannot write the trigger report to \(node): \(written < 0 ? String(cString: strerror(errno)) : "short write")")
            }
            state.triggers = blocks.after(state.triggers)
            return nil
        }
        state.withLock { state in
            guard !state.triggers.any, state.guardSlot >= 0 else { return }
            haptics_stop_guard_unregister(state.guardSlot)
            state.guardSlot = -1
        }
        if let failure { throw failure }
    }

    /// Registers the release report with the stop guard, once.
    private func registerRelease() throws(BackendFailure) {
        guard state.withLock({ $0.guardSlot }) < 0 else { return }
        let slot = haptics_stop_guard_begin(deviceID)
        guard slot >= 0 else { throw BackendFailure(code: -slot, "\(deviceID): cannot register the triggers' release with the stop guard: \(String(cString: strerror(-slot)))") }
        var result = releaseReport.withUnsafeBufferPointer { haptics_stop_guard_add_report(slot, node, $0.baseAddress!, $0.count) }
        if result == 0 { result = haptics_stop_guard_arm(slot, 0) }
        guard result == 0 else {
            haptics_stop_guard_unregister(slot)
            throw BackendFailure(code: -result, "\(deviceID): cannot register the triggers' release for \(node) with the stop guard: \(String(cString: strerror(-result)))")
        }
        state.withLock { $0.guardSlot = slot }
    }

    /// Restores rumble emulation if the coils had the pad, and closes the node.
    func close() {
        rumble()
        state.withLock { state in
            if state.fd >= 0 { Glibc.close(state.fd) }
            state.fd = -1
        }
    }

    private func send(_ report: [UInt8], coils: Bool) {
        let failure = state.withLock { state -> String? in
            // A pad that is gone (unplugged) has no mode to restore: nothing to say.
            let gone = { errno == ENODEV || errno == ENOENT }
            if state.fd < 0 {
                state.fd = Glibc.open(node, O_WRONLY | O_CLOEXEC)
                if state.fd < 0 { return state.warned || gone() ? nil : "cannot open \(node): \(String(cString: strerror(errno)))" }
            }
            let written = report.withUnsafeBytes { Glibc.write(state.fd, $0.baseAddress, $0.count) }
            guard written == report.count else {
                if written < 0, gone() { return nil }
                return state.warned ? nil : "cannot write to \(node): \(written < 0 ? String(cString: strerror(errno)) : "short write")"
            }
            state.coils = coils
            return nil
        }
        guard let failure else { return }
        state.withLock { $0.warned = true }
        services.log(
            HAPTICS_LOG_WARNING,
            "\(deviceID): \(failure); the pad's rumble emulation stays as it is, so after any rumble its coils stay silent. Give the user the pad's hidraw node (Hardware/udev/70-haptics-gamepads.rules)")
    }
}
