import Foundation
import Haptics
import Synchronization
import Testing
import VMRig

extension GuestKernelTests.Evdev {
    /// Guest side: the evdev backend (loaded through dlopen) against uinput devices whose driver is the
    /// test: what it lists, and the exact force-feedback traffic a pattern produces (uploads with
    /// their type, magnitudes, period and length; updates in place; plays and stops), the refresh of a
    /// held drive, a dropped effect created again, a driver slow to answer, and gain left alone.
    /// uinput needs no HID driver: this runs in the `hid.ignore_special_drivers=1` boot only (see
    /// ``GuestKernelTests/Evdev``).
    @Suite(.enabled(if: VMRig.ignoresSpecialHIDDrivers, "runs in the ignore_special_drivers boot only"))
    struct EvdevUInput {
        /// A tap, then a continuous event whose intensity and sharpness change: several distinct frames.
        static func pattern() throws -> HapticPattern {
            try HapticPattern(events: [
                HapticEvent(
                    eventType: .hapticTransient,
                    parameters: [.init(parameterID: .hapticIntensity, value: 1), .init(parameterID: .hapticSharpness, value: 0.2)],
                    relativeTime: 0),
                HapticEvent(
                    eventType: .hapticContinuous,
                    parameters: [.init(parameterID: .hapticIntensity, value: 0.6), .init(parameterID: .hapticSharpness, value: 0.9)],
                    relativeTime: 0.09, duration: 0.12),
                HapticEvent(
                    eventType: .hapticContinuous,
                    parameters: [.init(parameterID: .hapticIntensity, value: 0.3), .init(parameterID: .hapticSharpness, value: 0.1)],
                    relativeTime: 0.24, duration: 0.08),
            ])
        }

        /// Plays `pattern` on `id` through the engine and returns the frames the backend was given.
        static func play(_ backend: Backend, id: String, pattern: HapticPattern) throws -> [DriveFrame] {
            let tracer = TracingActuator(try backend.open(deviceID: id))
            let device = HapticDevice(actuator: tracer)
            let engine = try HapticEngine(devices: [device], profileStore: nil, policy: HapticPolicy())
            let player = try engine.makeAdvancedPlayer(with: pattern)
            let finished = Mutex(false)
            player.completionHandler = { _ in finished.withLock { $0 = true } }
            try player.start(atTime: 0)
            try HIDGuest.block(for: "the pattern to finish on \(id)", timeout: 10) { finished.withLock { $0 } }
            engine.stop()
            device.close()
            return tracer.frames
        }

        @Test("a rumble pad: described, a pattern's exact uploads (in place) and plays, stopped and erased at sleep, gain never written and the user's left alone")
        func rumblePad() async throws {
            try await HIDGuest.onThread {
                let (pad, node) = try EvdevGuest.plug(.gamepad(name: "swift-haptics uinput pad"))
                defer { try? pad.destroy() }
                // The user's gain setting, made before swift-haptics opens the device.
                try UInputDevice.setGain(node: node, 0x4000)
                try pad.waitForRecords("the user's gain") { $0.contains { $0.event == .gain(0x4000) } }
                let system = EvdevGuest.system()
                let id = EvdevGuest.expectedID(pad)
                let description = try EvdevGuest.description(system, id: id)
                #expect(description.backend == "evdev")
                #expect(description.actuator == .dualRumble)
                #expect(description.channels.map(\.name) == ["strong", "weak"])
                #expect(description.channels.map(\.amplitudeSteps) == [65536, 65536])
                #expect(description.channels.map(\.nominalFrequency) == [55, 160])
                #expect(description.channels.allSatisfy { $0.frequencyRange == nil })
                #expect(description.physicalID == nil, "a uinput device hangs off no device another backend reaches")
                #expect(description.preference == 100)
                #expect(description.isAvailable)
                #expect(abs(description.minimumUpdateInterval - 0.010) < 1e-9)
                #expect(description.name == "swift-haptics uinput pad")
                #expect(pad.records.filter { if case .upload = $0.event { true } else { false } }.isEmpty, "listing uploaded something")

                let start = HIDGuest.now()
                let frames = try Self.play(try EvdevGuest.backend(system), id: id, pattern: try Self.pattern())
                #expect(frames.count >= 4, "the engine submitted \(frames.count) frames")
                #expect(frames.last?.isSilent == true)
                try EvdevGuest.waitForErase(pad, since: start)
                let observed = EvdevGuest.observed(pad, since: start)
                guard case .create(let resting)? = observed.first else {
                    Issue.record("the first thing the device saw was not the creation of the resting effect: \(observed)")
                    return
                }
                #expect(resting == EvdevGuest.rumbleEffect(id: resting.id, strong: 0, weak: 0), "resting effect \(resting)")
                let expected = EvdevGuest.expectedTraffic(frames: frames, id: resting.id, resting: resting) { frame in
                    let strong = EvdevGuest.magnitude16(frame.channels[0].amplitude), weak = EvdevGuest.magnitude16(frame.channels[1].amplitude)
                    return strong == 0 && weak == 0 ? nil : EvdevGuest.rumbleEffect(id: resting.id, strong: strong, weak: weak)
                }
                let body = Array(observed.dropFirst().dropLast())
                #expect(body == expected, "observed:\n\(body.map(\.description).joined(separator: "\n"))\nexpected:\n\(expected.map(\.description).joined(separator: "\n"))")
                #expect(observed.last == .erase(Int(resting.id)), "sleep erases the effect: \(observed.suffix(3))")
                let updates = observed.filter { if case .update = $0 { true } else { false } }
                #expect(updates.count >= 2, "the pattern's changes were updates in place: \(observed)")
                #expect(observed.filter { if case .create = $0 { true } else { false } }.count == 1, "one effect was created, never re-created per frame")
                // Gain: the user's, seen once (before we opened), never written by the backend.
                #expect(pad.records.compactMap { if case .gain(let value) = $0.event { value } else { nil } } == [0x4000])
                print("evdev: uinput pad: \(frames.count) frames -> \(updates.count) updates in place, \(observed.filter { $0 == .play(Int(resting.id)) }.count) plays")
            }
        }

        @Test("a vibrator with FF_RUMBLE only: one channel on the strong magnitude")
        func rumbleOnlyVibrator() async throws {
            try await HIDGuest.onThread {
                let (device, _) = try EvdevGuest.plug(.vibrator(name: "swift-haptics uinput rumble vibrator", ffBits: [EvdevGuest.rumble]))
                defer { try? device.destroy() }
                let system = EvdevGuest.system()
                let id = EvdevGuest.expectedID(device)
                let description = try EvdevGuest.description(system, id: id)
                #expect(description.channels.map(\.name) == ["main"])
                #expect(description.channels[0].frequencyRange == nil)
                let start = HIDGuest.now()
                let frames = try Self.play(try EvdevGuest.backend(system), id: id, pattern: try Self.pattern())
                try EvdevGuest.waitForErase(device, since: start)
                let observed = EvdevGuest.observed(device, since: start)
                guard case .create(let resting)? = observed.first else {
                    Issue.record("no resting effect: \(observed)")
                    return
                }
                let expected = EvdevGuest.expectedTraffic(frames: frames, id: resting.id, resting: resting) { frame in
                    let strong = EvdevGuest.magnitude16(frame.channels[0].amplitude)
                    return strong == 0 ? nil : EvdevGuest.rumbleEffect(id: resting.id, strong: strong, weak: 0)
                }
                #expect(Array(observed.dropFirst().dropLast()) == expected, "observed \(observed)\nexpected \(expected)")
            }
        }

        @Test("a periodic-capable vibrator: FF_PERIODIC sine, the frame's frequency as a whole-millisecond period, described with its range")
        func periodicVibrator() async throws {
            try await HIDGuest.onThread {
                let (device, _) = try EvdevGuest.plug(.vibrator(name: "swift-haptics uinput LRA", ffBits: [EvdevGuest.periodic, EvdevGuest.sine, EvdevGuest.gain]))
                defer { try? device.destroy() }
                let system = EvdevGuest.system()
                let id = EvdevGuest.expectedID(device)
                let description = try EvdevGuest.description(system, id: id)
                #expect(description.channels.map(\.name) == ["main"])
                #expect(description.channels[0].frequencyRange == 40...500)
                #expect(description.channels[0].amplitudeSteps == 32768)
                let start = HIDGuest.now()
                let frames = try Self.play(try EvdevGuest.backend(system), id: id, pattern: try Self.pattern())
                #expect(Set(frames.filter { !$0.isSilent }.map { $0.channels[0].frequency }).count >= 2, "sharpness became frequency: \(frames)")
                try EvdevGuest.waitForErase(device, since: start)
                let observed = EvdevGuest.observed(device, since: start)
                guard case .create(let resting)? = observed.first else {
                    Issue.record("no resting effect: \(observed)")
                    return
                }
                #expect(resting == EvdevGuest.ExpectedEffect(type: EvdevGuest.periodic, id: resting.id, waveform: EvdevGuest.sine, period: 6))
                let expected = EvdevGuest.expectedTraffic(frames: frames, id: resting.id, resting: resting) { frame in
                    let magnitude = EvdevGuest.magnitude15(frame.channels[0].amplitude)
                    return magnitude == 0
                        ? nil
                        : EvdevGuest.ExpectedEffect(
                            type: EvdevGuest.periodic, id: resting.id, waveform: EvdevGuest.sine, period: EvdevGuest.period(frame.channels[0].frequency),
                            magnitude: magnitude)
                }
                #expect(Array(observed.dropFirst().dropLast()) == expected, "observed \(observed)\nexpected \(expected)")
                #expect(Set(observed.compactMap { if case .update(let effect, _) = $0 { effect.period } else { nil } }).count >= 2, "the period followed the frequency")
            }
        }

        @Test("a vibrator with FF_CONSTANT only: the constant level")
        func constantVibrator() async throws {
            try await HIDGuest.onThread {
                let (device, _) = try EvdevGuest.plug(.vibrator(name: "swift-haptics uinput constant", ffBits: [EvdevGuest.constant]))
                defer { try? device.destroy() }
                let system = EvdevGuest.system()
                let id = EvdevGuest.expectedID(device)
                _ = try EvdevGuest.description(system, id: id)
                let start = HIDGuest.now()
                let frames = try Self.play(try EvdevGuest.backend(system), id: id, pattern: try .transient(intensity: 0.8, sharpness: 0.5))
                try EvdevGuest.waitForErase(device, since: start)
                let observed = EvdevGuest.observed(device, since: start)
                guard case .create(let resting)? = observed.first else {
                    Issue.record("no resting effect: \(observed)")
                    return
                }
                let expected = EvdevGuest.expectedTraffic(frames: frames, id: resting.id, resting: resting) { frame in
                    let level = EvdevGuest.magnitude15(frame.channels[0].amplitude)
                    return level == 0 ? nil : EvdevGuest.ExpectedEffect(type: EvdevGuest.constant, id: resting.id, level: level)
                }
                #expect(Array(observed.dropFirst().dropLast()) == expected, "observed \(observed)\nexpected \(expected)")
            }
        }

        @Test("a device with no usable effect (FF_PERIODIC with FF_CUSTOM only) is listed unavailable with the reason; opening it fails with it")
        func noUsableEffect() async throws {
            try await HIDGuest.onThread {
                let (device, node) = try EvdevGuest.plug(.vibrator(name: "swift-haptics uinput custom-only", ffBits: [EvdevGuest.periodic, EvdevGuest.custom]))
                defer { try? device.destroy() }
                let system = EvdevGuest.system()
                let id = EvdevGuest.expectedID(device)
                let description = try EvdevGuest.description(system, id: id)
                let reason = try #require(description.unavailableReason)
                #expect(reason.contains(node) && reason.contains("FF_CUSTOM") && reason.contains("FF_RUMBLE, FF_PERIODIC with FF_SINE, or FF_CONSTANT"), "\(reason)")
                let failure = try #require(throws: DeviceError.self) { try system.openDevice(id) }
                #expect("\(failure)".contains("FF_CUSTOM"), "\(failure)")
                #expect(device.records.isEmpty, "nothing was uploaded: \(device.records)")
            }
        }

        @Test("a held drive: played again every 200 ms so replay.length (500 ms) never runs out; the stop comes at once")
        func heldDriveRefreshed() async throws {
            try await HIDGuest.onThread {
                let (pad, _) = try EvdevGuest.plug(.gamepad(name: "swift-haptics uinput held"))
                defer { try? pad.destroy() }
                let system = EvdevGuest.system()
                let id = EvdevGuest.expectedID(pad)
                _ = try EvdevGuest.description(system, id: id)
                let backend = try EvdevGuest.backend(system)
                let (began, stoppedAt) = try { () throws -> (UInt64, UInt64) in
                    let device = try backend.open(deviceID: id)
                    defer { device.close() }
                    try device.wake()
                    let began = HIDGuest.now()
                    try device.submit(DriveFrame(time: .monotonicNow(), channels: [ChannelDrive(amplitude: 0.7), ChannelDrive(amplitude: 0.2)]))
                    HIDGuest.pause(1.2)
                    let stoppedAt = HIDGuest.now()
                    try device.stop()
                    try device.sleep()
                    return (began, stoppedAt)
                }()
                let records = pad.records.filter { $0.time >= began }
                let plays = records.filter { if case .play(_, 1) = $0.event { true } else { false } }.map(\.time)
                let effect = try #require(records.compactMap { if case .upload(let effect, _, 0) = $0.event { effect } else { nil } }.last)
                #expect(effect.replayLength == 500)
                #expect(plays.count >= 5, "plays during 1.2 s: \(plays.count)")
                let gaps = zip(plays, plays.dropFirst()).map { Double($1 - $0) / 1e6 }
                #expect(gaps.allSatisfy { $0 < 450 }, "the effect must be played again before its 500 ms run out: gaps \(gaps) ms")
                // Modelled as the device's driver knows it: playing all along until the stop.
                for probe in stride(from: began + 50_000_000, to: stoppedAt - 10_000_000, by: 100_000_000) {
                    #expect(pad.isPlaying(id: Int(effect.id), at: probe) == true, "not playing \(Double(probe - began) / 1e6) ms in")
                }
                let stop = try #require(records.first { $0.event == .play(id: Int(effect.id), count: 0) })
                #expect(stop.time >= stoppedAt && Double(stop.time - stoppedAt) / 1e6 < 100, "the stop came \(Double(stop.time - stoppedAt) / 1e6) ms after stop()")
                #expect(!records.contains { if case .play(_, 1) = $0.event { $0.time > stop.time } else { false } }, "played after the stop")
                print("evdev: held drive: \(plays.count) plays in \(String(format: "%.0f", Double(stoppedAt - began) / 1e6)) ms, gaps \(gaps.map { String(format: "%.0f", $0) }) ms")
            }
        }

        @Test("an effect the kernel no longer holds (update refused with EINVAL) is erased and created again, then played")
        func droppedEffectRecreated() async throws {
            try await HIDGuest.onThread {
                let (pad, _) = try EvdevGuest.plug(.gamepad(name: "swift-haptics uinput dropping"))
                defer { try? pad.destroy() }
                let system = EvdevGuest.system()
                let id = EvdevGuest.expectedID(pad)
                _ = try EvdevGuest.description(system, id: id)
                let backend = try EvdevGuest.backend(system)
                let start = HIDGuest.now()
                try { () throws in
                    let device = try backend.open(deviceID: id)
                    defer { device.close() }
                    try device.wake()
                    try device.submit(DriveFrame(time: .monotonicNow(), channels: [ChannelDrive(amplitude: 0.5), ChannelDrive(amplitude: 0)]))
                    try pad.waitForRecords("the first play") { EvdevGuest.firstPlay(in: $0, since: start) != nil }
                    // The next update is refused as the kernel refuses an effect it dropped.
                    let refusedOnce = Mutex(false)
                    pad.answerUploads { _, isNew in
                        isNew ? 0 : refusedOnce.withLock { refused in
                            defer { refused = true }
                            return refused ? 0 : -EINVAL
                        }
                    }
                    try device.submit(DriveFrame(time: .monotonicNow(), channels: [ChannelDrive(amplitude: 0.9), ChannelDrive(amplitude: 0.1)]))
                    try pad.waitForRecords("a play after the re-creation") { records in
                        let created = records.filter { $0.time >= start }.compactMap { if case .upload(let effect, nil, 0) = $0.event { effect } else { nil } }
                        return created.count == 2 && records.last.map { if case .play(_, 1) = $0.event { true } else { false } } == true
                    }
                    try device.stop()
                    try device.sleep()
                }()
                let observed = EvdevGuest.observed(pad, since: start)
                let first = try #require(EvdevGuest.createdID(pad, since: start))
                let strongWeak = (EvdevGuest.magnitude16(0.9), EvdevGuest.magnitude16(0.1))
                let refusedIndex = try #require(observed.firstIndex { if case .refused = $0 { true } else { false } }, "\(observed)")
                let after = Array(observed[(refusedIndex + 1)...])
                // The refused update, then: stop and erase of the old id (the kernel stops before it erases), a new effect, a play.
                #expect(after.prefix(3).contains(.erase(Int(first))), "\(after)")
                let recreated = try #require(after.first { if case .create = $0 { true } else { false } })
                guard case .create(let effect) = recreated else { return }
                #expect(effect == EvdevGuest.rumbleEffect(id: effect.id, strong: strongWeak.0, weak: strongWeak.1), "\(effect)")
                #expect(after.contains(.play(Int(effect.id))), "\(after)")
            }
        }

        @Test("a user-space driver slow to answer uploads never holds up submit: the upload and play follow on the backend's thread")
        func slowDriverDoesNotBlockSubmit() async throws {
            try await HIDGuest.onThread {
                let (pad, _) = try EvdevGuest.plug(.gamepad(name: "swift-haptics uinput slow"))
                defer { try? pad.destroy() }
                let system = EvdevGuest.system()
                let id = EvdevGuest.expectedID(pad)
                _ = try EvdevGuest.description(system, id: id)
                let backend = try EvdevGuest.backend(system)
                let (submitTook, arrived) = try { () throws -> (Double, Double) in
                    let device = try backend.open(deviceID: id)
                    defer { device.close() }
                    try device.wake()
                    pad.answerUploads { _, _ in
                        HIDGuest.pause(0.3)
                        return 0
                    }
                    let before = HIDGuest.now()
                    try device.submit(DriveFrame(time: .monotonicNow(), channels: [ChannelDrive(amplitude: 1), ChannelDrive(amplitude: 1)]))
                    let took = HIDGuest.seconds(HIDGuest.now(), since: before)
                    let records = try pad.waitForRecords("the play after the slow upload") { EvdevGuest.firstPlay(in: $0, since: before) != nil }
                    let play = EvdevGuest.firstPlay(in: records, since: before)!
                    pad.answerUploads(nil)
                    try device.stop()
                    try device.sleep()
                    return (took, HIDGuest.seconds(play.time, since: before))
                }()
                #expect(submitTook < 0.1, "submit waited \(submitTook * 1000) ms for the driver")
                #expect(arrived >= 0.3, "the play came \(arrived * 1000) ms after submit, before the upload was answered")
            }
        }

        /// Both motors at `amplitude`, now.
        static func drive(_ amplitude: Double) -> DriveFrame {
            DriveFrame(time: .monotonicNow(), channels: [ChannelDrive(amplitude: amplitude), ChannelDrive(amplitude: amplitude)])
        }

        @Test("a tap shorter than a slow driver's answer is played whole, late, and the device closes after it; the backlog of a stalled driver collapses to its newest state")
        func tapShorterThanTheDriversAnswer() async throws {
            try await HIDGuest.onThread {
                let (pad, _) = try EvdevGuest.plug(.gamepad(name: "swift-haptics uinput tap"))
                defer { try? pad.destroy() }
                let system = EvdevGuest.system()
                let id = EvdevGuest.expectedID(pad)
                _ = try EvdevGuest.description(system, id: id)
                let backend = try EvdevGuest.backend(system)
                let device = try backend.open(deviceID: id)
                defer { device.close() }
                try device.wake()
                // Each upload is answered 80 ms late: longer than the tap lasts.
                pad.answerUploads { _, _ in
                    HIDGuest.pause(0.08)
                    return 0
                }
                let before = HIDGuest.now()
                try device.submit(Self.drive(0.6))
                HIDGuest.pause(0.02)
                try device.submit(Self.drive(0))
                try device.stop()
                try device.sleep()
                // The tap: the upload answered, a play, then a stop about the tap's 20 ms later, then the
                // erase of the close that waited for it.
                let records = try pad.waitForRecords("the tap, its stop and the erase") { records in
                    records.contains { if case .erase = $0.event { $0.time >= before } else { false } }
                }.filter { $0.time >= before }
                let plays = records.indices.filter { if case .play(_, let count) = records[$0].event { count > 0 } else { false } }
                let stops = records.indices.filter { if case .play(_, 0) = records[$0].event { true } else { false } }
                let erases = records.indices.filter { if case .erase = records[$0].event { true } else { false } }
                let play = try #require(plays.first, "no play: \(records)")
                let stop = try #require(stops.first { $0 > play }, "no stop after the play: \(records)")
                let erase = try #require(erases.first)
                // What was played is the tap's drive, uploaded (answered) before the play.
                #expect(records[..<play].contains { if case .upload(let effect, _, 0) = $0.event { effect.strong == 0x9999 } else { false } }, "\(records)")
                let held = HIDGuest.seconds(records[stop].time, since: records[play].time)
                #expect(HIDGuest.seconds(records[play].time, since: before) >= 0.08, "played before the driver answered: \(records)")
                #expect(held >= 0.015, "the tap was held \(held * 1000) ms of its 20 ms: \(records)")
                #expect(erase > stop, "closed before the tap was played out: \(records)")
                print("evdev: a 20 ms tap behind an 80 ms upload: played \(String(format: "%.1f", HIDGuest.seconds(records[play].time, since: before) * 1000)) ms after submit, held \(String(format: "%.1f", held * 1000)) ms")

                // A driver that stalls for 400 ms behind ten changes: what reaches it after the stall is the
                // newest state, not the past replayed.
                try device.wake()
                pad.answerUploads { _, _ in
                    HIDGuest.pause(0.4)
                    return 0
                }
                let stalled = HIDGuest.now()
                for step in 1...10 {
                    try device.submit(Self.drive(Double(step) / 10))
                    HIDGuest.pause(0.01)
                }
                let after = try pad.waitForRecords("the newest state after the stall", timeout: 20) { records in
                    records.contains { if case .upload(let effect, _, 0) = $0.event { $0.time >= stalled && effect.strong == 0xFFFF } else { false } }
                }.filter { $0.time >= stalled }
                let uploads = after.compactMap { if case .upload(let effect, _, 0) = $0.event { effect.strong } else { nil } }
                #expect(uploads.count <= 3, "the stalled driver was handed \(uploads.count) uploads one after the other: \(after)")
                pad.answerUploads(nil)
                try device.stop()
                try device.sleep()
            }
        }

        @Test("the event node is close-on-exec: a program started while the device is prepared does not hold it")
        func descriptorNotInherited() async throws {
            try await HIDGuest.onThread {
                let (pad, node) = try EvdevGuest.plug(.gamepad(name: "swift-haptics uinput cloexec"))
                defer { try? pad.destroy() }
                let system = EvdevGuest.system()
                let id = EvdevGuest.expectedID(pad)
                _ = try EvdevGuest.description(system, id: id)
                let device = try system.openDevice(id)
                defer { device.close() }
                let hold = device.hold()
                hold.prepare()
                defer { hold.release() }
                #expect(EvdevGuest.openNodes(of: getpid()).contains(node), "prepared: the node is open")
                let child = try ChildProcess(["/bin/sleep", "5"], outputPath: "/tmp/evdev-cloexec-\(getpid()).log")
                defer { child.send(SIGKILL); _ = try? child.wait(timeout: 5) }
                HIDGuest.pause(0.2)
                let inherited = EvdevGuest.openNodes(of: child.pid)
                #expect(!inherited.contains(node), "the child holds \(inherited)")
            }
        }
    }
}
