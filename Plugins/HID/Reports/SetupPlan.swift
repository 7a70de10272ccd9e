/// One step of what a controller needs between opening its node and its first rumble report, as
/// plain data: the family says what to do, the backend does it on the device it owns (in order, on
/// the first wake of an open device). Like a family's set-up in SDL's HIDAPI drivers, it lives in
/// the family's own file; unlike there, it is pure, so it is tested without a device.
public enum SetupStep: Sendable, Equatable {
    /// Write `report` (report id first).
    ///
    /// - `paced`: the report reaches the controller and keeps the family's minimum write interval
    ///   from the write before it (a command to a USB bridge chip does not).
    /// - `answer`: the input report that acknowledges it, or `nil` when none does. The backend reads
    ///   input reports until it sees the answer or a timeout passes, then carries on either way (a
    ///   clone may not answer).
    case write(_ report: [UInt8], paced: Bool, answer: InputMatch?)

    /// Read feature report `id` (`length` bytes, the id included). What was read, or `nil` if the
    /// read failed, goes to ``ControllerFamily/encoder(transport:productID:features:)``.
    case readFeature(id: UInt8, length: Int)

    /// The report a ``write(_:paced:answer:)`` step writes, `nil` for a read.
    public var written: [UInt8]? {
        if case .write(let report, _, _) = self { return report }
        return nil
    }
}

/// An input report told by its id and one byte: the answer a set-up write waits for.
public struct InputMatch: Sendable, Equatable {
    /// The input report's id (its first byte).
    public var reportID: UInt8
    /// Where the telling byte is, counted from the report id at 0.
    public var offset: Int
    /// The value it must have there.
    public var value: UInt8

    /// An answer with `reportID` and `value` at `offset`.
    ///
    /// - Parameters:
    ///   - reportID: The input report's id.
    ///   - offset: The telling byte's index (the id is byte 0); at least 1.
    ///   - value: The value it must have.
    public init(reportID: UInt8, offset: Int, value: UInt8) {
        self.reportID = reportID
        self.offset = offset
        self.value = value
    }

    /// Whether `report` (id first) is this answer.
    public func matches(_ report: [UInt8]) -> Bool {
        report.count > offset && report.first == reportID && report[offset] == value
    }
}

/// What turns a rumble state into one controller's report bytes, with the choices its set-up made
/// (a DualSense's vibration mode, read from its firmware). Made once per open device by
/// ``ControllerFamily/encoder(transport:productID:features:)``.
public struct RumbleEncoder: Sendable {
    /// Whether the counter goes into the report (see ``ControllerFamily/reportCarriesSequence(on:)``).
    public let carriesSequence: Bool
    /// What the set-up chose and why, for the log, or `nil` when there was no choice to make:
    /// `feature report 0x20 is malformed (…); using the compatible vibration mode`.
    public let note: String?
    private let encode: @Sendable (RumbleState, UInt8) -> [UInt8]

    /// An encoder.
    ///
    /// - Parameters:
    ///   - carriesSequence: Whether the reports carry the counter.
    ///   - note: What the set-up chose and why, or `nil`.
    ///   - encode: The report for a state and a counter.
    public init(carriesSequence: Bool, note: String? = nil, encode: @escaping @Sendable (RumbleState, UInt8) -> [UInt8]) {
        self.carriesSequence = carriesSequence
        self.note = note
        self.encode = encode
    }

    /// The rumble report for `state` with counter `sequence`.
    public func report(_ state: RumbleState, sequence: UInt8) -> [UInt8] { encode(state, sequence) }
}

extension ControllerFamily {
    /// The reports the set-up writes, in order (the ``setupPlan(for:sequence:)`` without its reads).
    ///
    /// - Parameters:
    ///   - transport: How the device is connected.
    ///   - sequence: The caller's counter for the first report.
    public static func setupReports(for transport: HIDTransport, sequence: UInt8) -> [[UInt8]] {
        setupPlan(for: transport, sequence: sequence).compactMap(\.written)
    }

    /// No set-up: the first rumble report is the first write.
    public static func setupPlan(for transport: HIDTransport, sequence: UInt8) -> [SetupStep] { [] }

    /// The family's ``rumbleReport(state:transport:sequence:)`` on `transport`: a family whose set-up
    /// chooses nothing needs no more.
    public static func encoder(transport: HIDTransport, productID: UInt16, features: [UInt8: [UInt8]]) -> RumbleEncoder {
        RumbleEncoder(carriesSequence: reportCarriesSequence(on: transport)) { state, sequence in
            rumbleReport(state: state, transport: transport, sequence: sequence)
        }
    }

    /// The one encoder: the set-up chooses nothing.
    public static func possibleEncoders(for transport: HIDTransport) -> [RumbleEncoder] {
        [encoder(transport: transport, productID: 0, features: [:])]
    }
}
