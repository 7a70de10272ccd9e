import CHapticsABI
import HIDReports
import HapticsPluginKit
import HapticsSupport

#if canImport(Glibc)
import Glibc
#endif

/// What a controller needs between opening its node and its first rumble report, done on the first
/// wake of an open device, so the first trigger after it is a single write.
///
/// The family says what (``ControllerFamily/setupPlan(for:sequence:)``: the DualSense reads its
/// firmware info, the Switch Pro enables vibration after a USB bridge handshake); this carries the
/// steps out on the handle, in order: a paced write keeps the minimum interval from the write before
/// it, a write with an answer waits for that input report (250 ms at most, then carries on, as the
/// kernel does: a clone may not answer), and a feature report read goes to the family's
/// ``ControllerFamily/encoder(transport:productID:features:)``. Wake waits out the spacing after the
/// last paced write before it returns.
enum ControllerSetup {
    /// What the set-up leaves behind.
    struct Outcome: Sendable {
        /// The encoder for the rumble reports.
        var encoder: RumbleEncoder
        /// How many reports were written (the sequence counter advances by as many).
        var reportsWritten: Int
        /// When the last write that counts for spacing finished, in nanoseconds.
        var lastPacedWrite: UInt64?
    }

    /// How long to wait for the answer to one set-up report, in milliseconds.
    static let answerTimeoutMilliseconds: UInt64 = 250

    /// Runs the set-up of `gamepad` on `handle`, starting with counter `sequence`.
    ///
    /// - Parameters:
    ///   - previous: what an earlier wake of the same open device chose, or `nil` on the first wake.
    ///     The controller keeps its set-up while it stays connected (the kernel and SDL also send it
    ///     once), so a later wake only reopens the node and reuses the encoder.
    ///   - lastWrite: when the device's last write finished (nanoseconds), if any: the first paced
    ///     set-up report keeps the spacing from it too.
    /// - Throws: the failure of a write (the caller closes the handle).
    static func run(
        handle: HIDHandle, gamepad: DiscoveredGamepad, sequence: UInt8, previous: RumbleEncoder?, lastWrite: UInt64?,
        log: (haptics_log_level, String) -> Void
    ) throws(BackendFailure) -> Outcome {
        if let previous { return Outcome(encoder: previous, reportsWritten: 0, lastPacedWrite: nil) }
        let steps = gamepad.family.setupPlan(for: gamepad.transport, sequence: sequence)
        var features: [UInt8: [UInt8]] = [:]
        var written = 0
        var lastPaced = lastWrite
        for step in steps {
            switch step {
            case .write(let report, let paced, let answer):
                if paced, let lastPaced { Monotonic.sleep(until: lastPaced + gamepad.minimumInterval) }
                if case .failure(let error) = handle.write(report) {
                    throw BackendFailure(
                        code: error.errno == ENODEV ? ENODEV : EIO,
                        "\(gamepad.id): set-up report 0x\(hex2(report.first ?? 0)) to \(gamepad.path) failed: \(error.message)")
                }
                written += 1
                if paced { lastPaced = Monotonic.now() }
                if let answer, !awaitInput(handle: handle, matching: answer.matches) {
                    log(HAPTICS_LOG_WARNING, "\(gamepad.id): no answer to set-up report \(report.prefix(2).map(hex2).joined(separator: " ")) within \(answerTimeoutMilliseconds) ms on \(gamepad.path); continuing")
                }
            case .readFeature(let id, let length):
                switch handle.featureReport(id, length: length) {
                case .success(let report): features[id] = report
                case .failure(let error):
                    log(HAPTICS_LOG_WARNING, "\(gamepad.id): cannot read feature report 0x\(hex2(id)) from \(gamepad.path): \(error.message)")
                }
            }
        }
        if written > 0, let lastPaced { Monotonic.sleep(until: lastPaced + gamepad.minimumInterval) }
        let encoder = gamepad.family.encoder(transport: gamepad.transport, productID: gamepad.productID, features: features)
        if let note = encoder.note { log(HAPTICS_LOG_WARNING, "\(gamepad.id) on \(gamepad.path): \(note)") }
        return Outcome(encoder: encoder, reportsWritten: written, lastPacedWrite: lastPaced)
    }

    /// Reads input reports until one matches or ``answerTimeoutMilliseconds`` pass.
    static func awaitInput(handle: HIDHandle, matching: ([UInt8]) -> Bool) -> Bool {
        let deadline = Monotonic.now() + answerTimeoutMilliseconds * 1_000_000
        while true {
            let now = Monotonic.now()
            guard now < deadline else { return false }
            let remaining = Int32(max(1, (deadline - now) / 1_000_000))
            switch handle.read(milliseconds: remaining) {
            case .success(let report?) where matching(report): return true
            case .success: continue
            case .failure: return false
            }
        }
    }

    /// Two lower-case hex digits.
    static func hex2(_ byte: UInt8) -> String {
        byte < 16 ? "0" + String(byte, radix: 16) : String(byte, radix: 16)
    }
}
