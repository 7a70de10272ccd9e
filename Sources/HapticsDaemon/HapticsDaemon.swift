#if canImport(Glibc)
import Glibc
#endif
import CHapticsSystem
import CHapticsdInterfaces
import CSystemd  // sd_notify (the service manager, not the bus)
import Haptics
import HapticsBus
import HapticsSupport
import Logging

/// hapticsd: the one owner of the haptic devices, serving `org.swifthaptics.Haptics1` (and
/// feedbackd's `org.sigxcpu.Feedback`) on a message bus.
///
/// Threads: the main thread runs the event loop (`sd_event`) and is the only one that touches the
/// bus and the state below. The engines render on one scheduler thread; what they report (a player
/// ended, a device came or went) reaches the main thread through a ``WakeupQueue`` (an eventfd in
/// the loop), so nothing polls and no lock is held across a bus call.
public final class HapticsDaemon: @unchecked Sendable {
    // Everything below is confined to the main thread (hence @unchecked Sendable: jobs posted to the
    // queue carry `self` back to that thread).

    /// The interface version, `Version` on the bus.
    public static let version = "1.0"

    let options: DaemonOptions
    let logger: Logger
    let loop: EventLoop
    let queue: WakeupQueue
    let bus: BusConnection
    let devices: DeviceOwner
    let players: PlayerRegistry
    let clients: ClientTracker
    var policy: PolicyStore
    var feedback: FeedbackManager
    var limiter: CallLimiter
    var guards = OveruseGuards()
    var statistics = Statistics()
    /// The clips clients registered, each client's own.
    var audio = AudioStore()
    /// The adaptive triggers clients hold (`SetTriggers`).
    var triggers = TriggerHolds()
    /// Live audio driving devices (`Listen`).
    var listeners = Listeners()
    /// The app ids each client used (to drop an app's guards when its last client leaves).
    var clientApps: [String: Set<String>] = [:]
    /// The user behind each client that has something under way (a budget per user).
    var clientUsers: [String: UInt32] = [:]
    /// The clients with a document being parsed (one at a time each).
    var parsing: Set<String> = []
    /// Where documents are parsed: off the main thread, one at a time, at low priority.
    let parser: ParseWorker
    /// Who may change which settings.
    let authorizer: Authorizer
    /// The user who set each app's stored settings last (its settings are that user's).
    var appPolicyOwners: [String: UInt32] = [:]
    let processID = UInt32(getpid())
    let started = HapticInstant.monotonicNow()
    private let mainThread = pthread_self()
    var servesFeedbackd = false
    /// Whether hapticsd asks for `org.sigxcpu.Feedback` (``FeedbackdMode``, decided at start).
    private var wantsFeedbackd = false
    private(set) var stopping = false

    /// The signals the event loop handles (stop, stop, reload). Blocked first thing in `main`, before
    /// any thread exists, so they reach the loop's signalfd and never a handler on another thread
    /// (a plugin's signal handler included: hapticsd stops the actuators itself, in order).
    public static let handledSignals = [SIGTERM, SIGINT, SIGHUP]

    /// Blocks ``handledSignals`` for this thread and every thread started after it.
    public static func blockHandledSignals() {
        EventLoop.blockSignals(handledSignals)
    }

    /// Allocations of at least this many bytes are mapped on their own (glibc's default start, held fixed).
    static let mmapThreshold = 128 << 10

    /// Sets everything up short of taking the bus names: plugins, devices, policy, theme, bus connection.
    public init(options: DaemonOptions) throws(DaemonStartError) {
        self.options = options
        var logger = Logger(label: "hapticsd")
        logger.logLevel = options.logLevel
        self.logger = logger
        // Documents of up to 4 MiB come and go (each read, parsed and dropped): mapped on their
        // own, they go back to the system when freed, instead of raising glibc's threshold so that
        // the next ones stay in a heap (the soak's resident size after the crowd left: 27.6 MB,
        // against 20.8 MB at warm-up in one run, before this).
        _ = haptics_malloc_fix_mmap_threshold(Self.mmapThreshold)
        do {
            loop = try EventLoop()
            queue = try WakeupQueue()
        } catch {
            throw DaemonStartError("cannot set up the event loop: \(error)")
        }
        do { parser = try ParseWorker() } catch { throw DaemonStartError("cannot start the thread that parses patterns: \(error)") }

        var global = HapticPolicy()
        do { global = try HapticPolicy.load() } catch { logger.warning("ignoring the haptics settings: \(error)") }
        var apps: [String: AppPolicy] = [:]
        do { apps = try PolicyStore.loadApps(path: options.appsFile ?? PolicyStore.appsPath()) } catch {
            logger.warning("ignoring the per-app settings: \(error)")
        }
        policy = PolicyStore(global: global, apps: apps, profile: options.profile)
        limiter = CallLimiter(limit: options.maxCallsPerSecond)
        authorizer = Authorizer(mode: options.authorization, bus: options.bus)

        let loaded: ThemeSearch.Loaded
        do {
            loaded = try Self.themeSearch(options).load(file: options.themeFile, name: options.themeName)
        } catch {
            throw DaemonStartError("cannot load the feedback theme: \(error) (choose one with --theme FILE or --theme-dir DIR)")
        }
        for warning in loaded.warnings { logger.warning("theme: \(warning)") }
        feedback = FeedbackManager(theme: loaded.theme, files: loaded.files)
        logger.info("feedback theme '\(loaded.theme.name)' from \(loaded.files.joined(separator: " ← "))")

        do {
            bus = try BusConnection(options.bus, description: "hapticsd")
        } catch {
            throw DaemonStartError("cannot connect to \(options.bus): \(error.message)")
        }
        clients = ClientTracker(bus: bus)
        players = PlayerRegistry(queue: queue, logger: logger)

        let system = HapticSystem(
            configuration: .init(searchPath: options.searchPath, settings: options.settings, logger: logger, daemon: .never))
        for failure in system.plugins.failures { logger.notice("plugin not loaded: \(failure)") }
        devices = DeviceOwner(system: system, defaultDevice: options.defaultDevice, policy: global, queue: queue, logger: logger)
    }

    /// The theme search for `options`: `--theme-dir` directories, then the installed and source-tree ones.
    static func themeSearch(_ options: DaemonOptions) -> ThemeSearch {
        var directories = options.themeDirectories
        if let bin = PluginSearchPath.executableDirectory() {
            directories.append(ThemeSearch.normalize(bin + "/../share/hapticsd/themes"))
            // Run from a SwiftPM build directory (`…/.build/<triple>/debug/`): the repository's themes.
            if let build = bin.firstRange(of: "/.build/") {
                directories.append(String(bin[..<build.lowerBound]) + "/dist/themes")
            }
        }
        directories += ["/usr/local/share/hapticsd/themes", "/usr/share/hapticsd/themes"]
        var seen = Set<String>()
        return ThemeSearch.standard(themeDirectories: directories.filter { seen.insert($0).inserted })
    }

    /// Serves until SIGTERM or SIGINT; returns the exit status.
    public func run() throws(DaemonStartError) -> Int32 {
        do {
            try loop.onReadable(queue.descriptor) { [unowned self] _ in queue.drain() }
            for signal in [SIGTERM, SIGINT] {
                try loop.onSignal(signal) { [unowned self] number in shutDown(signal: number) }
            }
            try loop.onSignal(SIGHUP) { [unowned self] _ in reload() }
        } catch {
            throw DaemonStartError("cannot set up the event loop: \(error)")
        }

        players.onEnded = { [unowned self] record, reason in playerEnded(record, reason: reason) }
        clients.onLeft = { [unowned self] name in clientLeft(name) }
        devices.onChange = { [unowned self] added, removed in devicesChanged(added: added, removed: removed) }
        devices.onEngineStopped = { [unowned self] id, reason in
            logger.notice("\(id): engine stopped: \(reason)")
            // A device found gone by a failed write (no backend event): drop it now, DeviceRemoved included.
            if case .deviceLost = reason { devices.refresh() }
        }
        wantsFeedbackd = decideFeedbackd()
        try registerInterfaces()
        do {
            // sd-bus reports a lost connection as this local signal: the bus is gone (a session that
            // ended, a test's private bus, dbus-daemon restarted), and with it every client.
            try bus.addMatch(
                "type='signal',path='/org/freedesktop/DBus/Local',interface='org.freedesktop.DBus.Local',member='Disconnected'",
                callback: { _, userdata, _ in
                    Unmanaged<HapticsDaemon>.fromOpaque(userdata!).takeUnretainedValue().busLost()
                    return 0
                }, userdata: Unmanaged.passUnretained(self).toOpaque())
        } catch {
            throw DaemonStartError("cannot watch the bus connection: \(error)")
        }
        devices.start()
        do {
            try bus.requestName(HapticsServiceName.bus)
        } catch {
            let hint = error.errno == EEXIST ? " (is hapticsd already running?)" : ""
            throw DaemonStartError("cannot own \(HapticsServiceName.bus): \(error.message)\(hint)")
        }
        if wantsFeedbackd {
            do {
                try bus.requestName(FeedbackdServiceName.bus)
                servesFeedbackd = true
            } catch {
                logger.warning("not serving feedbackd's interface: \(error.message) (stop feedbackd to let hapticsd serve its clients)")
            }
        }
        do { try loop.attach(bus) } catch { throw DaemonStartError("cannot attach the bus to the event loop: \(error)") }

        // The bus thread answers clients and stops players when clients leave: when allowed (root,
        // CAP_SYS_NICE, an rtprio limit) it runs SCHED_FIFO below the engine's scheduler, so a busy
        // machine does not delay a stop.
        if options.realtime, PosixThread.requestRealtimeForCurrentThread(priority: 10) { logger.info("the bus thread runs SCHED_FIFO") }
        let usable = devices.devices.filter(\.isUsable).map(\.id)
        let status = "serving \(usable.count) device\(usable.count == 1 ? "" : "s") on \(options.bus)"
        logger.info("\(status): \(usable.joined(separator: ", "))")
        _ = sd_notify(0, "READY=1\nSTATUS=\(status)")
        do {
            return try loop.run()
        } catch {
            throw DaemonStartError("the event loop failed: \(error)")
        }
    }

    /// Whether to ask for `org.sigxcpu.Feedback`: `--feedbackd always` or `never` say; `auto` leaves
    /// it to feedbackd when the bus has an activation file for the name (feedbackd is installed).
    private func decideFeedbackd() -> Bool {
        switch options.feedbackd {
        case .never: return false
        case .always: return true
        case .auto:
            do {
                guard try bus.isActivatable(FeedbackdServiceName.bus) else { return true }
                logger.notice(
                    "not serving feedbackd's interface: the bus starts another service for \(FeedbackdServiceName.bus) (feedbackd is installed); hapticsd --feedbackd always serves it regardless")
                return false
            } catch {
                logger.warning("cannot list the bus's activatable names (\(error.message)); serving feedbackd's interface if it is free")
                return true
            }
        }
    }

    private func registerInterfaces() throws(DaemonStartError) {
        let userdata = Unmanaged.passUnretained(self).toOpaque()
        do {
            try bus.addObject(path: HapticsServiceName.objectPath, interface: HapticsServiceName.interface, vtable: hapticsd_manager_vtable(), userdata: userdata)
            try bus.addFallback(
                prefix: HapticsServiceName.playerPrefix, interface: HapticsServiceName.playerInterface, vtable: hapticsd_player_vtable(),
                find: { _, path, _, userdata, found, _ in
                    // Every well-formed player path is served; handlers say UnknownPlayer for ids not in use.
                    guard let path, HapticsServiceName.playerID(fromPath: String(cString: path)) != nil else { return 0 }
                    found?.pointee = userdata
                    return 1
                }, userdata: userdata)
            try bus.addNodeEnumerator(
                path: HapticsServiceName.playerPrefix,
                enumerate: { _, _, userdata, nodes, _ in
                    let daemon = Unmanaged<HapticsDaemon>.fromOpaque(userdata!).takeUnretainedValue()
                    let paths = daemon.players.records.keys.sorted().map { HapticsServiceName.playerPath($0) }
                    let list = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: paths.count + 1)
                    for (index, path) in paths.enumerated() { list[index] = strdup(path) }
                    list[paths.count] = nil
                    // sd-bus frees the list and its strings with free().
                    nodes?.pointee = list
                    return 0
                }, userdata: userdata)
            if wantsFeedbackd {
                try bus.addObject(
                    path: FeedbackdServiceName.objectPath, interface: FeedbackdServiceName.interface, vtable: hapticsd_feedback_vtable(), userdata: userdata)
                try bus.addObject(
                    path: FeedbackdServiceName.objectPath, interface: FeedbackdServiceName.hapticInterface, vtable: hapticsd_feedback_haptic_vtable(),
                    userdata: userdata)
            }
        } catch {
            throw DaemonStartError("cannot register the D-Bus interfaces: \(error)")
        }
    }

    /// Whether the caller runs on the main thread (the overuse guard calls back inline or from the clock).
    var isMainThread: Bool { pthread_equal(pthread_self(), mainThread) != 0 }

    // MARK: - Lifecycle

    /// SIGTERM or SIGINT: every player stopped, every actuator stopped and closed, then exit.
    func shutDown(signal: Int32) {
        guard !stopping else { return }
        logger.info("signal \(signal): stopping every actuator")
        stop(exitCode: 0)
    }

    /// Ends every event and player, stops and closes every actuator, and ends the loop with `exitCode`.
    private func stop(exitCode: Int32) {
        stopping = true
        _ = sd_notify(0, "STOPPING=1")
        for event in feedback.events.values.sorted(by: { $0.id < $1.id }) { endFeedbackEvent(event, reason: "daemon-stopping") }
        listeners.removeAll()
        let ended = players.endAll(reason: "daemon-stopping")
        triggers.releaseAll()
        devices.shutDown()
        for record in ended { playerEnded(record, reason: "daemon-stopping") }
        bus.flush()
        loop.exit(code: exitCode)
    }

    /// The bus connection was lost: nobody can reach the service any more, so it stops every actuator
    /// and exits with status 1, as a bus-activated service does (feedbackd exits with its bus); under
    /// systemd, `Restart=on-failure` starts it again on the bus that comes back.
    func busLost() {
        guard !stopping else { return }
        logger.notice("lost the connection to \(options.bus): stopping every actuator and exiting")
        stop(exitCode: 1)
    }

    /// SIGHUP: reads the settings files and the theme again.
    func reload() {
        var global = policy.global
        do { global = try HapticPolicy.load() } catch { logger.warning("ignoring the haptics settings: \(error)") }
        var apps = policy.apps
        do { apps = try PolicyStore.loadApps(path: options.appsFile ?? PolicyStore.appsPath()) } catch {
            logger.warning("ignoring the per-app settings: \(error)")
        }
        do {
            let loaded = try Self.themeSearch(options).load(file: options.themeFile, name: options.themeName)
            feedback.theme = loaded.theme
            feedback.themeFiles = loaded.files
            for warning in loaded.warnings { logger.warning("theme: \(warning)") }
            logger.info("reloaded theme '\(loaded.theme.name)' from \(loaded.files.joined(separator: " ← "))")
        } catch {
            logger.warning("keeping the current theme: \(error)")
        }
        setGlobalPolicy(global)
        policy.apps = apps
        appPolicyOwners = appPolicyOwners.filter { apps[$0.key] != nil }
        for app in Set(players.records.values.map(\.appID)) { applyAppPolicy(app) }
        emitPropertiesChanged(["Enabled", "IntensityScale", "MinimumIntervals", "AppPolicies"])
    }

    /// A client left the bus: everything it started that could go on stops now: patterns, players,
    /// feedbackd events and vibrations, and effects still waiting in the overuse guard. A vocabulary
    /// effect already playing (a tap or a short rhythm, 0.4 s at most, ending by itself) plays out,
    /// so `busctl call … PlayEffect` from a shell is not cut off when busctl exits.
    func clientLeft(_ name: String) {
        let owned = players.records(ownedBy: name).filter { record in
            if case .effect = record.origin, record.player != nil { return false }
            return true
        }
        if !owned.isEmpty { logger.info("client \(name) left: stopping its \(owned.count) player(s)") }
        for event in feedback.events(from: name) { endFeedbackEvent(event, reason: "client-vanished") }
        for record in owned {
            // Gone with its owner: a player made with CreatePlayer is released too, so nothing of a
            // departed client stays in the registry.
            record.released = true
            players.stop(record, reason: "client-vanished")
        }
        let listening = listeners.removeAll(ownedBy: name)
        if listening > 0 { logger.info("client \(name) left: stopped its \(listening) listener(s)") }
        limiter.forget(name)
        audio.forget(name)
        let freed = triggers.release(ownedBy: name)
        if !freed.isEmpty { logger.info("client \(name) left: released the adaptive triggers of \(freed.joined(separator: ", "))") }
        clientUsers[name] = nil
        if !owned.isEmpty { scheduleTrim() }
        let apps = clientApps.removeValue(forKey: name) ?? []
        for app in apps where !clientApps.values.contains(where: { $0.contains(app) }) {
            guards.forget(app: app)
        }
    }

    /// The pending return of freed memory to the system (see ``scheduleTrim()``).
    private var trim: EventLoop.Timer?
    /// A client left after the pending trim was armed: it runs again a second after it.
    private var trimAgain = false

    /// A client that held players left: once they have ended (a second later), the allocator gives
    /// the memory they held back to the system (`malloc_trim`), so the service's resident size
    /// returns to its level before the client came instead of staying at its peak. At most one
    /// trim a second, and always one after the last client left.
    func scheduleTrim() {
        guard trim?.isPending != true else {
            trimAgain = true
            return
        }
        trim = try? loop.timer(after: 1) { [unowned self] in
            _ = haptics_malloc_trim()
            if trimAgain {
                trimAgain = false
                scheduleTrim()
            }
        }
    }

    // MARK: - Authorization

    /// Throws `AccessDenied` unless `sender` may change the global settings (Docs/Daemon.md,
    /// Authorization).
    func authorizeSettings(_ sender: String?) throws(BusError) {
        guard authorizer.enabled else { return }
        let (name, uid) = try caller(sender)
        try authorizer.check(.setSettings, sender: name, uid: uid, on: bus)
    }

    /// Throws `AccessDenied` unless `sender` may set `app`'s settings: an app's settings are its
    /// user's, so a caller may set them unless another user's connections use the app id, or another
    /// user set them last; then polkit decides. Returns the caller's user.
    func authorizeAppPolicy(_ sender: String?, app: String) throws(BusError) -> UInt32? {
        guard authorizer.enabled else { return nil }
        let (name, uid) = try caller(sender)
        let otherUsers = clientApps.contains { client, apps in apps.contains(app) && clientUsers[client].map { $0 != uid } == true }
        if otherUsers || appPolicyOwners[app].map({ $0 != uid }) == true {
            try authorizer.check(.setAppPolicy, sender: name, uid: uid, on: bus)
        }
        return uid
    }

    /// Throws `AccessDenied` unless `sender` may have the service capture audio for it (`Listen`).
    func authorizeListen(_ sender: String?) throws(BusError) {
        guard authorizer.enabled else { return }
        let (name, uid) = try caller(sender)
        try authorizer.check(.listen, sender: name, uid: uid, on: bus)
    }

    /// The caller's unique name and user.
    private func caller(_ sender: String?) throws(BusError) -> (String, UInt32) {
        guard let sender else { throw BusError(name: "org.freedesktop.DBus.Error.AccessDenied", message: "the caller has no bus name") }
        if let uid = clientUsers[sender] { return (sender, uid) }
        do { return (sender, try bus.unixUser(of: sender)) } catch {
            throw BusError(name: "org.freedesktop.DBus.Error.AccessDenied", message: "the user of \(sender) could not be asked of the bus: \(error.message)")
        }
    }

    /// Most app ids one connection may speak for (a connection is an app, or a few: a shell, a helper).
    static let maximumAppsPerClient = 64

    /// Notes that `message`'s sender uses `app`, and follows it so what it starts stops when it leaves
    /// (and its per-client state goes with it).
    /// - Throws: `InvalidArgument` when the connection has already used ``maximumAppsPerClient`` others,
    ///   so no client can grow the service's state without bound.
    func noteClient(_ message: BusMessage, app: String) throws(BusError) {
        guard let sender = message.sender else { return }
        if clientUsers[sender] == nil {
            // A new client: its user may have at most maxClientsPerUser connections with something
            // under way (asked once per client; dbus-daemon answers at once).
            let uid: UInt32
            do { uid = try bus.unixUser(of: sender) } catch {
                throw BusError(name: DaemonError.prefix + "ClientGone", message: "\(sender) left the bus before its call was served")
            }
            guard clientUsers.values.reduce(0, { $0 + ($1 == uid ? 1 : 0) }) < options.maxClientsPerUser else {
                throw DaemonError.tooManyClients(uid: uid, limit: options.maxClientsPerUser)
            }
            clientUsers[sender] = uid
        }
        guard clients.follow(message) else {
            clientUsers[sender] = nil
            throw BusError(name: DaemonError.prefix + "ClientGone", message: "\(sender) left the bus before its call was served")
        }
        var apps = clientApps[sender] ?? []
        guard apps.contains(app) || apps.count < Self.maximumAppsPerClient else {
            throw DaemonError.invalidArgument(
                "app_id", "this connection already spoke for \(Self.maximumAppsPerClient) app ids; use one connection per app")
        }
        apps.insert(app)
        clientApps[sender] = apps
    }

    // MARK: - Events from the engines and backends

    func playerEnded(_ record: PlayerRecord, reason: String) {
        statistics.ended[reason, default: 0] += 1
        if case .feedbackEvent(let id) = record.origin {
            if let event = feedback.events[id], event.playerID == record.id {
                event.playerID = nil
                feedbackPartEnded(event, reason: reason)
            }
            return
        }
        if case .vibrate = record.origin, feedback.vibrations[record.owner]?[record.appID] == record.id {
            feedback.vibrations[record.owner]?[record.appID] = nil
            if feedback.vibrations[record.owner]?.isEmpty == true { feedback.vibrations[record.owner] = nil }
        }
        emitEnded(record, reason: reason)
    }

    func devicesChanged(added: [OwnedDevice], removed: [OwnedDevice]) {
        for owned in removed {
            triggers.release(deviceID: owned.id)
            // Its players go with it (one that was playing has just been stopped by its engine).
            for record in players.records.values where record.deviceID == owned.id {
                record.released = true
                players.stop(record, reason: "device-lost")
            }
            emitSignal(HapticsServiceName.objectPath, HapticsServiceName.interface, "DeviceRemoved") { writer throws(BusError) in try writer.string(owned.id) }
        }
        for owned in added {
            emitSignal(HapticsServiceName.objectPath, HapticsServiceName.interface, "DeviceAdded") { writer throws(BusError) in
                try writer.string(owned.id)
                try writer.dictionary(details(owned))
            }
        }
        emitPropertiesChanged(["Devices", "DefaultDevice"])
    }

    func details(_ owned: OwnedDevice) -> [(key: String, value: BusValue)] {
        DeviceDetails.entries(owned, isDefault: devices.defaultDevice === owned, ownerPID: processID)
    }

    // MARK: - Policy

    func setGlobalPolicy(_ global: HapticPolicy) {
        policy.global = global
        devices.apply(global)
    }

    /// Re-applies `app`'s scale and mute to its players (its policy changed).
    func applyAppPolicy(_ app: String) {
        for record in players.records.values where record.appID == app { applyAppPolicy(to: record) }
    }

    /// Applies its app's scale and mute to `record`'s player.
    func applyAppPolicy(to record: PlayerRecord) {
        guard let player = record.player, let engine = record.engine else { return }
        engine.setIntensityScale(record.intensity * policy.appScale(app: record.appID), of: player)
        player.isMuted = record.clientMuted || !policy.isEnabled(app: record.appID)
    }

    // MARK: - Emitting

    func emitEnded(_ record: PlayerRecord, reason: String) {
        // Unicast: only the player's owner hears of it, so a busy service does not broadcast every end to every client.
        emitSignal(HapticsServiceName.objectPath, HapticsServiceName.interface, "Ended", to: record.owner) { writer throws(BusError) in
            try writer.objectPath(record.path)
            try writer.string(reason)
        }
    }

    func emitFeedbackEnded(_ id: UInt32, _ reason: FeedbackManager.EndReason) {
        emitSignal(FeedbackdServiceName.objectPath, FeedbackdServiceName.interface, "FeedbackEnded") { writer throws(BusError) in
            try writer.uint32(id)
            try writer.uint32(reason.wireValue)
        }
    }

    func emitSignal(
        _ path: String, _ interface: String, _ member: String, to destination: String? = nil, _ build: (BusWriter) throws(BusError) -> Void
    ) {
        do {
            let signal = try bus.signal(path: path, interface: interface, member: member, build)
            if let destination { try signal.setDestination(destination) }
            try signal.send()
        } catch {
            logger.warning("cannot emit \(member): \(error)")
        }
    }

    func emitPropertiesChanged(_ names: [String], path: String = HapticsServiceName.objectPath, interface: String = HapticsServiceName.interface) {
        do { try bus.emitPropertiesChanged(path: path, interface: interface, names: names) } catch {
            logger.warning("cannot emit PropertiesChanged(\(names.joined(separator: ", "))): \(error)")
        }
    }
}
