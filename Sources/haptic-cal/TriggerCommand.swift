import ArgumentParser
import Foundation
import Haptics

#if canImport(Glibc)
import Glibc
#endif

/// `haptic-cal trigger DEVICE [--right EFFECT] [--left EFFECT] [--hold SECONDS]`: sets a
/// DualSense's adaptive-trigger effects, holds them while the user tries them, and sets the
/// triggers free at the end (Ctrl-C, or any other end of the process, sets them free too).
struct Trigger: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Set a DualSense's adaptive-trigger effects for a while.",
        discussion: """
            EFFECT is `off`, or a name, a colon and key=value parameters separated by commas (a per-zone list's ten values by slashes). \
            Positions along the travel, strengths and amplitudes are 0…1, frequencies in Hz (1…255):
            feedback:position=P,strength=S
            multiple-position-feedback:strengths=S0/S1/…/S9
            slope-feedback:start-position=P,end-position=P,start-strength=S,end-strength=S
            weapon:start-position=P,end-position=P,strength=S (start 0.17…0.83, end after it, below 0.95)
            vibration:position=P,amplitude=A,frequency=HZ
            multiple-position-vibration:amplitudes=A0/A1/…/A9,frequency=HZ
            Example: haptic-cal trigger dualsense --right weapon:start-position=0.3,end-position=0.6,strength=1 --hold 10
            """)

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The device: an id (see `haptic-cal list`), a unique id prefix, or part of its name.")
    var device: String

    @Option(help: ArgumentHelp("R2's effect (left as it is when not given).", valueName: "effect"), transform: Self.effect)
    var right: AdaptiveTriggerEffect?

    @Option(help: ArgumentHelp("L2's effect (left as it is when not given).", valueName: "effect"), transform: Self.effect)
    var left: AdaptiveTriggerEffect?

    @Option(help: "How long to hold the effects before setting the triggers free, in seconds (0…3600).")
    var hold: Double = 5

    static func effect(_ text: String) throws -> AdaptiveTriggerEffect {
        do throws(AdaptiveTriggerError) {
            let effect = try AdaptiveTriggerEffect(text: text)
            _ = try effect.plan()
            return effect
        } catch {
            throw ValidationError("\(error.inKeyedForm)")
        }
    }

    func validate() throws {
        guard right != nil || left != nil else { throw ValidationError("give --right, --left or both (`haptic-cal trigger --help` lists the effects)") }
        guard hold.isFinite, (0...3600).contains(hold) else { throw ValidationError("--hold \(hold) is outside 0…3600 seconds") }
    }

    func run() throws {
        let system = global.makeSystem()
        if case .daemon(let info) = system.mode {
            FileHandle.standardError.write(Data("setting the triggers through hapticsd (pid \(info.processID)), which owns the device\n".utf8))
        }
        let description = try system.resolve(device)
        guard description.hasAdaptiveTriggers else { throw DeviceError.noAdaptiveTriggers(deviceID: description.id) }
        let device = try system.openDevice(description.id)
        defer { device.close() }
        let triggers = try AdaptiveTriggers(device: device)
        defer { triggers.release() }
        try triggers.set(right: right, left: left)
        let sides = [right.map { "R2 \($0.text)" }, left.map { "L2 \($0.text)" }].compactMap(\.self)
        print("set on \(description.id) (\(description.name)): \(sides.joined(separator: "; ")); holding \(fixed(hold, 1)) s")
        // Ctrl-C ends the process: the stop guard's handler (in process) or hapticsd (the client
        // gone) sets the triggers free, as for any death.
        var request = timespec(tv_sec: Int(hold), tv_nsec: Int((hold - hold.rounded(.down)) * 1e9))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0, errno == EINTR { request = remaining }
        print("triggers released")
    }
}
