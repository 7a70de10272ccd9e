import Foundation

extension PWMSim {
    /// The debugfs file through which the module requests a channel the way a kernel driver does.
    public static let claimPath = "/sys/kernel/debug/pwm-sim/claim"

    /// Requests `channel` inside the kernel with the label `pwm-sim-claim`, as a driver bound to it
    /// in the device tree would (pwm-vibrator, pwm-backlight, pwm-fan): exporting it through sysfs
    /// then fails with `EBUSY` and its directory never appears. ``releaseDriverClaim(channel:)``
    /// frees it.
    public func claimForDriver(channel: Int) throws {
        try checkChannelNumber(channel)
        try SysFS.write(Self.claimPath, String(channel))
    }

    /// Frees a channel ``claimForDriver(channel:)`` requested.
    public func releaseDriverClaim(channel: Int) throws {
        try checkChannelNumber(channel)
        try SysFS.write(Self.claimPath, String(-1 - channel))
    }

    /// The channels requested through ``claimForDriver(channel:)``, in order.
    public func driverClaims() throws -> [Int] {
        try SysFS.read(Self.claimPath).split(separator: "\n").compactMap { Int($0) }
    }

    private func checkChannelNumber(_ channel: Int) throws {
        guard (0..<channelCount).contains(channel) else {
            throw RigError.invalidArgument("channel \(channel) of \(chipPath), which has \(channelCount)")
        }
    }
}
