#if canImport(Glibc)
import Glibc
#endif
import CSystemd

/// The Swift end of the callbacks an sd-bus interface table names: each method, property read and
/// property write of a table has its own handler, a C function exported from Swift (`@_cdecl`)
/// whose body is one call to one of these. They find the object the table was registered with
/// (`userdata`, an unretained `Target`), run the handler, and turn a thrown ``BusError`` into the
/// error reply. The C pointers are opaque here, so a service's handlers need no sd-bus import.
public enum BusHandler {
    /// Runs a method handler: 1 when it replied, else the error reply's negative errno.
    ///
    /// - Parameters:
    ///   - message: The call (`sd_bus_message *`).
    ///   - userdata: The object the table was registered with.
    ///   - error: sd-bus's error to fill (`sd_bus_error *`).
    ///   - body: The handler; it sends its reply itself.
    public static func method<Target: AnyObject>(
        _ message: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?,
        _ body: (Target, BusMessage) throws(BusError) -> Void
    ) -> Int32 {
        guard let message, let userdata else { return -EINVAL }
        let target = Unmanaged<Target>.fromOpaque(userdata).takeUnretainedValue()
        do {
            try body(target, BusMessage(retaining: message))
            return 1
        } catch let failure {
            return fail(error, failure)
        }
    }

    /// Runs a property read: 1 when it wrote the value, else the error's negative errno.
    ///
    /// - Parameters:
    ///   - path: The object's path.
    ///   - reply: The message to append the value to (`sd_bus_message *`).
    ///   - userdata: The object the table was registered with.
    ///   - error: sd-bus's error to fill.
    ///   - body: Appends the value, given the object and the path.
    public static func getter<Target: AnyObject>(
        _ path: UnsafePointer<CChar>?, _ reply: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ error: OpaquePointer?,
        _ body: (Target, String, BusWriter) throws(BusError) -> Void
    ) -> Int32 {
        guard let path, let reply, let userdata else { return -EINVAL }
        let target = Unmanaged<Target>.fromOpaque(userdata).takeUnretainedValue()
        do {
            try body(target, String(cString: path), BusWriter(reply))
            return 1
        } catch let failure {
            return fail(error, failure)
        }
    }

    /// Runs a property write: 1 when it took the value, else the error's negative errno.
    ///
    /// - Parameters:
    ///   - bus: The connection (`sd_bus *`), for the sender of the `Set` call.
    ///   - path: The object's path.
    ///   - value: The message to read the value from (`sd_bus_message *`).
    ///   - userdata: The object the table was registered with.
    ///   - error: sd-bus's error to fill.
    ///   - body: Takes the value, given the object, the path, a reader and the caller's unique name.
    public static func setter<Target: AnyObject>(
        _ bus: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ value: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?,
        _ error: OpaquePointer?, _ body: (Target, String, BusReader, String?) throws(BusError) -> Void
    ) -> Int32 {
        guard let bus, let path, let value, let userdata else { return -EINVAL }
        let target = Unmanaged<Target>.fromOpaque(userdata).takeUnretainedValue()
        let sender = sd_bus_get_current_message(bus).flatMap { sd_bus_message_get_sender($0) }.map { String(cString: $0) }
        do {
            try body(target, String(cString: path), BusReader(value), sender)
            return 1
        } catch let failure {
            return fail(error, failure)
        }
    }

    /// Fills `error` with `failure`: its negative errno.
    static func fail(_ error: OpaquePointer?, _ failure: BusError) -> Int32 {
        sd_bus_error_set(UnsafeMutablePointer<sd_bus_error>(error), failure.name, failure.message)
    }
}
