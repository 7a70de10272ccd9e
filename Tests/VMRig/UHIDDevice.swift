import CVMRig
import Foundation
import Glibc
import Synchronization

/// The bus a virtual HID device claims to sit on (`BUS_*` in `linux/input.h`).
public enum UHIDBus: UInt16, Sendable {
    /// BUS_USB. hidapi reports `HID_API_BUS_USB`.
    case usb = 0x03
    /// BUS_BLUETOOTH. hidapi reports `HID_API_BUS_BLUETOOTH`.
    case bluetooth = 0x05
    /// BUS_VIRTUAL.
    case virtual = 0x06
    /// BUS_I2C.
    case i2c = 0x18
}

/// `enum uhid_report_type`.
public enum UHIDReportType: UInt8, Sendable {
    /// UHID_FEATURE_REPORT
    case feature = 0
    /// UHID_OUTPUT_REPORT
    case output = 1
    /// UHID_INPUT_REPORT
    case input = 2
}

/// One UHID_OUTPUT event: a report the host side (a driver, hidraw, hidapi) sent to the device.
public struct UHIDOutputReport: Sendable, Equatable {
    /// The report as sent, report id first when the device numbers its reports.
    public var data: [UInt8]
    /// `rtype` of the event: ``UHIDReportType/output`` for `hid_write` and driver output reports.
    public var reportType: UHIDReportType
    /// CLOCK_MONOTONIC in nanoseconds, taken right after the event was read from /dev/uhid.
    public var timestamp: UInt64
    /// The first byte (the report id for numbered reports).
    public var reportID: UInt8? { data.first }
}

/// One UHID_GET_REPORT or UHID_SET_REPORT request and how the device answered it.
public struct UHIDReportRequest: Sendable, Equatable {
    /// GET_REPORT or SET_REPORT.
    public enum Kind: Sendable { case getReport, setReport }
    /// GET_REPORT or SET_REPORT.
    public var kind: Kind
    /// The report number asked for.
    public var reportNumber: UInt8
    /// Usually ``UHIDReportType/feature``.
    public var reportType: UHIDReportType
    /// GET_REPORT: the bytes answered; SET_REPORT: the bytes the host sent.
    public var data: [UInt8]
    /// The errno answered (0: success).
    public var error: UInt16
    /// CLOCK_MONOTONIC in nanoseconds when the request was read.
    public var timestamp: UInt64
}

/// A virtual HID device made through `/dev/uhid` (UHID_CREATE2), for tests inside the VM rig.
///
/// A reader thread collects every UHID_OUTPUT event with a timestamp and answers **every**
/// UHID_GET_REPORT (from ``featureReports``, else zeros of the size the descriptor declares,
/// else EIO) and UHID_SET_REPORT (error 0), so that kernel drivers probing the device never
/// wait for an answer. An optional output responder can answer output reports with input
/// reports (used for the Switch Pro handshake, see ``VirtualController``).
///
/// ``destroy()`` (UHID_DESTROY) is how a test unplugs the device; it also stops the reader and
/// closes `/dev/uhid`. `deinit` does the same if the test did not.
///
/// ```swift
/// try VMRig.loadKernelModule("uhid")
/// let pad = try UHIDDevice(controller: .dualSenseUSB)
/// let node = try pad.hidrawPath()          // "/dev/hidraw0"
/// // … hid_write(…) …
/// let reports = try pad.waitForOutputReports(count: 1) { $0.reportID == 0x02 }  // or `await pad.awaitOutputReports(…)`
/// try pad.destroy()
/// ```
public final class UHIDDevice: Sendable {
    /// Answers an output report with zero or more input reports (sent with UHID_INPUT2).
    public typealias OutputResponder = @Sendable (UHIDOutputReport) -> [[UInt8]]

    /// The device name (`HID_NAME`).
    public let name: String
    /// The unique `phys` string this device was created with (`HID_PHYS`); used to find it in sysfs.
    public let phys: String
    /// The `uniq` string (`HID_UNIQ`, hidapi's serial number); drivers may replace it.
    public let uniq: String
    /// The bus the device claims.
    public let bus: UHIDBus
    /// Vendor id.
    public let vendorID: UInt32
    /// Product id.
    public let productID: UInt32
    /// The report descriptor the device was created with.
    public let descriptor: HIDReportDescriptor

    private let core: Core

    /// Creates the device (UHID_CREATE2) and starts its reader thread.
    ///
    /// - Parameters:
    ///   - descriptor: the report descriptor.
    ///   - name: the device name (`HID_NAME`, hidapi's product string).
    ///   - bus: the bus the device claims.
    ///   - vendorID: vendor id.
    ///   - productID: product id.
    ///   - version: device version (`bcdDevice`; hidapi's release number).
    ///   - country: HID country code.
    ///   - uniq: the `uniq` string (a MAC address for Bluetooth devices; hidapi's serial).
    ///   - featureReports: GET_REPORT answers: report id → full report (report id first).
    ///   - outputResponder: answers output reports with input reports, on the reader thread.
    /// - Throws: ``RigError`` if `/dev/uhid` cannot be opened (load `uhid` first) or written.
    public init(
        descriptor: HIDReportDescriptor, name: String, bus: UHIDBus, vendorID: UInt32, productID: UInt32,
        version: UInt32 = 0x0100, country: UInt32 = 0, uniq: String = "",
        featureReports: [UInt8: [UInt8]] = [:], outputResponder: OutputResponder? = nil
    ) throws {
        guard descriptor.bytes.count <= cvmrig_uhid_descriptor_max else {
            throw RigError.invalidArgument("report descriptor of \(descriptor.bytes.count) bytes (max \(cvmrig_uhid_descriptor_max))")
        }
        self.name = name
        self.phys = VMRig.uniqueName("vmrig-uhid")
        self.uniq = uniq
        self.bus = bus
        self.vendorID = vendorID
        self.productID = productID
        self.descriptor = descriptor

        let fd = open("/dev/uhid", O_RDWR | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else {
            let error = RigError.errno("open", "/dev/uhid")
            if !VMRig.isInsideVM { throw RigError.notInsideVM(what: "UHIDDevice") }
            throw error
        }
        let wake = cvmrig_eventfd()
        guard wake >= 0 else {
            close(fd)
            throw RigError.system(operation: "eventfd", path: "(uhid reader wake-up)", errno: -wake)
        }
        let core = Core(
            fd: fd, wakeFD: wake, descriptor: descriptor, featureReports: featureReports,
            responder: outputResponder)
        self.core = core
        let status = descriptor.bytes.withUnsafeBufferPointer { rd in
            cvmrig_uhid_create2(
                fd, name, phys, uniq, rd.baseAddress, rd.count, bus.rawValue, vendorID, productID, version, country)
        }
        guard status == 0 else {
            core.closeDescriptors()
            throw RigError.system(operation: "write UHID_CREATE2 to", path: "/dev/uhid", errno: -status)
        }
        core.startReader(name: "uhid-\(phys)")
    }

    deinit {
        try? destroy()
    }

    // MARK: Observing

    /// Every output report received so far, oldest first.
    public var outputReports: [UHIDOutputReport] { core.state.withLock { $0.outputs } }

    /// Every GET_REPORT / SET_REPORT request so far and its answer, oldest first.
    public var reportRequests: [UHIDReportRequest] { core.state.withLock { $0.requests } }

    /// Whether a driver started the device (UHID_START seen, not yet UHID_STOP).
    public var isStarted: Bool { core.state.withLock { $0.started } }

    /// Whether the device is open (UHID_OPEN seen, not yet UHID_CLOSE): a driver or hidraw reader uses it.
    public var isOpen: Bool { core.state.withLock { $0.opened } }

    /// How many times the device went from closed to open (UHID_OPEN events): the kernel sends one
    /// when its first user (a hidraw reader, an input handler, a driver) opens it.
    public var openCount: Int { core.state.withLock { $0.openCount } }

    /// Forgets the output reports received so far (e.g. a driver's own reports at bind time).
    public func clearOutputReports() {
        core.state.withLock { $0.outputs.removeAll() }
    }

    /// Replaces (or adds) the GET_REPORT answer for report `id`.
    public func setFeatureReport(_ id: UInt8, _ data: [UInt8]) {
        core.state.withLock { $0.featureReports[id] = data }
    }

    /// Waits until at least `count` output reports satisfying `matching` have arrived (counting
    /// those already received) and returns all of them, oldest first.
    ///
    /// Blocks the calling thread (polling every few milliseconds).
    /// - Throws: ``RigError/timeout(what:seconds:)`` with what did arrive.
    @discardableResult
    public func waitForOutputReports(
        count: Int, timeout: Duration = .seconds(10),
        matching: (UHIDOutputReport) -> Bool = { _ in true }
    ) throws -> [UHIDOutputReport] {
        do {
            return try SysFS.wait(for: "", timeout: timeout) { () -> [UHIDOutputReport]? in
                let found = outputReports.filter(matching)
                return found.count >= count ? found : nil
            }
        } catch RigError.timeout {
            let got = outputReports
            let seen = got.prefix(8).map { "\($0.data.count) bytes id 0x\(String($0.reportID ?? 0, radix: 16))" }
            throw RigError.timeout(
                what: "\(count) matching output report(s) on \(name); \(got.count) report(s) arrived: \(seen)",
                seconds: timeout.seconds)
        }
    }

    /// Async form of ``waitForOutputReports(count:timeout:matching:)`` that sleeps instead of blocking.
    @discardableResult
    public func awaitOutputReports(
        count: Int, timeout: Duration = .seconds(10),
        matching: @Sendable (UHIDOutputReport) -> Bool = { _ in true }
    ) async throws -> [UHIDOutputReport] {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while true {
            let found = outputReports.filter(matching)
            if found.count >= count { return found }
            if ContinuousClock.now >= deadline {
                throw RigError.timeout(
                    what: "\(count) matching output report(s) on \(name); \(outputReports.count) report(s) arrived",
                    seconds: timeout.seconds)
            }
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    // MARK: Acting

    /// Sends input report `data` (UHID_INPUT2), report id first when the device numbers its reports.
    public func sendInputReport(_ data: [UInt8]) throws {
        try core.sendInput(data)
    }

    /// Unplugs the device: UHID_DESTROY, then stops the reader thread and closes `/dev/uhid`.
    /// Idempotent. While a driver is still probing, the kernel finishes (or times out) the
    /// probe first, so this can take a few seconds for a driver that waits for answers.
    public func destroy() throws {
        try core.destroy()
    }

    // MARK: Finding the device in sysfs

    /// The device's sysfs directory, `/sys/bus/hid/devices/BBBB:VVVV:PPPP.NNNN`, found by its
    /// unique ``phys``; `nil` until the kernel has added it.
    public var sysfsPath: String? {
        guard let names = try? SysFS.list("/sys/bus/hid/devices") else { return nil }
        for entry in names {
            let dir = "/sys/bus/hid/devices/" + entry
            guard let uevent = try? SysFS.read(dir + "/uevent") else { continue }
            if uevent.split(separator: "\n").contains(Substring("HID_PHYS=" + phys)) { return dir }
        }
        return nil
    }

    /// The name of the driver bound to the device (`hid-generic`, `playstation`, `sony`,
    /// `nintendo`, …) or `nil` while none is.
    public var driverName: String? {
        guard let dir = sysfsPath, let link = try? SysFS.readLink(dir + "/driver") else { return nil }
        return link.split(separator: "/").last.map(String.init)
    }

    /// Waits until a driver has finished binding the device and returns its name.
    public func waitForDriver(timeout: Duration = .seconds(20)) throws -> String {
        try SysFS.wait(for: "a driver to bind \(name) (\(phys))", timeout: timeout) { driverName }
    }

    /// Waits for the device's hidraw node and returns its path, e.g. `/dev/hidraw0`.
    ///
    /// The node appears once a driver has started the device with hidraw (hid-generic, or a
    /// special driver whose probe got the answers it needed).
    public func hidrawPath(timeout: Duration = .seconds(20)) throws -> String {
        try SysFS.wait(for: "the hidraw node of \(name) (\(phys))", timeout: timeout) { () -> String? in
            guard let dir = sysfsPath, let nodes = try? SysFS.list(dir + "/hidraw"),
                let node = nodes.first(where: { $0.hasPrefix("hidraw") })
            else { return nil }
            let path = "/dev/" + node
            return SysFS.exists(path) ? path : nil
        }
    }

    /// Scans `/sys/class/hidraw/*/device/uevent` for devices with `HID_ID` vendor/product (and
    /// optionally `HID_NAME`) and returns their `/dev/hidrawN` paths.
    public static func hidrawNodes(vendorID: UInt32, productID: UInt32, name: String? = nil) -> [String] {
        guard let nodes = try? SysFS.list("/sys/class/hidraw") else { return [] }
        let idSuffix = String(format: ":%08X:%08X", vendorID, productID)
        return nodes.filter { node in
            guard let uevent = try? SysFS.read("/sys/class/hidraw/\(node)/device/uevent") else { return false }
            let lines = uevent.split(separator: "\n")
            guard lines.contains(where: { $0.hasPrefix("HID_ID=") && $0.uppercased().hasSuffix(idSuffix) }) else {
                return false
            }
            return name.map { lines.contains(Substring("HID_NAME=" + $0)) } ?? true
        }.map { "/dev/" + $0 }
    }

    // MARK: The reader

    struct State: Sendable {
        var outputs: [UHIDOutputReport] = []
        var requests: [UHIDReportRequest] = []
        var featureReports: [UInt8: [UInt8]]
        var started = false
        var opened = false
        var openCount = 0
        var destroyed = false
        var readerRunning = false
        var closed = false
        var readerError: String?
    }

    /// Owns the two file descriptors; shared by the device object and its reader thread.
    final class Core: Sendable {
        let fd: Int32
        let wakeFD: Int32
        let descriptor: HIDReportDescriptor
        let responder: OutputResponder?
        let state: Mutex<State>

        init(fd: Int32, wakeFD: Int32, descriptor: HIDReportDescriptor, featureReports: [UInt8: [UInt8]],
             responder: OutputResponder?) {
            self.fd = fd
            self.wakeFD = wakeFD
            self.descriptor = descriptor
            self.responder = responder
            self.state = Mutex(State(featureReports: featureReports))
        }

        /// Closes both descriptors, exactly once.
        func closeDescriptors() {
            let first = state.withLock { s -> Bool in
                defer { s.closed = true }
                return !s.closed
            }
            if first {
                close(fd)
                close(wakeFD)
            }
        }

        func startReader(name: String) {
            state.withLock { $0.readerRunning = true }
            let thread = Thread { [self] in
                // Real-time (the guest runs as root): an output report's timestamp is taken when the
                // kernel hands it over, not when the scheduler next gets to this thread, so a test can
                // measure a backend's cadence with it. Above the backends' writers (21).
                var parameter = sched_param()
                parameter.sched_priority = 30
                _ = pthread_setschedparam(pthread_self(), SCHED_FIFO, &parameter)
                readLoop()
                state.withLock { $0.readerRunning = false }
            }
            thread.name = name
            thread.start()
        }

        func sendInput(_ data: [UInt8]) throws {
            let status = data.withUnsafeBufferPointer { cvmrig_uhid_input2(fd, $0.baseAddress, $0.count) }
            guard status == 0 else {
                throw RigError.system(operation: "write UHID_INPUT2 to", path: "/dev/uhid", errno: -status)
            }
        }

        func destroy() throws {
            // Nothing to do if already destroyed, or if the descriptors were closed by a failed init
            // (deinit still runs then; the fd number may belong to someone else by now).
            let already = state.withLock { s -> Bool in
                defer { s.destroyed = true }
                return s.destroyed || s.closed
            }
            if already { return }
            let status = cvmrig_uhid_destroy(fd)
            // Stop the reader: wake it through the eventfd and wait for it to leave its loop.
            _ = cvmrig_eventfd_signal(wakeFD)
            let clock = ContinuousClock()
            let deadline = clock.now.advanced(by: .seconds(30))
            while state.withLock({ $0.readerRunning }) && clock.now < deadline { usleep(500) }
            if state.withLock({ $0.readerRunning }) {
                // Never close a descriptor a thread may still use; leak it instead (not expected).
                throw RigError.timeout(what: "the uhid reader thread to stop", seconds: 30)
            }
            closeDescriptors()
            if status != 0 {
                throw RigError.system(operation: "write UHID_DESTROY to", path: "/dev/uhid", errno: -status)
            }
        }

        private func readLoop() {
            var event = cvmrig_uhid_event()
            var buffer = [UInt8](repeating: 0, count: cvmrig_uhid_data_max)
            while true {
                let ready = cvmrig_wait_readable(fd, wakeFD, -1)
                if ready == 2 { return }
                if ready < 0 {
                    state.withLock { $0.readerError = "poll /dev/uhid: errno \(-ready)" }
                    return
                }
                if ready == 0 { continue }
                // Drain everything pending.
                while true {
                    let status = buffer.withUnsafeMutableBufferPointer {
                        cvmrig_uhid_read(fd, &event, $0.baseAddress, $0.count)
                    }
                    if status == -EAGAIN { break }
                    if status < 0 {
                        state.withLock { $0.readerError = "read /dev/uhid: errno \(-status)" }
                        return
                    }
                    handle(event, Array(buffer[0..<Int(event.size)]), at: cvmrig_monotonic_ns())
                }
            }
        }

        private func handle(_ event: cvmrig_uhid_event, _ data: [UInt8], at time: UInt64) {
            switch event.type {
            case UInt32(UHID_START.rawValue):
                state.withLock { $0.started = true }
            case UInt32(UHID_STOP.rawValue):
                state.withLock { $0.started = false }
            case UInt32(UHID_OPEN.rawValue):
                state.withLock {
                    $0.opened = true
                    $0.openCount += 1
                }
            case UInt32(UHID_CLOSE.rawValue):
                state.withLock { $0.opened = false }
            case UInt32(UHID_OUTPUT.rawValue):
                let report = UHIDOutputReport(
                    data: data, reportType: UHIDReportType(rawValue: event.rtype) ?? .output, timestamp: time)
                state.withLock { $0.outputs.append(report) }
                if let responder {
                    for input in responder(report) { try? sendInput(input) }
                }
            case UInt32(UHID_GET_REPORT.rawValue):
                let type = UHIDReportType(rawValue: event.rtype) ?? .feature
                let answer = state.withLock { $0.featureReports[event.rnum] } ?? defaultAnswer(event.rnum, type)
                let error: UInt16 = answer == nil ? UInt16(EIO) : 0
                let bytes = answer ?? []
                _ = bytes.withUnsafeBufferPointer {
                    cvmrig_uhid_get_report_reply(fd, event.id, error, $0.baseAddress, $0.count)
                }
                state.withLock {
                    $0.requests.append(
                        UHIDReportRequest(
                            kind: .getReport, reportNumber: event.rnum, reportType: type, data: bytes, error: error,
                            timestamp: time))
                }
            case UInt32(UHID_SET_REPORT.rawValue):
                _ = cvmrig_uhid_set_report_reply(fd, event.id, 0)
                state.withLock {
                    $0.requests.append(
                        UHIDReportRequest(
                            kind: .setReport, reportNumber: event.rnum,
                            reportType: UHIDReportType(rawValue: event.rtype) ?? .feature, data: data, error: 0,
                            timestamp: time))
                }
            default:
                break
            }
        }

        /// Zeros of the size the descriptor declares for the report (report id first), or nil.
        private func defaultAnswer(_ id: UInt8, _ type: UHIDReportType) -> [UInt8]? {
            let kind: HIDReportKind = type == .feature ? .feature : type == .input ? .input : .output
            guard let length = descriptor.reportLength(kind, id: id), length > 0 else { return nil }
            var bytes = [UInt8](repeating: 0, count: length)
            if !descriptor.reportIDs(kind).contains(0) { bytes[0] = id }
            return bytes
        }
    }
}
