/// The one clock abstraction of swift-haptics: a source of ``HapticInstant``s that can also run
/// work at an absolute deadline.
///
/// The power model's timeouts, the engine's scheduler and every player run on a clock they are
/// given, so tests can use ``ManualClock`` and pin each time-driven rule exactly, while apps use
/// ``SystemClock`` (the monotonic clock and a scheduler thread). A clock is an object (its queue
/// of actions is shared by everyone it is given to), so a call through `any HapticClock` is a
/// plain method call on a reference, with no existential box to open.
public protocol HapticClock: AnyObject, Sendable {
    /// The current time.
    func now() -> HapticInstant

    /// Runs `action` once, at `deadline` or as soon after it as the clock can.
    ///
    /// A deadline in the past runs as soon as possible. Actions are run one at a time in
    /// deadline order (ties in the order they were scheduled); an action must not block.
    /// - Returns: a token for ``cancel(_:)``.
    @discardableResult
    func schedule(at deadline: HapticInstant, _ action: @escaping @Sendable () -> Void) -> ScheduledActionID

    /// Cancels a scheduled action that has not started; does nothing if it already ran.
    func cancel(_ id: ScheduledActionID)
}

/// Identifies an action scheduled on a ``HapticClock``.
public struct ScheduledActionID: Hashable, Sendable {
    /// The clock-assigned number, unique per clock.
    public let rawValue: UInt64

    /// Wraps a clock-assigned number.
    public init(rawValue: UInt64) { self.rawValue = rawValue }
}

/// Pending actions in deadline order; ties keep insertion order. Shared by the clocks.
struct DeadlineQueue: Sendable {
    struct Entry: Sendable {
        var deadline: HapticInstant
        var id: UInt64
        var action: @Sendable () -> Void
        /// Cancelled while in the heap: dropped when it reaches the top.
        var cancelled = false
    }

    private var heap: [Entry] = []
    private var nextID: UInt64 = 1

    var isEmpty: Bool { heap.isEmpty }
    var earliestDeadline: HapticInstant? { heap.first?.deadline }

    mutating func insert(_ deadline: HapticInstant, _ action: @escaping @Sendable () -> Void) -> ScheduledActionID {
        let id = nextID
        nextID += 1
        heap.append(Entry(deadline: deadline, id: id, action: action))
        siftUp(heap.count - 1)
        return ScheduledActionID(rawValue: id)
    }

    /// A clock's queue holds a few entries (an engine's next pass, a device's timeout), so a
    /// linear search costs less than keeping sets of ids (hashing on every insert).
    mutating func cancel(_ id: ScheduledActionID) {
        // Index loops here: a trigger can replace an engine's armed wake, and unlike the generic
        // algorithms they allocate nothing in an unoptimised build either.
        for index in heap.indices where heap[index].id == id.rawValue && !heap[index].cancelled {
            heap[index].cancelled = true
            // What the action holds is let go now, not when the entry reaches the top.
            heap[index].action = {}
            pruneCancelledHead()
            return
        }
    }

    /// Removes and returns the earliest entry if it is due at `now`.
    mutating func popDue(at now: HapticInstant) -> Entry? {
        pruneCancelledHead()
        guard let first = heap.first, first.deadline <= now else { return nil }
        return popFirst()
    }

    private mutating func pruneCancelledHead() {
        while !heap.isEmpty, heap[0].cancelled {
            _ = popFirst()
        }
    }

    private mutating func popFirst() -> Entry {
        let first = heap[0]
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            siftDown(0)
        }
        return first
    }

    private func ordered(_ a: Entry, _ b: Entry) -> Bool {
        a.deadline != b.deadline ? a.deadline < b.deadline : a.id < b.id
    }

    private mutating func siftUp(_ index: Int) {
        var child = index
        while child > 0 {
            let parent = (child - 1) / 2
            guard ordered(heap[child], heap[parent]) else { return }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ index: Int) {
        var parent = index
        while true {
            let left = 2 * parent + 1, right = left + 1
            var best = parent
            if left < heap.count, ordered(heap[left], heap[best]) { best = left }
            if right < heap.count, ordered(heap[right], heap[best]) { best = right }
            if best == parent { return }
            heap.swapAt(parent, best)
            parent = best
        }
    }
}
