import Haptics
import HapticsBus

/// The adaptive triggers clients set through `SetTriggers`: one client holds a device's triggers at
/// a time, from its first effect until both triggers are off again, it leaves the bus, the device
/// goes, or the service stops; each of those sets them free. Another client is refused
/// (`TriggersInUse`, naming the holder) meanwhile, so a game's resistance cannot be changed from
/// under it. Confined to the service's main thread.
struct TriggerHolds {
    /// One client's hold on one device's triggers.
    struct Hold {
        /// The bus name of the client.
        let owner: String
        /// The app id it gave.
        let app: String
        /// The triggers, engaged (holding the device awake).
        let triggers: AdaptiveTriggers
    }

    /// The holds, by device id.
    private(set) var holds: [String: Hold] = [:]

    /// Sets `right` and `left` (nil: left as they are) on `owned` for `owner`.
    ///
    /// - Throws: `TriggersInUse` (another client holds them), `InvalidArgument` (a device without
    ///   adaptive triggers), `InvalidValue` (an effect the device cannot play, naming the parameter
    ///   and its range: nothing changes), `DeviceFailed` (the device refused the report).
    mutating func set(
        owner: String, app: String, device owned: OwnedDevice, right: AdaptiveTriggerEffect?, left: AdaptiveTriggerEffect?
    ) throws(BusError) {
        guard let device = owned.device, owned.isUsable else {
            throw DaemonError.deviceUnavailable(owned.id, reason: owned.unavailableReason ?? "it was unplugged")
        }
        guard owned.description.hasAdaptiveTriggers else {
            throw DaemonError.invalidArgument("device", "'\(owned.id)' has no adaptive triggers (GetDevice's adaptive-triggers is false)")
        }
        if let held = holds[owned.id], held.owner != owner {
            throw DaemonError.triggersInUse(owned.id, holder: held.owner, app: held.app)
        }
        // Each side checked on its own, so the refusal names it.
        let held = holds[owned.id]
        var next = held?.triggers.engagement ?? TriggerEngagement()
        do throws(AdaptiveTriggerError) { next = try next.after(right: right, left: nil) } catch { throw DaemonError.invalidTrigger("right", error.inKeyedForm) }
        do throws(AdaptiveTriggerError) { next = try next.after(right: nil, left: left) } catch { throw DaemonError.invalidTrigger("left", error.inKeyedForm) }
        guard next.any else {
            // Both off: the hold ends, and its release sets them free (once).
            release(deviceID: owned.id)
            return
        }
        let hold: Hold
        if let held {
            hold = held
        } else {
            do throws(DeviceError) { hold = Hold(owner: owner, app: app, triggers: try AdaptiveTriggers(device: device)) } catch {
                throw DaemonError.deviceFailed(owned.id, "\(error)")
            }
        }
        do throws(DeviceError) { try hold.triggers.set(right: right, left: left) } catch {
            if held == nil { hold.triggers.release() }
            throw DaemonError.deviceFailed(owned.id, "\(error)")
        }
        holds[owned.id] = hold
    }

    /// Sets free every trigger `owner` holds (it left the bus); returns the devices.
    @discardableResult
    mutating func release(ownedBy owner: String) -> [String] {
        let ids = holds.filter { $0.value.owner == owner }.map(\.key).sorted()
        for id in ids { release(deviceID: id) }
        return ids
    }

    /// Sets free the triggers of `id` (the device went, or the service stops).
    mutating func release(deviceID id: String) {
        holds.removeValue(forKey: id)?.triggers.release()
    }

    /// Sets every trigger free.
    mutating func releaseAll() {
        for id in holds.keys.sorted() { release(deviceID: id) }
    }

    /// An effect from `SetTriggers`' `a{sv}` for `side` ("right" or "left"): empty leaves the
    /// trigger as it is; otherwise `effect` (s) names it and the keyed form's parameters follow,
    /// numbers as doubles (d), per-zone lists as arrays of doubles (ad).
    static func effect(_ entries: [(key: String, value: BusValue)], side: String) throws(BusError) -> AdaptiveTriggerEffect? {
        guard !entries.isEmpty else { return nil }
        var name: String?
        var parameters: [String: TriggerParameter] = [:]
        for (key, value) in entries {
            if key == "effect" {
                guard case .string(let text) = value.unwrapped else {
                    throw DaemonError.invalidArgument("\(side).effect", "expected the effect's name as a string (s), found '\(value.unwrapped.signature)'")
                }
                name = text
                continue
            }
            switch value.unwrapped {
            case .double(let number):
                parameters[key] = .number(number)
            case .array("d", let numbers):
                parameters[key] = .list(numbers.map { $0.doubleValue ?? .nan })
            default:
                throw DaemonError.invalidArgument(
                    "\(side).\(key)", "expected a number (d) or, for strengths and amplitudes, one per zone (ad); found '\(value.unwrapped.signature)'")
            }
        }
        guard let name else {
            throw DaemonError.invalidArgument(
                side, "no 'effect' (s); give one of \(AdaptiveTriggerEffect.keyedForms.map(\.name).joined(separator: ", ")), or an empty dictionary to leave the trigger")
        }
        do throws(AdaptiveTriggerError) {
            return try AdaptiveTriggerEffect(name: name, parameters: parameters)
        } catch {
            throw DaemonError.invalidTrigger(side, error)
        }
    }
}
