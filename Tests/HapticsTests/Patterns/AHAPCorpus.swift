import Foundation
import Haptics

/// The AHAP corpus under `Tests/Fixtures/ahap`: `valid/` files parse (their models are asserted in
/// ``AHAPCorpusTests``), `invalid/` files fail (their errors are asserted in ``AHAPInvalidCorpusTests``).
enum AHAPCorpus {
    enum Kind: String, Sendable {
        case valid, invalid
    }

    /// The package root: four levels up from this file (`Tests/HapticsTests/Patterns/AHAPCorpus.swift`).
    static let packageRoot: URL = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<4 { url.deleteLastPathComponent() }
        return url
    }()

    /// The directory of this file: the test sources the coverage check reads.
    static let testSourceDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()

    /// `Tests/Fixtures/ahap/valid` or `…/invalid`.
    static func directory(_ kind: Kind) -> URL {
        packageRoot.appendingPathComponent("Tests/Fixtures/ahap/\(kind.rawValue)", isDirectory: true)
    }

    /// The `.ahap` files in `kind`'s directory, sorted.
    static func names(_ kind: Kind) -> [String] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: directory(kind).path)) ?? []
        return entries.filter { $0.hasSuffix(".ahap") }.sorted()
    }

    /// Every file in `kind`'s directory other than hidden ones (so a misnamed fixture is noticed too).
    static func allFiles(_ kind: Kind) -> [String] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: directory(kind).path)) ?? []
        return entries.filter { !$0.hasPrefix(".") }.sorted()
    }

    /// The path of a fixture.
    static func path(_ name: String, _ kind: Kind) -> String {
        directory(kind).appendingPathComponent(name).path
    }

    /// The bytes of a fixture.
    static func bytes(_ name: String, _ kind: Kind) throws -> [UInt8] {
        let path = path(name, kind)
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CorpusError(message: "fixture \(path) cannot be read")
        }
        return Array(data)
    }

    /// The text of a fixture.
    static func text(_ name: String, _ kind: Kind) throws -> String {
        String(decoding: try bytes(name, kind), as: UTF8.self)
    }

    /// A valid fixture, parsed. The coverage test finds the fixtures the suites name by the calls to this function.
    static func pattern(_ name: String) throws -> HapticPattern {
        try HapticPattern(ahapBytes: bytes(name, .valid))
    }

    struct CorpusError: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }
}

/// Shorthands for writing expected models, for the suites that adopt this protocol (kept off the
/// module's global namespace, which other suites share).
protocol AHAPModelBuilding {}

extension AHAPModelBuilding {
    /// An event parameter.
    func param(_ id: HapticEventParameter.ID, _ value: Double) -> HapticEventParameter {
        HapticEventParameter(parameterID: id, value: value)
    }

    /// A curve control point.
    func point(_ time: Double, _ value: Double) -> HapticParameterCurve.ControlPoint {
        HapticParameterCurve.ControlPoint(relativeTime: time, value: value)
    }

    /// A transient event.
    func transient(_ time: Double, _ parameters: [HapticEventParameter] = []) -> HapticEvent {
        HapticEvent(eventType: .hapticTransient, parameters: parameters, relativeTime: time)
    }

    /// A continuous event.
    func continuous(_ time: Double, duration: Double, _ parameters: [HapticEventParameter] = []) -> HapticEvent {
        HapticEvent(eventType: .hapticContinuous, parameters: parameters, relativeTime: time, duration: duration)
    }

    /// A dynamic parameter.
    func control(_ id: HapticDynamicParameter.ID, _ value: Double, at time: Double) -> HapticDynamicParameter {
        HapticDynamicParameter(parameterID: id, value: value, relativeTime: time)
    }

    /// A parameter curve.
    func curve(_ id: HapticDynamicParameter.ID, at time: Double, _ points: [HapticParameterCurve.ControlPoint]) -> HapticParameterCurve {
        HapticParameterCurve(parameterID: id, controlPoints: points, relativeTime: time)
    }
}
