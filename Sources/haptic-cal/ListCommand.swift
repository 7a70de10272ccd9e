import ArgumentParser
import Haptics

/// `haptic-cal list`: the plugins found, each load failure with its reason, and every device.
struct List: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List plugins, plugin load failures and devices.")

    @OptionGroup var global: GlobalOptions

    func run() throws {
        let system = global.makeSystem()
        let report = system.plugins
        print("Plugins (searched: \(report.searchedDirectories.joined(separator: ", ")))")
        if report.backends.isEmpty { print("  none found") }
        for backend in report.backends {
            print("  \(pad(backend.name, 10)) \(backend.path)")
        }
        if !report.failures.isEmpty {
            print("Not loaded:")
            for failure in report.failures { print("  \(failure)") }
        }
        let listing = system.deviceListing()
        print("Devices:")
        if listing.devices.isEmpty { print("  none") }
        let width = max(listing.devices.map(\.id.count).max() ?? 0, 10) + 2
        for device in listing.devices {
            print("  \(pad(device.id, width))\(device.name): \(device.channelSummary)")
            if let reason = device.unavailableReason { print("  \(pad("", width))unavailable: \(reason)") }
            if !device.alternatives.isEmpty {
                print("  \(pad("", width))served by \(device.backend); also reachable as \(device.alternatives.joined(separator: ", "))")
            }
        }
        for failure in listing.failures { print("  (\(failure))") }
    }
}
