import Haptics

#if canImport(Glibc)
import Glibc
#endif

/// The simulated physics of a device: defaults derived from its description, changed by a
/// `--model` setting such as `f0=175,q=12,deadzone=0.08,seed=1`.
///
/// Keys (a `CHANNEL.` prefix, e.g. `weak.tau=0.02`, sets one channel; without it the key applies to
/// every channel it makes sense for, and is an error if there is none):
/// - `f0` resonant frequency, Hz (LRA channels), 20…2000
/// - `q` quality factor (LRA channels), 1…100
/// - `deadzone` drive below which nothing moves, 0…0.6
/// - `exponent` drive-to-force curve exponent (LRA channels), 0.3…3
/// - `peak` acceleration at full drive (at resonance for an LRA), g, 0.05…20
/// - `tau` speed time constant (ERM channels), seconds, 0.002…0.5
/// - `nominal` vibration frequency at full speed (ERM channels), Hz, 10…1000
/// - `noise` sensor noise, g (whole device, no prefix), 0…0.5
/// - `seed` noise seed (whole device, no prefix), a whole number ≥ 0
///
/// Defaults: an LRA channel resonates at the channel's stated resonance (else the middle of its
/// range, else 175 Hz) with Q 6 (a start to 90 % in about 25 ms, the 15–30 ms typical of LRAs),
/// dead zone 0.08, linear, 2 g. A single ERM: 150 Hz (or its stated nominal frequency), dead zone
/// 0.12, τ 30 ms (a 70 ms start), 2 g. A gamepad's strong motor (the lower nominal frequency):
/// dead zone 0.12, τ 40 ms, 3 g; its weak motor: dead zone 0.10, τ 25 ms, 1.5 g; trigger motors:
/// dead zone 0.10, τ 20 ms, 0.8 g. Noise 0.01 g, seed 1.
public enum ModelParameters {
    /// The default model of `device` (see the type's documentation).
    public static func defaultModel(for device: DeviceDescription) -> DeviceModel {
        let drivable = device.channels.indices.filter { device.channels[$0].actuator != .trigger }
        let strongest = drivable.min { (device.channels[$0].nominalFrequency ?? Double($0)) < (device.channels[$1].nominalFrequency ?? Double($1)) }
        let models: [ChannelModel] = device.channels.enumerated().map { index, channel in
            if isResonant(channel) {
                let f0 = channel.resonantFrequency ?? channel.frequencyRange.map { ($0.lowerBound * $0.upperBound).squareRoot() } ?? 175
                return .lra(LRAModel(resonantFrequency: f0, qFactor: 6, deadZone: 0.08, responseExponent: 1, peakAcceleration: 2))
            }
            let nominal = channel.nominalFrequency ?? 150
            if channel.actuator == .trigger {
                return .erm(ERMModel(nominalFrequency: nominal, deadZone: 0.10, timeConstant: 0.020, peakAcceleration: 0.8))
            }
            if drivable.count >= 2 {
                return index == strongest
                    ? .erm(ERMModel(nominalFrequency: nominal, deadZone: 0.12, timeConstant: 0.030, peakAcceleration: 3))
                    : .erm(ERMModel(nominalFrequency: nominal, deadZone: 0.10, timeConstant: 0.030, peakAcceleration: 1.5))
            }
            return .erm(ERMModel(nominalFrequency: nominal, deadZone: 0.12, timeConstant: 0.030, peakAcceleration: 2))
        }
        return DeviceModel(channels: models, noise: 0.01, seed: 1)
    }

    /// Whether a channel is simulated as a resonator: it is an LRA or voice coil, or states a resonance.
    static func isResonant(_ channel: ChannelDescription) -> Bool {
        channel.actuator == .lra || channel.actuator == .voiceCoil || (channel.resonantFrequency != nil && channel.frequencyRange != nil)
    }

    /// One `key=value` of a `--model` setting, checked: the channel it names (if any), the key and
    /// its value (a seed is a whole number; everything else a number in the key's range).
    struct Setting {
        var pair: String
        var channel: String?
        var key: String
        var value: Double
        var seed: UInt64?
    }

    /// The range of each number key, and its unit.
    static let ranges: [String: (range: ClosedRange<Double>, unit: String)] = [
        "noise": (0...0.5, "g"), "f0": (20...2000, "Hz"), "q": (1...100, ""), "exponent": (0.3...3, ""),
        "tau": (0.002...0.5, "s"), "nominal": (10...1000, "Hz"), "deadzone": (0...0.6, ""), "peak": (0.05...20, "g"),
    ]

    /// Checks the syntax, keys and value ranges of `settings` without a device (what a command line
    /// can check before opening one).
    /// - Throws: ``CalibrationError/invalidModel(_:)`` naming the key, the value and the expected range.
    public static func check(settings: String) throws(CalibrationError) {
        _ = try parse(settings)
    }

    static func parse(_ settings: String) throws(CalibrationError) -> [Setting] {
        var result: [Setting] = []
        for pair in settings.split(separator: ",").map({ String($0).trimmed }) where !pair.isEmpty {
            guard let equals = pair.firstIndex(of: "="), equals != pair.startIndex else {
                throw .invalidModel("'\(pair)' is not KEY=VALUE; for example --model f0=175,q=12,deadzone=0.08,seed=1")
            }
            var key = String(pair[..<equals]).trimmed.lowercased()
            let text = String(pair[pair.index(after: equals)...]).trimmed
            var channel: String?
            if let dot = key.firstIndex(of: ".") {
                channel = String(key[..<dot])
                key = String(key[key.index(after: dot)...])
            }
            if key == "seed" {
                guard let seed = UInt64(text) else { throw .invalidModel("seed '\(text)' is not a whole number ≥ 0") }
                result.append(Setting(pair: pair, channel: channel, key: key, value: 0, seed: seed))
                continue
            }
            guard let (range, unit) = ranges[key] else {
                throw .invalidModel("unknown model key '\(key)'; keys: f0, q, deadzone, exponent, peak, tau, nominal, noise, seed")
            }
            result.append(Setting(pair: pair, channel: channel, key: key, value: try number(key, text, in: range, unit: unit)))
        }
        return result
    }

    /// The default model of `device` changed by `settings` (`key=value` pairs separated by commas).
    /// - Throws: ``CalibrationError/invalidModel(_:)`` naming the key, the value and the expected range.
    public static func model(for device: DeviceDescription, settings: String?) throws(CalibrationError) -> DeviceModel {
        var model = defaultModel(for: device)
        guard let settings, !settings.isEmpty else { return model }
        for setting in try parse(settings) {
            let key = setting.key, value = setting.value
            var targets = Array(device.channels.indices)
            if let name = setting.channel {
                guard let index = device.channels.firstIndex(where: { $0.name.lowercased() == name }) else {
                    throw .invalidModel("'\(setting.pair)': \(device.id) has no channel '\(name)'; channels: \(device.channels.map(\.name).joined(separator: ", "))")
                }
                targets = [index]
            }
            switch key {
            case "seed":
                model.seed = setting.seed ?? model.seed
            case "noise":
                model.noise = value
            case "f0", "q", "exponent":
                var applied = false
                for index in targets {
                    guard case .lra(var lra) = model.channels[index] else { continue }
                    switch key {
                    case "f0": lra.resonantFrequency = value
                    case "q": lra.qFactor = value
                    default: lra.responseExponent = value
                    }
                    model.channels[index] = .lra(lra)
                    applied = true
                }
                guard applied else { throw .invalidModel("\(key) applies to LRA channels; \(describe(targets, of: device)) has none") }
            case "tau", "nominal":
                var applied = false
                for index in targets {
                    guard case .erm(var erm) = model.channels[index] else { continue }
                    if key == "tau" { erm.timeConstant = value } else { erm.nominalFrequency = value }
                    model.channels[index] = .erm(erm)
                    applied = true
                }
                guard applied else { throw .invalidModel("\(key) applies to ERM channels; \(describe(targets, of: device)) has none") }
            default:  // "deadzone", "peak"
                for index in targets {
                    switch model.channels[index] {
                    case .lra(var lra):
                        if key == "deadzone" { lra.deadZone = value } else { lra.peakAcceleration = value }
                        model.channels[index] = .lra(lra)
                    case .erm(var erm):
                        if key == "deadzone" { erm.deadZone = value } else { erm.peakAcceleration = value }
                        model.channels[index] = .erm(erm)
                    }
                }
            }
        }
        return model
    }

    private static func number(_ key: String, _ text: String, in range: ClosedRange<Double>, unit: String) throws(CalibrationError) -> Double {
        guard let value = Double(text), value.isFinite, range.contains(value) else {
            let suffix = unit.isEmpty ? "" : " \(unit)"
            throw .invalidModel("\(key) '\(text)' is outside \(format(range.lowerBound))…\(format(range.upperBound))\(suffix)")
        }
        return value
    }

    private static func describe(_ targets: [Int], of device: DeviceDescription) -> String {
        targets.count == 1 ? "channel '\(device.channels[targets[0]].name)'" : device.id
    }

    /// A human description of a model, one line per channel.
    public static func summary(_ model: DeviceModel, device: DeviceDescription) -> [String] {
        var lines = model.channels.enumerated().map { index, channel -> String in
            let name = index < device.channels.count ? device.channels[index].name : "channel \(index)"
            switch channel {
            case .lra(let lra):
                return "\(name): LRA f0 \(format(lra.resonantFrequency)) Hz, Q \(format(lra.qFactor)), dead zone \(format(lra.deadZone)), "
                    + "exponent \(format(lra.responseExponent)), \(format(lra.peakAcceleration)) g at resonance"
            case .erm(let erm):
                return "\(name): ERM \(format(erm.nominalFrequency)) Hz, τ \(format(erm.timeConstant * 1000)) ms, dead zone \(format(erm.deadZone)), "
                    + "\(format(erm.peakAcceleration)) g at full speed"
            }
        }
        lines.append("noise \(format(model.noise)) g, seed \(model.seed)")
        return lines
    }
}

/// A number in its shortest form with at most four decimals.
func format(_ value: Double) -> String {
    let rounded = (value * 10000).rounded() / 10000
    return rounded == rounded.rounded() && abs(rounded) < 1e15 ? String(Int64(rounded)) : String(rounded)
}

/// A number with exactly `digits` decimals (no Foundation here).
func fixed(_ value: Double, _ digits: Int) -> String {
    guard value.isFinite else { return "\(value)" }
    let scale = pow(10, Double(digits))
    let scaled = Int64((abs(value) * scale).rounded())
    let whole = scaled / Int64(scale), fraction = scaled % Int64(scale)
    let sign = value < 0 && scaled != 0 ? "-" : ""
    guard digits > 0 else { return sign + String(whole) }
    let text = String(fraction)
    return sign + String(whole) + "." + String(repeating: "0", count: digits - text.count) + text
}

extension String {
    var trimmed: String {
        var slice = Substring(self)
        while slice.first?.isWhitespace == true { slice.removeFirst() }
        while slice.last?.isWhitespace == true { slice.removeLast() }
        return String(slice)
    }
}
