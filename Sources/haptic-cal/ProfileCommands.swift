import ArgumentParser
import Foundation
import Haptics

/// `haptic-cal profile show|export|import`.
struct ProfileCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "profile",
        abstract: "Show, export and import calibration profiles.",
        discussion: """
            User profiles live in $XDG_CONFIG_HOME/haptics/profiles/ (else ~/.config/haptics/profiles/); shipped defaults in \
            $HAPTICS_PROFILE_PATH, the install prefix's share/haptics/profiles, and the source tree's Hardware/profiles when run from \
            a build directory. The format is documented in Hardware/profiles/README.md.
            """,
        subcommands: [ShowProfile.self, ExportProfile.self, ImportProfile.self])
}

/// The device `query` names if a backend lists it, else a description-less lookup by id.
func describe(_ query: String, global: GlobalOptions) -> DeviceDescription? {
    try? global.makeSystem().resolve(query)
}

/// The profile the engine would use for `id`, where it is, and the files skipped on the way.
func profileInUse(for query: String, global: GlobalOptions) -> (profile: CalibrationProfile, origin: String, problems: [ProfileError], id: String) {
    let store = ProfileStore.standard
    if let description = describe(query, global: global) {
        let (entry, problems) = store.lookup(for: description)
        if let entry { return (entry.profile, "\(entry.origin.rawValue) profile \(entry.path)", problems, description.id) }
        var fallback = CalibrationProfile.uncalibrated(for: description)
        fallback.deviceID = description.id
        return (fallback, "uncalibrated default (no profile file)", problems, description.id)
    }
    // Not connected: look for files by id without checking them against a description.
    var problems: [ProfileError] = []
    let directories = [store.userDirectory].compactMap { $0 } + store.shippedDirectories
    for candidate in ProfileStore.candidateIDs(for: query) {
        for directory in directories {
            let path = directory + "/" + ProfileStore.fileName(for: candidate)
            guard FileManager.default.fileExists(atPath: path) else { continue }
            do { return (try ProfileFormat.read(path: path), "profile \(path) (device not connected; not checked against it)", problems, query) } catch {
                problems.append(error)
            }
        }
    }
    return (CalibrationProfile(deviceID: query, deviceName: nil, source: .uncalibrated, channels: [], sharpness: .none, transient: .init(duration: 0.012)),
            "none: '\(query)' is not connected and has no profile file", problems, query)
}

/// `haptic-cal profile show [DEVICE]`.
struct ShowProfile: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "show", abstract: "Show the profile a device gets (or list every profile file).")

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The device (omit to list every profile file).")
    var device: String?

    @Flag(help: "Print the profile as JSON.")
    var json = false

    func run() throws {
        guard let device else {
            let (entries, problems) = ProfileStore.standard.allProfiles()
            if entries.isEmpty { print("no profile files (user: \(ProfileStore.standard.userDirectory ?? "none"))") }
            for entry in entries {
                print("\(pad(entry.profile.deviceID ?? "(no id)", 32)) \(pad(entry.origin.rawValue, 8)) \(pad(entry.profile.source.rawValue, 14)) \(entry.path)")
            }
            for problem in problems { print("  skipped: \(problem)") }
            return
        }
        let (profile, origin, problems, _) = profileInUse(for: device, global: global)
        for problem in problems { printError("skipped \(problem)") }
        if json {
            print(profile.encodedJSON(), terminator: "")
            return
        }
        print("\(profile.deviceID ?? device): \(origin)")
        guard !profile.channels.isEmpty else { return }
        print("  source             \(profile.source.rawValue)")
        if profile.drive == .level { print("  drive              levels from 0 (measured from zero; replaces the board's offset)") }
        for channel in profile.channels {
            var line = "  \(pad(channel.name, 18)) dead zone \(fixed(channel.deadZone, 3)), exponent \(fixed(channel.responseExponent, 2)), full scale \(fixed(channel.fullScaleOutput, 3))"
            if let f0 = channel.resonantFrequency { line += ", f0 \(fixed(f0, 1)) Hz" }
            if let q = channel.qFactor { line += ", Q \(fixed(q, 1))" }
            if let band = channel.usableBand { line += ", band \(fixed(band.lowerBound, 1))–\(fixed(band.upperBound, 1)) Hz" }
            if !channel.frequencyResponse.isEmpty { line += ", \(channel.frequencyResponse.count)-point frequency map" }
            if !channel.frequencyResponseByOutput.isEmpty { line += ", band by output \(describe(channel.frequencyResponseByOutput, unit: ""))" }
            if let saturation = channel.saturationOutput { line += ", levels off at \(fixed(saturation, 3))" }
            if let start = channel.startDrive { line += ", starts at \(fixed(start, 3))" + (channel.stopDrive.map { $0 < start ? " (runs down to \(fixed($0, 3)))" : "" } ?? "") }
            if channel.lowestOutputFromRest() > 0 { line += ", floor \(fixed(channel.lowestOutputFromRest(), 3)) from rest" }
            if let rise = channel.riseTime { line += ", spin-up \(fixed(rise * 1000, 0)) ms" }
            if let fall = channel.fallTime { line += ", spin-down \(fixed(fall * 1000, 0)) ms" }
            print(line)
        }
        switch profile.sharpness {
        case .none: print("  sharpness          none")
        case .frequency: print("  sharpness          frequency")
        case .motorMix(let low, let high): print("  sharpness          motor mix \(profile.channels[low].name) → \(profile.channels[high].name)")
        }
        let tap = profile.transient
        print("  tap                " + describe(tap))
        print("  limits             rated \(fixed(profile.limits.ratedLevel, 2)), overdrive \(fixed(profile.limits.overdriveLevel, 2))")
    }
}

/// `haptic-cal profile export DEVICE [-o FILE]`.
struct ExportProfile: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export", abstract: "Write the profile a device gets as JSON (the uncalibrated default when it has none, as a template).")

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The device.")
    var device: String

    @Option(name: .shortAndLong, help: ArgumentHelp("The file to write (default: standard output).", valueName: "file"))
    var output: String?

    func run() throws {
        let (profile, origin, problems, _) = profileInUse(for: device, global: global)
        for problem in problems { printError("skipped \(problem)") }
        guard !profile.channels.isEmpty else { throw CommandFailure(origin) }
        guard let output else {
            print(profile.encodedJSON(), terminator: "")
            return
        }
        try ProfileStore.write(profile, toPath: output)
        print("exported the \(origin) to \(output)")
    }
}

/// `haptic-cal profile import FILE [--device ID]`.
struct ImportProfile: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Check a profile file and install it as a user profile (written atomically).",
        discussion: "With --device, the profile is installed for that device (its device_id is replaced): a profile from one unit can serve another of the same model.")

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The profile file (JSON; see Hardware/profiles/README.md).")
    var file: String

    @Option(help: ArgumentHelp("Install it for this device id.", valueName: "id"))
    var device: String?

    func run() throws {
        var profile: CalibrationProfile
        profile = try CalibrationProfile(contentsOfFile: file)
        if let device { profile.deviceID = device }
        guard let id = profile.deviceID else {
            throw CommandFailure("\(file): $.device_id: missing; pass --device ID to say which device it is for")
        }
        if let description = describe(id, global: global), description.id == id {
            try ProfileStore.check(profile, file: file, device: description)
        } else {
            printError("note: \(id) is not connected; the profile was checked for format only")
        }
        let path = try ProfileStore.standard.save(profile)
        print("imported \(file) for \(id) to \(path)")
    }
}
