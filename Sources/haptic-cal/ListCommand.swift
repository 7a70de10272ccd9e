import ArgumentParser
import Haptics

#if canImport(Glibc)
import Glibc
#endif

/// `haptic-cal list`: the plugins found, each load failure with its reason, and every device.
struct List: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List plugins, plugin load failures and devices.")

    @OptionGroup var global: GlobalOptions

    func run() throws {
        let system = global.makeSystem()
        let report = system.plugins
        let owner: String
        switch system.mode {
        case .daemon(let info):
            print("Mode: through hapticsd, which owns every device (pid \(info.processID), \(info.uniqueName) on the \(info.bus) bus, API \(info.version))")
            owner = "hapticsd (pid \(info.processID))"
        case .inProcess(let reason):
            print("Mode: in-process; this process opens the devices it plays on (not through hapticsd: \(reason))")
            owner = "this process (pid \(getpid())) when it plays"
        }
        print("Plugins (searched: \(report.searchedDirectories.joined(separator: ", ")))")
        if report.backends.isEmpty { print(system.mode.isDaemon ? "  none loaded here: hapticsd loads them" : "  none found") }
        for backend in report.backends {
            print("  \(pad(backend.name, 10)) \(backend.path)")
        }
        if !report.failures.isEmpty {
            print("Not loaded:")
            for failure in report.failures { print("  \(failure)") }
        }
        let every = system.everyListing()
        let listing = (devices: HapticSystem.merged(every.devices), failures: every.failures)
        print("Devices:")
        if listing.devices.isEmpty { print("  none") }
        let width = max(listing.devices.map(\.id.count).max() ?? 0, 10) + 2
        for device in listing.devices {
            print("  \(pad(device.id, width))\(device.name): \(device.channelSummary)")
            print("  \(pad("", width))owner: \(owner)")
            if let reason = device.unavailableReason { print("  \(pad("", width))unavailable: \(reason)") }
            if !device.alternatives.isEmpty {
                print("  \(pad("", width))served by \(device.backend); also reachable as \(device.alternatives.joined(separator: ", "))")
                // What each other way in drives, and why it is not the one serving.
                for alternative in device.alternatives {
                    guard let hidden = every.devices.first(where: { $0.id == alternative }) else { continue }
                    print("  \(pad("", width))  \(hidden.id): \(hidden.channelSummary)")
                    if let reason = hidden.unavailableReason { print("  \(pad("", width))    unavailable: \(reason)") }
                }
            }
        }
        for failure in listing.failures { print("  (\(failure))") }
    }
}

extension HapticSystem.Mode {
    /// Whether hapticsd owns the devices.
    var isDaemon: Bool {
        if case .daemon = self { return true }
        return false
    }
}
