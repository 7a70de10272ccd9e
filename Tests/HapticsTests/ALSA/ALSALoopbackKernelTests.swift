import Foundation
import Haptics
import HapticsTools
import Testing
import VMRig

#if canImport(Glibc)
import Glibc
#endif

extension GuestExclusiveKernelTests {
    /// Guest side, alone in the guest (timing): `libhaptics-alsa.so` on a real kernel sound card,
    /// `snd-aloop`. What the backend plays on the loopback's playback device (`DEV=0`) is captured
    /// from its capture device (`DEV=1`) by `arecord`, a client nobody here wrote. The card's clock
    /// paces the stream (no backend pacing), the kernel's own errors come back as the backend's
    /// messages, and a killed player leaves the card silent. One boot is enough (no HID involved).
    @Suite(.serialized, .enabled(if: !VMRig.ignoresSpecialHIDDrivers, "one boot is enough: no HID involved"))
    struct ALSALoopback {
        static let rate = 48_000.0

        /// Loads snd-aloop (one substream per device, so a second opener is refused) and writes a
        /// device file for a 150 Hz coil on channel 1 of its 2-channel playback at `rateHz`.
        static func rig(rateHz: Int = 48_000) throws -> (directory: String, system: HapticSystem) {
            try VMRig.loadKernelModule("snd-aloop", parameters: ["id=HLoop", "pcm_substreams=1", "index=7"])
            let directory = TestSupport.makeTemporaryDirectory("aloop")
            try """
                {"format": 1, "name": "hloop", "description": "A coil on snd-aloop", "pcm": "hw:CARD=HLoop,DEV=0", "channels": 2,
                 "rate_hz": \(rateHz), "period_us": 10000, "periods": 4,
                 "actuators": [{"name": "coil", "channel": 1, "resonant_frequency_hz": 150, "frequency_min_hz": 75, "frequency_max_hz": 300}]}
                """.write(toFile: directory + "/hloop.json", atomically: true, encoding: .utf8)
            let system = HapticSystem(
                configuration: .init(
                    searchPath: PluginSearchPath(directories: [TestSupport.buildDirectory]),
                    settings: ["alsa.devices": directory, "alsa.dualsense": "off", "recording.devices": "none"],
                    logger: TestSupport.quietLogger, daemon: .never))
            return (directory, system)
        }

        /// `arecord` capturing the loopback for `seconds` into a raw file, started before playing
        /// (a ``ChildProcess``: Foundation's `Process` hangs in the guest).
        static func capture(seconds: Int, into path: String) throws -> ChildProcess {
            let process = try ChildProcess(
                ["/usr/bin/arecord", "-q", "-D", "hw:CARD=HLoop,DEV=1", "-t", "raw", "-f", "S16_LE", "-c", "2", "-r", "48000", "-d", "\(seconds)", path],
                outputPath: path + ".log")
            usleep(300_000)
            return process
        }

        @Test("a pattern reaches the card: the coil's channel carries the sine for the event's length, the other is silent; the card paces the stream")
        func playsOnTheCard() throws {
            let (directory, system) = try Self.rig()
            let recorder = try Self.capture(seconds: 3, into: directory + "/captured.raw")
            let device = try system.openDevice("alsa:hloop")
            let engine = try HapticEngine(devices: [device], profileStore: nil, policy: HapticPolicy())
            try engine.start()
            let started = HapticInstant.monotonicNow()
            try engine.makePlayer(with: try .continuous(duration: 0.5, intensity: 0.8, sharpness: 0)).start(atTime: 0)
            usleep(1_000_000)
            let underruns = (device.actuator as? PluginActuator)?.underruns ?? -1
            engine.stop()
            device.close()
            let elapsed = HapticInstant.monotonicNow().seconds - started.seconds
            _ = try recorder.wait(timeout: 10)
            let captured = try Signal.channels(ofRawS16: directory + "/captured.raw", channels: 2)
            print("aloop: \(underruns) underruns over \(elapsed) s")
            #expect(captured[1].allSatisfy { $0 == 0 }, "channel 2 carries no actuator")
            let span = try #require(Signal.extent(captured[0]), "nothing reached the card")
            let seconds = Double(span.count) / Self.rate
            #expect(abs(seconds - 0.5) < 0.03, "sounded \(seconds) s")
            let middle = captured[0][(span.lowerBound + 4_800)..<(span.upperBound - 4_800)]
            #expect(abs(Signal.peak(of: middle, in: 90...200, rate: Self.rate) - 112.5) <= 1)
            let level = Signal.amplitude(of: middle, at: 112.5, rate: Self.rate)
            #expect(abs(level - 0.8) < 0.03, "amplitude \(level) for intensity 0.8 (uncalibrated: linear)")
        }

        @Test("a card another program holds is refused with the holder named and the fix; a rate the card refuses names the rates it takes")
        func busyAndRefused() throws {
            let (directory, system) = try Self.rig()
            let holder = try ChildProcess(
                ["/usr/bin/aplay", "-q", "-D", "hw:CARD=HLoop,DEV=0", "-t", "raw", "-f", "S16_LE", "-c", "2", "-r", "48000", "/dev/zero"],
                outputPath: directory + "/aplay.log")
            usleep(500_000)
            do {
                let device = try system.openDevice("alsa:hloop")
                device.close()
                Issue.record("a held card opened")
            } catch {
                let text = "\(error)"
                #expect(text.contains("is in use by pid \(holder.pid) (aplay)") && text.contains("pactl set-card-profile"), "\(text)")
            }
            holder.send(SIGTERM)
            _ = try holder.wait(timeout: 10)

            // The loopback's sides share one configuration: with the capture at 48 kHz, 44.1 kHz is refused.
            let recorder = try Self.capture(seconds: 2, into: directory + "/captured.raw")
            defer {
                recorder.send(SIGTERM)
                _ = try? recorder.wait(timeout: 10)
            }
            try FileManager.default.removeItem(atPath: directory + "/hloop.json")
            let (_, slower) = try Self.rig(rateHz: 44_100)
            do {
                let device = try slower.openDevice("alsa:hloop")
                device.close()
                Issue.record("a refused rate opened")
            } catch {
                let text = "\(error)"
                #expect(text.contains("refuses 44100 Hz: it takes 48000…48000 Hz") && text.contains("plughw"), "\(text)")
            }
        }

        @Test("a player killed mid-pattern (SIGKILL) leaves the card silent: the kernel closes the stream")
        func killedPlayerLeavesSilence() throws {
            let (directory, _) = try Self.rig()
            let pattern = directory + "/long.ahap"
            try #"{"Version": 1, "Pattern": [{"Event": {"Time": 0, "EventType": "HapticContinuous", "EventDuration": 10, "EventParameters": [{"ParameterID": "HapticIntensity", "ParameterValue": 1}, {"ParameterID": "HapticSharpness", "ParameterValue": 0.5}]}}]}"#
                .write(toFile: pattern, atomically: true, encoding: .utf8)
            // Long enough for a Swift program to start under emulation; ended by SIGTERM once done.
            let recorder = try Self.capture(seconds: 60, into: directory + "/captured.raw")
            let player = try ChildProcess(
                [TestSupport.buildDirectory + "/haptic-cal", "play", "alsa:hloop", pattern],
                environment: ["HAPTICS_ALSA_DEVICES": directory, "HAPTICS_ALSA_DUALSENSE": "off", "HAPTICS_DAEMON": "never"],
                outputPath: directory + "/haptic-cal.log")
            // Until the coil sounds, then a second more.
            let deadline = Date().addingTimeInterval(40)
            var sounding = false
            while !sounding, Date() < deadline {
                usleep(100_000)
                sounding = (try? Data(contentsOf: URL(fileURLWithPath: directory + "/captured.raw")))?.contains { $0 != 0 } ?? false
            }
            usleep(1_000_000)
            player.send(SIGKILL)
            let ending = try player.wait(timeout: 10)
            let log = (try? String(contentsOfFile: directory + "/haptic-cal.log", encoding: .utf8)) ?? ""
            // Two seconds of what follows the kill, then the recording ends.
            usleep(2_000_000)
            recorder.send(SIGTERM)
            _ = try recorder.wait(timeout: 20)
            #expect(sounding, "the coil never sounded; haptic-cal said: \(log)")
            #expect(ending == .signaled(SIGKILL), "haptic-cal \(ending): \(log)")
            let captured = try Signal.channels(ofRawS16: directory + "/captured.raw", channels: 2)[0]
            let span = try #require(Signal.extent(captured))
            let silenceAfter = Double(captured.count - 1 - span.upperBound) / Self.rate
            #expect(silenceAfter > 1.5, "the card kept sounding after the kill: only \(silenceAfter) s of silence at the end")
            print("aloop: \(silenceAfter) s of silence after the last sound, of the 2 s recorded after the kill")
        }
        @Test("live audio through the loopback: aplay plays hits into DEV=0, haptic-cal listen captures DEV=1 through the alsa plugin and drives the recording LRA, a burst per hit spaced as the hits; latency reported")
        func liveFromTheLoopback() throws {
            let (directory, _) = try Self.rig()
            let times = LiveHapticsTests.hitTimes.map { $0 + 0.5 }
            let audio = LiveHapticsTests.hits(times: times, levels: LiveHapticsTests.hitLevels, duration: 4.5)
            var data = Data()
            for sample in audio {
                let value = Int16(max(-32_767, min(32_767, (sample * 32_767).rounded())))
                withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0); data.append(contentsOf: $0) }
            }
            try data.write(to: URL(fileURLWithPath: directory + "/hits.raw"))
            let listener = try ChildProcess(
                [TestSupport.buildDirectory + "/haptic-cal", "listen", "recording:lra", "--source", "hw:CARD=HLoop,DEV=1", "--seconds", "6",
                 "--record", directory + "/rec.jsonl"],
                environment: ["HAPTICS_RECORDING_DEVICES": "lra", "HAPTICS_PLUGIN_PATH": TestSupport.buildDirectory, "HAPTICS_DAEMON": "never",
                              "HAPTICS_ALSA_DEVICES": directory + "/none", "HAPTICS_ALSA_DUALSENSE": "off"],
                outputPath: directory + "/listen.txt")
            // Play only once the listener captures: its start (a Swift process, its plugins, the
            // device) can take seconds in an emulated guest beside another, and what the loopback
            // carries before then is lost. The kernel says when: the capture substream runs.
            let status = "/proc/asound/HLoop/pcm1c/sub0/status"
            let capturing = ChildProcess.waitUntil(timeout: 60) {
                ((try? String(contentsOfFile: status, encoding: .utf8)) ?? "").contains("RUNNING")
            }
            #expect(capturing, "the listener never started capturing: \(listener.output)")
            let player = try ChildProcess(
                ["/usr/bin/aplay", "-q", "-D", "hw:CARD=HLoop,DEV=0", "-t", "raw", "-f", "S16_LE", "-c", "2", "-r", "48000", directory + "/hits.raw"],
                outputPath: directory + "/aplay.log")
            #expect(try player.wait(timeout: 30) == .exited(0))
            #expect(try listener.wait(timeout: 30) == .exited(0), "\(listener.output)")
            print("aloop live: \(listener.output)")
            #expect(listener.output.contains("6 onsets"), "\(listener.output)")
            let bursts = LiveHapticsTests.bursts(try Recording(contentsOf: directory + "/rec.jsonl").frames(for: "recording:lra"))
            let expected = times.map { $0 - times[0] }
            #expect(bursts.count == expected.count, "bursts at \(bursts)")
            for (burst, hit) in zip(bursts, expected) { #expect(abs(burst - hit) < 0.02, "burst at \(burst) s, hit at \(hit) s") }
            let line = try #require(listener.output.split(separator: "\n").first { $0.hasPrefix("latency") })
            let p50 = try #require(Double(line.split(separator: " ")[7]))
            #expect(p50 < 40, "\(line)")
        }
    }
}
