import Foundation
import Haptics
import HapticsBus
import Testing
import VMRig

#if canImport(Glibc)
import Glibc
#endif

extension GuestKernelTests {
    /// Guest side: hapticsd owning a real GPIO/PWM actuator (gpio-sim, pwm-sim), stopped by a signal
    /// in the middle of a long drive: the enable line falls and the PWM channel is left at duty 0,
    /// disabled, read back from the kernel.
    @Suite(.serialized)
    struct HapticsdKernel {
        @Test(
            "SIGTERM to hapticsd mid-drive: the enable line is driven low and the PWM stops (duty 0, disabled) before it exits",
            .enabled(if: !VMRig.ignoresSpecialHIDDrivers, "HID drivers do not matter here: one of the two boots is enough"))
        func sigtermMidDrive() throws {
            let kernel = try GPIOKernelRig(board: GPIOSafety.driverBoard)
            let trace = try GPIOValueTrace(chip: kernel.sim)
            defer { try? trace.remove() }
            let rig = try DaemonRig(devices: "none", arguments: ["--set", "gpio.boards=\(kernel.boardPath)", "--default-device", kernel.id()])
            let client = try TestBusClient(address: rig.address)
            let long = try HapticPattern.continuous(duration: 10, intensity: 1, sharpness: 0.5)
            try client.call("PlayPattern", [.string("org.example.Board"), .string(kernel.id()), .string(long.ahapText(pretty: false)), .double(1), .dictionary([])])
            let driving = try ChildProcess.waitUntil(timeout: 60) {
                try kernel.pwm.history(channel: kernel.channel).contains { $0.state.enabled && $0.state.dutyCycle == 50_000 }
            }
            try #require(driving, "hapticsd never drove the actuator: \(rig.daemonLog)")
            #expect(try kernel.sim.value(line: 6) == 1, "the enable line is high while it drives")

            #expect(try rig.stopDaemon(SIGTERM) == .exited(0), "\(rig.daemonLog)")
            #expect(try kernel.lastState() == PWMSim.State(period: 50_000, dutyCycle: 0, enabled: false))
            let enable = try trace.events().filter { $0.line == 6 }
            #expect(enable.last?.value == 0, "enable line history: \(enable)")
            #expect(try !kernel.lineIsUsed(6), "the line is released")
            #expect(client.waitForSignal("Ended") { $0.last == .string("daemon-stopping") } != nil)
        }
    }
}
