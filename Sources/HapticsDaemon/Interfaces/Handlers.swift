import Haptics
import HapticsBus

// The handlers the interface tables name (Sources/hapticsd-interfaces/hapticsd_interfaces.c), one
// per method, property read and property write, in the tables' order: the service's API as a
// table of contents. A table entry without its function here fails the link; each body is one
// binding to the code that does the work (ManagerInterface, PlayerInterface, FeedbackInterface,
// Properties). The pointers are sd-bus's, opaque here (BusHandler reads them).

/// A method of any interface, on the service.
private func method(
    _ message: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?, _ body: (HapticsDaemon, BusMessage) throws(BusError) -> Void
) -> Int32 {
    BusHandler.method(message, userdata, error, body)
}

/// A method of a player: the caller's player at the call's path; replied to once `body` is done.
private func playerMethod(
    _ message: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?,
    _ body: (HapticsDaemon, HapticsDaemon.PlayerCall) throws(BusError) -> Void
) -> Int32 {
    BusHandler.method(message, userdata, error) { (daemon: HapticsDaemon, call) throws(BusError) in
        try daemon.onPlayer(call) { player throws(BusError) in try body(daemon, player) }
    }
}

/// A property read of the service's.
private func getter(
    _ path: UnsafePointer<CChar>?, _ reply: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?,
    _ body: (HapticsDaemon, BusWriter) throws(BusError) -> Void
) -> Int32 {
    BusHandler.getter(path, reply, userdata, error) { (daemon: HapticsDaemon, _, writer) throws(BusError) in try body(daemon, writer) }
}

/// A property read of a player's (anyone may read them).
private func playerGetter(
    _ path: UnsafePointer<CChar>?, _ reply: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?,
    _ body: (HapticsDaemon, PlayerRecord, BusWriter) throws(BusError) -> Void
) -> Int32 {
    BusHandler.getter(path, reply, userdata, error) { (daemon: HapticsDaemon, path, writer) throws(BusError) in
        try body(daemon, daemon.players.record(at: path), writer)
    }
}

/// A write of one of the service's settings, authorized and then announced as `name`.
private func setting(
    _ name: String, _ bus: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ value: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?,
    _ error: OpaquePointer?, _ body: (HapticsDaemon, BusReader) throws(BusError) -> Void
) -> Int32 {
    BusHandler.setter(bus, path, value, userdata, error) { (daemon: HapticsDaemon, _, reader, sender) throws(BusError) in
        try daemon.setSetting(name, sender: sender) { () throws(BusError) in try body(daemon, reader) }
    }
}

/// A write of a player's property, by its owner only.
private func playerSetter(
    _ bus: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ value: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?,
    _ body: (HapticsDaemon, PlayerRecord, any HapticAdvancedPatternPlayer, HapticEngine, BusReader) throws(BusError) -> Void
) -> Int32 {
    BusHandler.setter(bus, path, value, userdata, error) { (daemon: HapticsDaemon, path, reader, sender) throws(BusError) in
        try daemon.setPlayerProperty(path: path, sender: sender) { record, player, engine throws(BusError) in
            try body(daemon, record, player, engine, reader)
        }
    }
}

// MARK: org.swifthaptics.Haptics1 — properties

@_cdecl("hapticsd_manager_get_version")
public func managerGetVersion(_ bus: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ interface: UnsafePointer<CChar>?, _ property: UnsafePointer<CChar>?, _ reply: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?) -> Int32 {
    getter(path, reply, userdata, error) { _, writer throws(BusError) in try writer.string(HapticsDaemon.version) }
}

@_cdecl("hapticsd_manager_get_enabled")
public func managerGetEnabled(_ bus: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ interface: UnsafePointer<CChar>?, _ property: UnsafePointer<CChar>?, _ reply: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?) -> Int32 {
    getter(path, reply, userdata, error) { daemon, writer throws(BusError) in try writer.bool(daemon.policy.global.isEnabled) }
}

@_cdecl("hapticsd_manager_set_enabled")
public func managerSetEnabled(_ bus: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ interface: UnsafePointer<CChar>?, _ property: UnsafePointer<CChar>?, _ value: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?) -> Int32 {
    setting("Enabled", bus, path, value, userdata, error) { daemon, reader throws(BusError) in try daemon.setEnabled(reader) }
}

@_cdecl("hapticsd_manager_get_intensity_scale")
public func managerGetIntensityScale(_ bus: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ interface: UnsafePointer<CChar>?, _ property: UnsafePointer<CChar>?, _ reply: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?) -> Int32 {
    getter(path, reply, userdata, error) { daemon, writer throws(BusError) in try writer.double(daemon.policy.global.intensityScale) }
}

@_cdecl("hapticsd_manager_set_intensity_scale")
public func managerSetIntensityScale(_ bus: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ interface: UnsafePointer<CChar>?, _ property: UnsafePointer<CChar>?, _ value: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?) -> Int32 {
    setting("IntensityScale", bus, path, value, userdata, error) { daemon, reader throws(BusError) in try daemon.setIntensityScale(reader) }
}

@_cdecl("hapticsd_manager_get_minimum_intervals")
public func managerGetMinimumIntervals(_ bus: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ interface: UnsafePointer<CChar>?, _ property: UnsafePointer<CChar>?, _ reply: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?) -> Int32 {
    getter(path, reply, userdata, error) { daemon, writer throws(BusError) in try writer.append(daemon.minimumIntervalsValue()) }
}

@_cdecl("hapticsd_manager_set_minimum_intervals")
public func managerSetMinimumIntervals(_ bus: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ interface: UnsafePointer<CChar>?, _ property: UnsafePointer<CChar>?, _ value: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?) -> Int32 {
    setting("MinimumIntervals", bus, path, value, userdata, error) { daemon, reader throws(BusError) in try daemon.setMinimumIntervals(reader) }
}

@_cdecl("hapticsd_manager_get_default_device")
public func managerGetDefaultDevice(_ bus: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ interface: UnsafePointer<CChar>?, _ property: UnsafePointer<CChar>?, _ reply: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?) -> Int32 {
    getter(path, reply, userdata, error) { daemon, writer throws(BusError) in try writer.string(daemon.devices.defaultDevice?.id ?? "") }
}

@_cdecl("hapticsd_manager_set_default_device")
public func managerSetDefaultDevice(_ bus: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ interface: UnsafePointer<CChar>?, _ property: UnsafePointer<CChar>?, _ value: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?) -> Int32 {
    setting("DefaultDevice", bus, path, value, userdata, error) { daemon, reader throws(BusError) in try daemon.setDefaultDevice(reader) }
}

@_cdecl("hapticsd_manager_get_devices")
public func managerGetDevices(_ bus: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ interface: UnsafePointer<CChar>?, _ property: UnsafePointer<CChar>?, _ reply: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?) -> Int32 {
    getter(path, reply, userdata, error) { daemon, writer throws(BusError) in try writer.append(.strings(daemon.devices.devices.map(\.id))) }
}

@_cdecl("hapticsd_manager_get_app_policies")
public func managerGetAppPolicies(_ bus: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ interface: UnsafePointer<CChar>?, _ property: UnsafePointer<CChar>?, _ reply: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?) -> Int32 {
    getter(path, reply, userdata, error) { daemon, writer throws(BusError) in try daemon.writeAppPolicies(writer) }
}

// MARK: org.swifthaptics.Haptics1 — methods

@_cdecl("hapticsd_manager_list_devices")
public func managerListDevices(_ message: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?) -> Int32 {
    method(message, userdata, error) { daemon, call throws(BusError) in try daemon.listDevices(call) }
}

@_cdecl("hapticsd_manager_get_device")
public func managerGetDevice(_ message: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?) -> Int32 {
    method(message, userdata, error) { daemon, call throws(BusError) in try daemon.getDevice(call) }
}

@_cdecl("hapticsd_manager_list_effects")
public func managerListEffects(_ message: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?) -> Int32 {
    method(message, userdata, error) { daemon, call throws(BusError) in try daemon.listEffects(call) }
}

@_cdecl("hapticsd_manager_get_capabilities")
public func managerGetCapabilities(_ message: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?) -> Int32 {
    method(message, userdata, error) { daemon, call throws(BusError) in try daemon.getCapabilities(call) }
}

@_cdecl("hapticsd_manager_prepare")
public func managerPrepare(_ message: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?) -> Int32 {
    method(message, userdata, error) { daemon, call throws(BusError) in try daemon.prepare(call) }
}

@_cdecl("hapticsd_manager_play_effect")
public func managerPlayEffect(_ message: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?) -> Int32 {
    method(message, userdata, error) { daemon, call throws(BusError) in try daemon.counted { () throws(BusError) in try daemon.playEffect(call) } }
}

@_cdecl("hapticsd_manager_play_pattern")
public func managerPlayPattern(_ message: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?) -> Int32 {
    method(message, userdata, error) { daemon, call throws(BusError) in try daemon.counted { () throws(BusError) in try daemon.playPattern(call) } }
}

@_cdecl("hapticsd_manager_create_player")
public func managerCreatePlayer(_ message: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?) -> Int32 {
    method(message, userdata, error) { daemon, call throws(BusError) in try daemon.counted { () throws(BusError) in try daemon.createPlayer(call) } }
}

@_cdecl("hapticsd_manager_stop_all")
public func managerStopAll(_ message: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?) -> Int32 {
    method(message, userdata, error) { daemon, call throws(BusError) in try daemon.stopAll(call) }
}

@_cdecl("hapticsd_manager_register_audio")
public func managerRegisterAudio(_ message: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?) -> Int32 {
    method(message, userdata, error) { daemon, call throws(BusError) in try daemon.registerAudio(call) }
}

@_cdecl("hapticsd_manager_unregister_audio")
public func managerUnregisterAudio(_ message: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?) -> Int32 {
    method(message, userdata, error) { daemon, call throws(BusError) in try daemon.unregisterAudio(call) }
}

@_cdecl("hapticsd_manager_listen")
public func managerListen(_ message: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?) -> Int32 {
    method(message, userdata, error) { daemon, call throws(BusError) in try daemon.listen(call) }
}

@_cdecl("hapticsd_manager_stop_listening")
public func managerStopListening(_ message: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?) -> Int32 {
    method(message, userdata, error) { daemon, call throws(BusError) in try daemon.stopListening(call) }
}

@_cdecl("hapticsd_manager_set_triggers")
public func managerSetTriggers(_ message: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?) -> Int32 {
    method(message, userdata, error) { daemon, call throws(BusError) in try daemon.setTriggers(call) }
}

@_cdecl("hapticsd_manager_set_app_policy")
public func managerSetAppPolicy(_ message: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?) -> Int32 {
    method(message, userdata, error) { daemon, call throws(BusError) in try daemon.setAppPolicy(call) }
}

@_cdecl("hapticsd_manager_get_app_policy")
public func managerGetAppPolicy(_ message: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?) -> Int32 {
    method(message, userdata, error) { daemon, call throws(BusError) in try daemon.getAppPolicy(call) }
}

@_cdecl("hapticsd_manager_get_statistics")
public func managerGetStatistics(_ message: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?) -> Int32 {
    method(message, userdata, error) { daemon, call throws(BusError) in try daemon.getStatistics(call) }
}

// MARK: org.swifthaptics.Haptics1.Player — properties

@_cdecl("hapticsd_player_get_device")
public func playerGetDevice(_ bus: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ interface: UnsafePointer<CChar>?, _ property: UnsafePointer<CChar>?, _ reply: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?) -> Int32 {
    playerGetter(path, reply, userdata, error) { _, record, writer throws(BusError) in try writer.string(record.deviceID) }
}

@_cdecl("hapticsd_player_get_app_id")
public func playerGetAppID(_ bus: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ interface: UnsafePointer<CChar>?, _ property: UnsafePointer<CChar>?, _ reply: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?) -> Int32 {
    playerGetter(path, reply, userdata, error) { _, record, writer throws(BusError) in try writer.string(record.appID) }
}

@_cdecl("hapticsd_player_get_one_shot")
public func playerGetOneShot(_ bus: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ interface: UnsafePointer<CChar>?, _ property: UnsafePointer<CChar>?, _ reply: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?) -> Int32 {
    playerGetter(path, reply, userdata, error) { _, record, writer throws(BusError) in try writer.bool(record.oneShot) }
}

@_cdecl("hapticsd_player_get_duration")
public func playerGetDuration(_ bus: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ interface: UnsafePointer<CChar>?, _ property: UnsafePointer<CChar>?, _ reply: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?) -> Int32 {
    playerGetter(path, reply, userdata, error) { _, record, writer throws(BusError) in try writer.double(record.duration) }
}

@_cdecl("hapticsd_player_get_state")
public func playerGetState(_ bus: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ interface: UnsafePointer<CChar>?, _ property: UnsafePointer<CChar>?, _ reply: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?) -> Int32 {
    playerGetter(path, reply, userdata, error) { daemon, record, writer throws(BusError) in try writer.string(daemon.playerState(record)) }
}

@_cdecl("hapticsd_player_get_position")
public func playerGetPosition(_ bus: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ interface: UnsafePointer<CChar>?, _ property: UnsafePointer<CChar>?, _ reply: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?) -> Int32 {
    playerGetter(path, reply, userdata, error) { _, record, writer throws(BusError) in try writer.double(record.player?.currentTime ?? 0) }
}

@_cdecl("hapticsd_player_get_loop")
public func playerGetLoop(_ bus: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ interface: UnsafePointer<CChar>?, _ property: UnsafePointer<CChar>?, _ reply: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?) -> Int32 {
    playerGetter(path, reply, userdata, error) { _, record, writer throws(BusError) in try writer.bool(record.player?.loopEnabled ?? false) }
}

@_cdecl("hapticsd_player_set_loop")
public func playerSetLoop(_ bus: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ interface: UnsafePointer<CChar>?, _ property: UnsafePointer<CChar>?, _ value: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?) -> Int32 {
    playerSetter(bus, path, value, userdata, error) { _, _, player, _, reader throws(BusError) in player.loopEnabled = try reader.bool() }
}

@_cdecl("hapticsd_player_get_loop_end")
public func playerGetLoopEnd(_ bus: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ interface: UnsafePointer<CChar>?, _ property: UnsafePointer<CChar>?, _ reply: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?) -> Int32 {
    playerGetter(path, reply, userdata, error) { _, record, writer throws(BusError) in try writer.double(record.player?.loopEnd ?? 0) }
}

@_cdecl("hapticsd_player_set_loop_end")
public func playerSetLoopEnd(_ bus: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ interface: UnsafePointer<CChar>?, _ property: UnsafePointer<CChar>?, _ value: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?) -> Int32 {
    playerSetter(bus, path, value, userdata, error) { _, _, player, _, reader throws(BusError) in
        player.loopEnd = try Validation.number(reader.double(), "LoopEnd", in: 0...3600)
    }
}

@_cdecl("hapticsd_player_get_rate")
public func playerGetRate(_ bus: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ interface: UnsafePointer<CChar>?, _ property: UnsafePointer<CChar>?, _ reply: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?) -> Int32 {
    playerGetter(path, reply, userdata, error) { _, record, writer throws(BusError) in try writer.double(record.player?.playbackRate ?? 1) }
}

@_cdecl("hapticsd_player_set_rate")
public func playerSetRate(_ bus: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ interface: UnsafePointer<CChar>?, _ property: UnsafePointer<CChar>?, _ value: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?) -> Int32 {
    playerSetter(bus, path, value, userdata, error) { _, _, player, _, reader throws(BusError) in
        player.playbackRate = try Validation.number(reader.double(), "Rate", in: 0.01...100)
    }
}

@_cdecl("hapticsd_player_get_muted")
public func playerGetMuted(_ bus: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ interface: UnsafePointer<CChar>?, _ property: UnsafePointer<CChar>?, _ reply: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?) -> Int32 {
    playerGetter(path, reply, userdata, error) { _, record, writer throws(BusError) in try writer.bool(record.clientMuted) }
}

@_cdecl("hapticsd_player_set_muted")
public func playerSetMuted(_ bus: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ interface: UnsafePointer<CChar>?, _ property: UnsafePointer<CChar>?, _ value: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?) -> Int32 {
    playerSetter(bus, path, value, userdata, error) { daemon, record, player, _, reader throws(BusError) in
        record.clientMuted = try reader.bool()
        player.isMuted = record.clientMuted || !daemon.policy.isEnabled(app: record.appID)
    }
}

@_cdecl("hapticsd_player_get_intensity")
public func playerGetIntensity(_ bus: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ interface: UnsafePointer<CChar>?, _ property: UnsafePointer<CChar>?, _ reply: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?) -> Int32 {
    playerGetter(path, reply, userdata, error) { _, record, writer throws(BusError) in try writer.double(record.intensity) }
}

@_cdecl("hapticsd_player_set_intensity")
public func playerSetIntensity(_ bus: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ interface: UnsafePointer<CChar>?, _ property: UnsafePointer<CChar>?, _ value: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?) -> Int32 {
    playerSetter(bus, path, value, userdata, error) { daemon, record, player, engine, reader throws(BusError) in
        record.intensity = try Validation.number(reader.double(), "Intensity", in: 0...1)
        engine.setIntensityScale(record.intensity * daemon.policy.appScale(app: record.appID), of: player)
    }
}

// MARK: org.swifthaptics.Haptics1.Player — methods

@_cdecl("hapticsd_player_start")
public func playerStart(_ message: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?) -> Int32 {
    playerMethod(message, userdata, error) { daemon, call throws(BusError) in try daemon.startPlayer(call) }
}

@_cdecl("hapticsd_player_stop")
public func playerStop(_ message: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?) -> Int32 {
    playerMethod(message, userdata, error) { daemon, call throws(BusError) in try daemon.stopPlayer(call) }
}

@_cdecl("hapticsd_player_pause")
public func playerPause(_ message: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?) -> Int32 {
    playerMethod(message, userdata, error) { daemon, call throws(BusError) in try daemon.pausePlayer(call) }
}

@_cdecl("hapticsd_player_resume")
public func playerResume(_ message: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?) -> Int32 {
    playerMethod(message, userdata, error) { daemon, call throws(BusError) in try daemon.resumePlayer(call) }
}

@_cdecl("hapticsd_player_seek")
public func playerSeek(_ message: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?) -> Int32 {
    playerMethod(message, userdata, error) { daemon, call throws(BusError) in try daemon.seekPlayer(call) }
}

@_cdecl("hapticsd_player_send_parameters")
public func playerSendParameters(_ message: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?) -> Int32 {
    playerMethod(message, userdata, error) { daemon, call throws(BusError) in try daemon.sendParameters(call) }
}

@_cdecl("hapticsd_player_schedule_parameter_curve")
public func playerScheduleParameterCurve(_ message: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?) -> Int32 {
    playerMethod(message, userdata, error) { daemon, call throws(BusError) in try daemon.scheduleParameterCurve(call) }
}

@_cdecl("hapticsd_player_cancel")
public func playerCancel(_ message: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?) -> Int32 {
    playerMethod(message, userdata, error) { daemon, call throws(BusError) in daemon.players.stop(call.record, reason: "stopped") }
}

@_cdecl("hapticsd_player_release")
public func playerRelease(_ message: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?) -> Int32 {
    playerMethod(message, userdata, error) { daemon, call throws(BusError) in daemon.players.release(call.record) }
}

// MARK: org.sigxcpu.Feedback and org.sigxcpu.Feedback.Haptic

@_cdecl("hapticsd_feedback_get_profile")
public func feedbackGetProfile(_ bus: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ interface: UnsafePointer<CChar>?, _ property: UnsafePointer<CChar>?, _ reply: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?) -> Int32 {
    getter(path, reply, userdata, error) { daemon, writer throws(BusError) in try writer.string(daemon.policy.profile.name) }
}

@_cdecl("hapticsd_feedback_set_profile")
public func feedbackSetProfile(_ bus: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ interface: UnsafePointer<CChar>?, _ property: UnsafePointer<CChar>?, _ value: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?) -> Int32 {
    BusHandler.setter(bus, path, value, userdata, error) { (daemon: HapticsDaemon, _, reader, sender) throws(BusError) in
        try daemon.setProfile(reader, sender: sender)
    }
}

@_cdecl("hapticsd_feedback_trigger_feedback")
public func feedbackTriggerFeedback(_ message: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?) -> Int32 {
    method(message, userdata, error) { daemon, call throws(BusError) in try daemon.feedbackdCounted { () throws(BusError) in try daemon.triggerFeedback(call) } }
}

@_cdecl("hapticsd_feedback_end_feedback")
public func feedbackEndFeedback(_ message: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?) -> Int32 {
    method(message, userdata, error) { daemon, call throws(BusError) in try daemon.endFeedback(call) }
}

@_cdecl("hapticsd_feedback_haptic_vibrate")
public func feedbackHapticVibrate(_ message: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?) -> Int32 {
    method(message, userdata, error) { daemon, call throws(BusError) in try daemon.feedbackdCounted { () throws(BusError) in try daemon.vibrate(call) } }
}

extension HapticsDaemon {
    /// Sends the reply to `call`, its results appended by `build`.
    func reply(_ call: BusMessage, _ build: (BusWriter) throws(BusError) -> Void = { _ in }) throws(BusError) {
        try BusMessage.methodReturn(to: call.pointer, build).send()
    }
}
