import Foundation
import Testing

/// feedbackd's own libfeedback integration test, `tests/test-lfb-integration.c` from Debian's
/// feedbackd source packages, compiled unchanged with the libfeedback of the same source and run
/// against hapticsd by `Scripts/feedbackd-suite`: 0.0.3-1 (Debian 12) and 0.8.2-1 (Debian 13).
///
/// This proves that hapticsd passes the test feedbackd's authors wrote for feedbackd, through their
/// own fixture (a GTestDBus bus per case that activates org.sigxcpu.Feedback, their theme
/// `tests/data/test.json` through `FEEDBACK_THEME`) and their own client library, in both
/// versions: a synchronous and an asynchronous trigger and end, with the end reason
/// `LFB_EVENT_END_REASON_EXPLICIT` and the event already ended when `EndFeedback`'s reply arrives
/// (FeedbackEnded is sent before the reply); an unknown event ending `NOT_FOUND` after the trigger's
/// reply; an empty event name refused with `org.freedesktop.DBus.Error.InvalidArgs`; the `Profile`
/// property read, set and announced by PropertiesChanged. The first run fetches the sources (once,
/// into `.feedbackd-src/`), so it needs the network; the script also runs the same cases against
/// Debian's feedbackd (`--daemon /usr/libexec/feedbackd`), which is how the harness itself was checked.
@Suite("hapticsd: feedbackd's own test-lfb-integration and Python example, unchanged")
struct FeedbackdSuiteTests {
    static let script = TestSupport.packageRoot + "/Scripts/feedbackd-suite"
    static let cases = [
        "event_sync", "event_async/success", "event_async/error", "event_not_found", "event_not_found_async", "profile",
    ]

    @Test("every case of feedbackd's test-lfb-integration passes against hapticsd", arguments: ["0.0.3", "0.8.2"])
    func feedbackdIntegrationTest(version: String) throws {
        let hapticsd = TestSupport.buildDirectory + "/hapticsd"
        let (status, output) = try TestSupport.run(Self.script, ["--daemon", hapticsd, "--version", version])
        // The summary: "feedbackd-suite: 0.0.3: event_sync=pass event_async/success=pass …".
        let prefix = "feedbackd-suite: \(version):"
        let summary = try #require(output.split(separator: "\n").last { $0.hasPrefix(prefix) }, "no summary line:\n\(output)")
        var results: [String: String] = [:]
        for entry in summary.dropFirst(prefix.count).split(separator: " ") {
            let parts = entry.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { results[String(parts[0])] = String(parts[1]) }
        }
        #expect(Set(results.keys) == Set(Self.cases), "the cases run: \(results.keys.sorted())")
        let failed = Self.cases.filter { results[$0] != "pass" }
        #expect(failed.isEmpty && status == 0, "feedbackd \(version)'s cases failing against hapticsd: \(failed) (exit status \(status)):\n\(output)")
    }

    @Test("feedbackd's Python example (examples/example.py, Debian's libfeedback through gi) plays an event on hapticsd", arguments: ["0.0.3", "0.8.2"])
    func pythonExample(version: String) throws {
        let (status, output) = try TestSupport.run(Self.script, ["--fetch-only", "--version", version])
        try #require(status == 0, "\(output)")
        let source = try #require(output.split(separator: "\n").last { $0.hasPrefix("feedbackd-suite: source \(version): ") }?.split(separator: " ").last.map(String.init))
        let rig = try DaemonRig()
        let observer = try TestBusClient(address: rig.address)
        let (ran, said) = try rig.run(["/usr/bin/python3", source + "/examples/example.py"], timeout: 60)
        #expect(ran == 0, "\(said)")
        #expect(observer.waitForSignal("FeedbackEnded", timeout: 20) != nil, "the example's event did not end")
        let recording = try rig.waitForRecording { $0.transitions(for: "recording:lra").contains("sleep") }
        #expect(recording.driveFrames("recording:lra").contains { $0.isDriven }, "the example's phone-incoming-call drove nothing")
    }
}
