// haptics-bench: measurements that print tables. Build with `-c release`.
import ArgumentParser

/// The benchmark executable: one subcommand per table (`core` when none is named), and the hidden
/// children the tables spawn.
@main
struct HapticsBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "haptics-bench", abstract: "swift-haptics' measurements, each printing a table (build with -c release).",
        subcommands: [Core.self, Instructions.self, HIDRaceCommand.self, EvdevRaceCommand.self, ALSARaceCommand.self, Hapticsd.self, Waveform.self, Audio.self, Live.self, LoadChild.self, CountChild.self, HoldPattern.self],
        defaultSubcommand: Core.self)

    /// `--quick`: fewer samples, for a look rather than a figure.
    struct Quick: ParsableArguments {
        @Flag(help: "Fewer samples: a quick look, not figures to quote.") var quick = false
    }

    struct Core: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Plugin discovery and load, trigger latency (idle vs prepared), onset error, AHAP parse throughput, idle engine CPU, on this machine.")
        @OptionGroup var options: Quick
        func run() throws { try CoreBenchmarks.run(quick: options.quick) }
    }

    struct Instructions: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Instructions per trigger, counted with callgrind (caller thread and all threads); Scripts/bench-instructions compares two builds side by side.")
        @OptionGroup var options: InstructionCounts.Options
        func run() throws { try InstructionCounts.run(options) }
    }

    struct HIDRaceCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "hid-race", abstract: "Trigger-to-uhid latency beside a bare hid_write and SDL2 (inside the VM rig: Scripts/bench-hid).")
        @OptionGroup var options: HIDRace.Options
        func run() throws { try HIDRace.run(options) }
    }

    struct EvdevRaceCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "evdev-race", abstract: "Trigger-to-EV_FF latency at a uinput pad beside a bare write and SDL2 (inside the VM rig: Scripts/bench-evdev).")
        @OptionGroup var options: EvdevRace.Options
        func run() throws { try EvdevRace.run(options) }
    }

    struct ALSARaceCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "alsa-race",
            abstract: "Trigger-to-first-sample latency on snd-aloop beside a bare snd_pcm_writei, and a stream's underruns with a CPU busy (inside the VM rig: Scripts/bench-alsa).")
        @OptionGroup var options: ALSARace.Options
        func run() throws { try ALSARace.run(options) }
    }

    struct Hapticsd: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Through the service on a private bus: call → frame beside in-process, a killed client's stop, 50 clients × 100 triggers/s.")
        @OptionGroup var options: Quick
        func run() throws { try DaemonBenchmarks.run(quick: options.quick) }
    }

    struct Waveform: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The sample path: render cost per block beside a bare sine loop, and one playing stream's CPU through alsa-lib's null PCM.")
        @OptionGroup var options: Quick
        func run() throws { try WaveformBenchmarks.run(quick: options.quick) }
    }

    struct Audio: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Audio to haptics: conversion speed beside decoding alone (× real time), and peak memory against the file's length.")
        @OptionGroup var options: Quick
        func run() throws { try AudioBenchmarks.run(quick: options.quick) }
    }

    struct Live: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Live audio to haptics: latency from audio in to drive out through the alsa plugin's capture and the engine, on the null device and the recording LRA, at three capture periods.")
        @OptionGroup var options: Quick
        func run() throws { try LiveBenchmarks.run(quick: options.quick) }
    }

    struct LoadChild: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "load-child", abstract: "One plugin discovery and load, timed, for `core` to spawn.", shouldDisplay: false)
        func run() throws { try CoreBenchmarks.loadChild() }
    }

    struct CountChild: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "count-child", abstract: "One scenario under callgrind, for `instructions` to spawn.", shouldDisplay: false)
        @Argument var scenario: InstructionCounts.Scenario
        @Argument var mode: InstructionCounts.Mode
        @Argument var iterations: Int
        @Argument var settle: Double
        @Argument var pluginDirectory: String
        func run() throws {
            try InstructionCounts.child(scenario: scenario, mode: mode, iterations: iterations, settle: settle, pluginDirectory: pluginDirectory)
        }
    }

    struct HoldPattern: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "hold-pattern", abstract: "A client looping a pattern until killed, for `hapticsd` to spawn.", shouldDisplay: false)
        @Argument(help: "The private bus's address.") var address: String
        func run() throws { try DaemonBenchmarks.holdPattern(address: address) }
    }
}
