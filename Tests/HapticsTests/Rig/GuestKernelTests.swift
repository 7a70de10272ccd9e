import Testing
import VMRig

extension Tag {
    /// Tests that need the real kernel interfaces of the VM rig (uhid, gpio-sim, pwm-sim).
    @Tag static var kernel: Self
}

/// The parent of every **guest-side** suite: tests that only make sense inside the kernel VM rig
/// (`Scripts/vm/README.md`).
///
/// Convention: a guest-side suite is declared *inside* this enum, in any file of this target:
///
/// ```swift
/// extension GuestKernelTests {
///     @Suite struct HIDBackend {
///         @Test func rumbleReachesTheDevice() throws { … UHIDDevice(controller: .dualSenseUSB) … }
///     }
/// }
/// ```
///
/// It then
/// - is enabled only inside the VM: the `.enabled(if: VMRig.isInsideVM)` condition below applies
///   to every nested suite and test, so on the host they show as skipped;
/// - runs in the VM automatically: the host-side ``VMRigRunner`` boots the VM twice per
///   `swift test` (real HID drivers loaded; `hid.ignore_special_drivers=1`) and runs the test
///   binary inside with `--filter '^HapticsTests\.GuestKernelTests(/|$)'`
///   (``VMRig/guestSuiteFilter``; then ``GuestExclusiveKernelTests`` alone, then
///   ``GuestRealtimeKernelTests`` alone), so every guest-side
///   suite joins those two boots, and each
///   guest failure is reported as a failure of the host test with the guest's message.
///
/// Inside the guest, use `VMRig.ignoresSpecialHIDDrivers` to tell the two boots apart.
@Suite(
    .enabled(if: VMRig.isInsideVM, "guest-side suite: runs only inside the kernel VM rig (the host-side VMRigRunner boots it)"),
    .tags(.kernel))
enum GuestKernelTests {}

/// The parent of the guest-side suites that need the guest to themselves: in each boot they run
/// after every suite of ``GuestKernelTests`` has finished, in a second pass of the test binary
/// (``VMRig/exclusiveGuestSuiteFilter``). For suites whose child processes load the one vCPU for
/// seconds (starting Swift programs, the runtime's backtracer), which would upset the timing
/// checks of the others, and whose own time figures need a quiet machine. Same conventions as
/// ``GuestKernelTests``; the suites inside still run in parallel with each other.
@Suite(
    .enabled(if: VMRig.isInsideVM, "guest-side suite: runs only inside the kernel VM rig (the host-side VMRigRunner boots it)"),
    .tags(.kernel))
enum GuestExclusiveKernelTests {}

/// The parent of the guest-side suites that measure in real time for a minute or more (a
/// calibration through an accelerometer): in each boot they run last, in a third pass of the test
/// binary (``VMRig/realtimeGuestSuiteFilter``), with the guest's one CPU to themselves. Beside the
/// other suites, their real-time threads (a sampler, a simulated sensor) starved the others' normal
/// threads (a HID submit took 5 ms instead of 0.2) and were starved in turn (the calibration took
/// 146 s instead of 83). Same conventions as ``GuestKernelTests``.
@Suite(
    .enabled(if: VMRig.isInsideVM, "guest-side suite: runs only inside the kernel VM rig (the host-side VMRigRunner boots it)"),
    .tags(.kernel))
enum GuestRealtimeKernelTests {}
