#if canImport(Glibc)
import Glibc
#endif
import CSystemd
import HapticsBus

// The C functions the interface tables (Sources/hapticsd-interfaces) name: one per interface for
// methods, one for every property read and one for every property write. Each finds the service
// through `userdata` and dispatches on the member; a thrown BusError becomes the error reply.

@_cdecl("hapticsd_manager_call")
public func hapticsdManagerCall(_ message: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ reply: UnsafeMutablePointer<sd_bus_error>?) -> Int32 {
    HapticsDaemon.handle(message, userdata, reply) { daemon, call throws(BusError) in try daemon.managerCall(call) }
}

@_cdecl("hapticsd_player_call")
public func hapticsdPlayerCall(_ message: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ reply: UnsafeMutablePointer<sd_bus_error>?) -> Int32 {
    HapticsDaemon.handle(message, userdata, reply) { daemon, call throws(BusError) in try daemon.playerCall(call) }
}

@_cdecl("hapticsd_feedback_call")
public func hapticsdFeedbackCall(_ message: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ reply: UnsafeMutablePointer<sd_bus_error>?) -> Int32 {
    HapticsDaemon.handle(message, userdata, reply) { daemon, call throws(BusError) in try daemon.feedbackCall(call) }
}

@_cdecl("hapticsd_get_property")
public func hapticsdGetProperty(
    _ bus: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ interface: UnsafePointer<CChar>?, _ property: UnsafePointer<CChar>?,
    _ reply: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: UnsafeMutablePointer<sd_bus_error>?
) -> Int32 {
    guard let path, let interface, let property, let reply, let userdata else { return -EINVAL }
    let daemon = Unmanaged<HapticsDaemon>.fromOpaque(userdata).takeUnretainedValue()
    do {
        try daemon.getProperty(path: String(cString: path), interface: String(cString: interface), name: String(cString: property), into: BusWriter(reply))
        return 1
    } catch let failure {
        return sd_bus_error_set(error, failure.name, failure.message)
    }
}

@_cdecl("hapticsd_set_property")
public func hapticsdSetProperty(
    _ bus: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ interface: UnsafePointer<CChar>?, _ property: UnsafePointer<CChar>?,
    _ value: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: UnsafeMutablePointer<sd_bus_error>?
) -> Int32 {
    guard let bus, let path, let interface, let property, let value, let userdata else { return -EINVAL }
    let daemon = Unmanaged<HapticsDaemon>.fromOpaque(userdata).takeUnretainedValue()
    let sender = sd_bus_get_current_message(bus).flatMap { sd_bus_message_get_sender($0) }.map { String(cString: $0) }
    do {
        try daemon.setProperty(
            path: String(cString: path), interface: String(cString: interface), name: String(cString: property), from: BusReader(value), sender: sender)
        return 1
    } catch let failure {
        return sd_bus_error_set(error, failure.name, failure.message)
    }
}

extension HapticsDaemon {
    /// Runs a method handler: 1 when it replied, else the error reply's negative errno.
    static func handle(
        _ message: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ reply: UnsafeMutablePointer<sd_bus_error>?,
        _ body: (HapticsDaemon, BusMessage) throws(BusError) -> Void
    ) -> Int32 {
        guard let message, let userdata else { return -EINVAL }
        let daemon = Unmanaged<HapticsDaemon>.fromOpaque(userdata).takeUnretainedValue()
        do {
            try body(daemon, BusMessage(retaining: message))
            return 1
        } catch let failure {
            return sd_bus_error_set(reply, failure.name, failure.message)
        }
    }

    /// Sends the reply to `call`, its results appended by `build`.
    func reply(_ call: BusMessage, _ build: (BusWriter) throws(BusError) -> Void = { _ in }) throws(BusError) {
        try BusMessage.methodReturn(to: call.pointer, build).send()
    }
}
