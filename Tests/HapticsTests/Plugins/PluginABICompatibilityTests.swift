import Foundation
import Haptics
import Testing

/// The header's promise, tested both ways: fields appended to a struct that carries a
/// `struct_size` keep ABI version 1. A plugin of ABI 1.0 runs in this host; this build's plugins
/// (C and Swift) run in a host of ABI 1.0 and in a host of a later 1.x; a plugin of a later 1.x
/// runs in this host.
@Suite("Plugin ABI: appended fields keep the version, in both directions")
struct PluginABICompatibilityTests {
    func fixtures() throws -> FixturePlugins.Built {
        try FixturePlugins.built.get()
    }

    @Test("a plugin of ABI 1.0 (no describe) loads and plays in this host; its devices state nothing beyond 1.0")
    func oldPluginNewHost() throws {
        let backend = try PluginLoader(logger: TestSupport.quietLogger).load(path: try fixtures().directory + "/libhaptics-fixture-abi10.so")
        let device = try #require(try backend.devices().first)
        #expect(device.id == "fixture:c")
        #expect(device.physicalID == nil && device.envelope == nil && device.preference == 0 && device.isAvailable && device.periodStep == nil)
        let actuator = try backend.open(device)
        try actuator.wake()
        try actuator.submit(DriveFrame(time: .monotonicNow(), channels: [ChannelDrive(amplitude: 0.5)]))
        try actuator.stop()
        try actuator.sleep()
        actuator.close()
    }

    @Test("this build's describe reaches the host: physical id, preference, drive envelope, period step")
    func newPluginNewHost() throws {
        let backend = try PluginLoader(logger: TestSupport.quietLogger).load(path: try fixtures().directory + "/libhaptics-fixture-good.so")
        let device = try #require(try backend.devices().first)
        #expect(device.physicalID == "fixture:physical")
        #expect(device.preference == 7)
        #expect(device.envelope == DriveEnvelope(amplitudeOffset: 0.25, ratedLevel: 0.5, kickLevel: 1, kickDuration: 0.03, maxContinuousDuration: 5, restDuration: 0.02))
        #expect(device.envelope?.steadyAmplitudeLimit == 1.0 / 3.0)
        // ABI 1.2: frequencies played as whole periods of 2 ms.
        #expect(device.periodStep == 0.002)
    }

    @Test("a plugin of a later 1.x (a longer table) loads in this host, which uses what it knows")
    func laterPluginNewHost() throws {
        let backend = try PluginLoader(logger: TestSupport.quietLogger).load(path: try fixtures().directory + "/libhaptics-fixture-future.so")
        let device = try #require(try backend.devices().first)
        #expect(device.physicalID == "fixture:physical")
        let actuator = try backend.open(device)
        try actuator.wake()
        actuator.close()
    }

    /// Runs one of the C hosts on `plugin`, opening `device`.
    func host(_ host: String, _ plugin: String, _ device: String) throws -> (status: Int32, output: String) {
        try TestSupport.run(host, [plugin, device])
    }

    @Test("this build's plugins (C and Swift) run in a host of ABI 1.0, which passes the 1.0 table size", arguments: [
        ("libhaptics-fixture-good.so", "fixture:c"), ("libhaptics-recording.so", "recording:lra"), ("libhaptics-null.so", "null:0"),
    ])
    func newPluginsOldHost(plugin: String, device: String) throws {
        let path = plugin.hasPrefix("libhaptics-fixture") ? try fixtures().directory + "/" + plugin : TestSupport.buildDirectory + "/" + plugin
        let (status, output) = try host(try fixtures().host10, path, device)
        #expect(status == 0, "\(output)")
        #expect(output.contains("fill: 0, abi 1"), "\(output)")
        #expect(output.contains("wake 0, submit 0, stop 0, sleep 0"), "\(output)")
    }

    @Test("this build's plugins run in a host of a later 1.x: a longer table, describe structs longer and shorter than theirs", arguments: [
        ("libhaptics-fixture-good.so", "fixture:c"), ("libhaptics-recording.so", "recording:lra"), ("libhaptics-fixture-abi10.so", "fixture:c"),
    ])
    func pluginsInLaterHost(plugin: String, device: String) throws {
        let path = plugin.hasPrefix("libhaptics-fixture") ? try fixtures().directory + "/" + plugin : TestSupport.buildDirectory + "/" + plugin
        let (status, output) = try host(try fixtures().laterHost, path, device)
        #expect(status == 0, "\(output)")
        if plugin.contains("abi10") {
            #expect(output.contains("describe: not offered"), "\(output)")
        } else {
            #expect(output.contains("describe (\(592 + 32) bytes): 0, struct_size \(592 + 32)"), "\(output)")
            #expect(output.contains("describe (48 bytes): 0, struct_size 48"), "\(output)")
        }
        if plugin.contains("fixture-good") { #expect(output.contains("physical id: 'fixture:physical'"), "\(output)") }
    }
}
