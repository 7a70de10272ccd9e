// A program written against swift-haptics' public API only, as an app would: it opens a device,
// makes an engine and an impact generator, prepares, and taps. Nothing in it knows about hapticsd:
// when the service runs, HapticSystem plays through it; when it does not, in this process.
//
//   swift run haptics-impact-example [DEVICE]      (default: the first device)
#if canImport(Glibc)
import Glibc
#endif
import Haptics

let system = HapticSystem()
print("mode: \(system.mode)")
let query = CommandLine.arguments.dropFirst().first
do {
    let device = try system.openDevice(query ?? system.devices().first?.id ?? "")
    let engine = try HapticEngine(devices: [device])
    let impact = ImpactFeedbackGenerator(style: .rigid, engine: engine)
    impact.prepare()
    impact.impactOccurred(intensity: 0.8)
    // Let the tap play out (a rigid impact lasts about 20 ms) before the process ends.
    usleep(100_000)
    print("played impact.rigid at 0.8 on \(device.description.id)")
} catch {
    print("error: \(error)")
    exit(1)
}
