import FuzzSupport
import Haptics

#if canImport(Glibc)
import Glibc
#endif

/// Keeps the developer's own settings file out of `HapticPolicy.load()`.
private let isolated: Bool = {
    setenv("XDG_CONFIG_HOME", "/nonexistent/swift-haptics-fuzz", 1)
    setenv("HOME", "/nonexistent/swift-haptics-fuzz", 1)
    return true
}()

/// The policy file and environment: any bytes give a policy or a `PolicyError`; the input's
/// first line, as `HAPTICS_INTENSITY_SCALE` and `HAPTICS_DISABLE`, gives a policy or an error too.
/// An accepted policy has its scale in 0…1 and finite intervals ≥ 0, and drives the feedback
/// generators of a real engine (manual clock) through its overuse guard.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPolicy(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    precondition(isolated)
    let bytes = input(data, size)
    var policies: [HapticPolicy] = []
    do {
        policies.append(try HapticPolicy.parse(bytes, path: "policy.json"))
    } catch {
        require(!error.description.isEmpty, "an error without a message")
    }
    let line = String(decoding: bytes.prefix { $0 != 0x0A && $0 != 0 }, as: UTF8.self)
    setenv("HAPTICS_INTENSITY_SCALE", line, 1)
    setenv("HAPTICS_DISABLE", line, 1)
    do {
        policies.append(try HapticPolicy.load())
    } catch {
        require(!error.description.isEmpty, "an error without a message")
    }
    for policy in policies {
        require(policy.intensityScale.isFinite && (0...1).contains(policy.intensityScale), "scale \(policy.intensityScale)")
        for (kind, interval) in policy.minimumIntervals {
            require(interval.isFinite && interval >= 0, "\(kind) interval \(interval)")
        }
        do {
            let rig = try FuzzEngine(policy: policy)
            let impact = ImpactFeedbackGenerator(style: .rigid, engine: rig.engine)
            let selection = SelectionFeedbackGenerator(engine: rig.engine)
            impact.prepare()
            for step in 0..<4 {
                impact.impactOccurred(intensity: 0.8)
                selection.selectionChanged()
                rig.clock.advance(bySeconds: 0.004 * Double(step + 1))
            }
            rig.finish(after: 0.5)
        } catch {
            require(false, "no engine: \(error)")
        }
    }
    return 0
}
