// haptics-bench: measurements that print tables. Build with `-c release`.
//
//   haptics-bench core        plugin discovery/load, trigger latency (idle vs prepared), onset error,
//                             AHAP parse throughput, idle engine CPU (this machine)
//   haptics-bench hid-race    trigger-to-uhid latency vs bare hid_write vs SDL2 (inside the VM rig)
//   haptics-bench evdev-race  trigger-to-EV_FF latency at a uinput pad vs a bare write vs SDL2 (inside the VM rig)
//   haptics-bench instructions  instructions per trigger, counted with callgrind (caller thread and all
//                             threads; Scripts/bench-instructions compares two builds side by side)
//   haptics-bench load-child  one plugin discovery and load, timed, for `core` to spawn
//   haptics-bench count-child one scenario under callgrind, for `instructions` to spawn
//   haptics-bench hapticsd    through the service on a private bus: call → frame beside in-process,
//                             a killed client's stop, 50 clients × 100 triggers/s
//   haptics-bench hold-pattern ADDRESS   a client looping a pattern until killed, for `hapticsd` to spawn
#if canImport(Glibc)
import Glibc
#endif

let arguments = Array(CommandLine.arguments.dropFirst())
do {
    switch arguments.first ?? "core" {
    case "core": try CoreBenchmarks.run(arguments: Array(arguments.dropFirst()))
    case "hid-race": try HIDRace.run(arguments: Array(arguments.dropFirst()))
    case "evdev-race": try EvdevRace.run(arguments: Array(arguments.dropFirst()))
    case "instructions": try InstructionCounts.run(arguments: Array(arguments.dropFirst()))
    case "load-child": try CoreBenchmarks.loadChild()
    case "count-child": try InstructionCounts.child(arguments: Array(arguments.dropFirst()))
    case "hapticsd": try DaemonBenchmarks.run(arguments: Array(arguments.dropFirst()))
    case "hold-pattern": try DaemonBenchmarks.holdPattern(address: arguments.dropFirst().first ?? "")
    default:
        print("usage: haptics-bench [core | instructions | hid-race | evdev-race | hapticsd] [--quick]")
        exit(64)
    }
} catch {
    print("haptics-bench: \(error)")
    exit(1)
}
