#if canImport(Glibc)
import Glibc
#endif
import CHapticsABI
import HapticsSupport
import Synchronization

/// What one ``AudioCapture/read(into:timeout:)`` gave.
public struct CapturedAudio: Sendable, Hashable {
    /// Frames read into the buffer (0: the timeout passed first).
    public var frames: Int
    /// When the first frame read entered the source, on the monotonic clock (``HapticInstant``).
    public var time: HapticInstant
    /// Overruns the source recovered from since the last read: audio was lost.
    public var overruns: Int
}

/// Why audio cannot be captured: names the source, the backend and the fix.
public struct AudioCaptureError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The source asked for.
    public var source: String
    /// The errno value (positive), when a backend failed; 0 when none could be asked.
    public var errno: Int32
    /// What went wrong and the fix.
    public var message: String

    /// An error.
    public init(source: String, errno: Int32, message: String) {
        self.source = source
        self.errno = errno
        self.message = message
    }

    public var description: String { message }
}

/// An audio source opened for capture through a backend (ABI 1.9; the alsa backend opens ALSA
/// PCMs): the one owner of the plugin's capture handle, which ``close()`` (or the last reference)
/// releases exactly once. The host never links a sound library itself.
///
/// Read from one thread at a time; ``close()`` from any thread waits for a read in progress, which
/// returns within its timeout.
public final class AudioCapture: Sendable {
    /// The source as the backend names it ("hw:Loopback,1,0", "default").
    public let source: String
    /// The backend that opened it ("alsa").
    public let backendName: String
    /// The stream as opened.
    public let format: AudioCaptureFormat
    private let backend: Backend
    /// The plugin's handle: used only under the lock, by one call at a time.
    private struct Handle: @unchecked Sendable { let raw: UnsafeMutableRawPointer }
    /// The plugin's handle; nil once closed.
    private let handle: Mutex<Handle?>

    init(source: String, backend: Backend, format: AudioCaptureFormat, handle: UnsafeMutableRawPointer) {
        self.source = source
        self.backend = backend
        self.backendName = backend.name
        self.format = format
        self.handle = Mutex(Handle(raw: handle))
    }

    deinit { close() }

    /// Waits until a period has been captured or `timeout` seconds pass, then reads what is there
    /// into `samples` (interleaved, `format.channels` per frame, −1…1), which it
    /// grows to hold the source's buffer once and never shrinks.
    /// - Throws: ``AudioCaptureError``: the capture was closed, or the backend failed (the source is gone).
    public func read(into samples: inout [Float], timeout: Double) throws(AudioCaptureError) -> CapturedAudio {
        let capacityFrames = max(format.bufferFrames, format.periodFrames)
        if samples.count < capacityFrames * format.channels { samples = [Float](repeating: 0, count: capacityFrames * format.channels) }
        let table = backend.table
        let result: Result<CapturedAudio, AudioCaptureError> = handle.withLock { handle in
            guard let handle else { return .failure(AudioCaptureError(source: source, errno: EBADF, message: "\(source): the capture is closed")) }
            return samples.withUnsafeMutableBufferPointer { buffer in
                var block = haptics_capture_block_v1(
                    samples: buffer.baseAddress!, frame_capacity: UInt32(buffer.count / format.channels), frame_count: 0, time_ns: 0, overruns: 0, reserved: 0)
                let rc = table.capture_read!(handle.raw, &block, Monotonic.nanoseconds(max(timeout, 0)))
                guard rc == 0 else {
                    var text = [CChar](repeating: 0, count: 512)
                    _ = table.last_error!(table.instance, handle.raw, &text, text.count)
                    return .failure(AudioCaptureError(source: source, errno: -rc, message: String(cText: text)))
                }
                return .success(CapturedAudio(frames: Int(block.frame_count), time: HapticInstant(nanoseconds: block.time_ns), overruns: Int(block.overruns)))
            }
        }
        return try result.get()
    }

    /// Stops the capture and releases it; later calls do nothing.
    public func close() {
        let table = backend.table
        handle.withLock { handle in
            guard let open = handle else { return }
            handle = nil
            table.capture_close!(open.raw)
        }
    }
}

extension Backend {
    /// Whether the plugin captures audio (ABI 1.9: `capture_open`, `capture_read` and `capture_close` all set).
    public var capturesAudio: Bool {
        guard let offset = MemoryLayout<haptics_backend_v1>.offset(of: \.capture_close),
            Int(table.struct_size) >= offset + MemoryLayout<UnsafeRawPointer>.size
        else { return false }
        return table.capture_open != nil && table.capture_read != nil && table.capture_close != nil
    }

    /// Opens the audio source `source`, in this backend's naming, as near the request as it allows
    /// (nil: the source's own rate or channels, the backend's period).
    /// - Throws: ``AudioCaptureError`` with the backend's message (no such source, busy, no permission).
    public func openCapture(_ source: String, rate: Int? = nil, channels: Int? = nil, periodFrames: Int? = nil) throws(AudioCaptureError) -> AudioCapture {
        guard capturesAudio else {
            throw AudioCaptureError(source: source, errno: EOPNOTSUPP, message: "\(source): the \(name) backend (\(path)) captures no audio")
        }
        var request = haptics_capture_format_v1()
        request.struct_size = UInt32(MemoryLayout<haptics_capture_format_v1>.size)
        request.rate_hz = UInt32(clamping: rate ?? 0)
        request.channel_count = UInt32(clamping: channels ?? 0)
        request.period_frames = UInt32(clamping: periodFrames ?? 0)
        var handle: UnsafeMutableRawPointer?
        let rc = table.capture_open!(table.instance, source, &request, &handle)
        guard rc == 0, let handle else {
            var text = [CChar](repeating: 0, count: 512)
            _ = table.last_error!(table.instance, nil, &text, text.count)
            throw AudioCaptureError(source: source, errno: rc < 0 ? -rc : EIO, message: String(cText: text))
        }
        let format = AudioCaptureFormat(
            rate: Int(request.rate_hz), channels: Int(request.channel_count), periodFrames: Int(request.period_frames), bufferFrames: Int(request.buffer_frames))
        let capture = AudioCapture(source: source, backend: self, format: format, handle: handle)
        guard (1_000...768_000).contains(format.rate), (1...32).contains(format.channels), format.periodFrames > 0 else {
            capture.close()
            throw AudioCaptureError(source: source, errno: EPROTO, message: "\(source): the \(name) backend opened an unusable stream (\(format)); update the plugin")
        }
        return capture
    }
}

extension HapticSystem {
    /// Opens an audio source for capture through the loaded backends (ABI 1.9): `source` is
    /// `BACKEND:NAME` ("alsa:hw:Loopback,1,0") or a name the first capturing backend knows
    /// ("default").
    /// - Throws: ``AudioCaptureError``: no loaded backend captures audio (which plugin to install,
    ///   and why it did not load), or the backend's own failure.
    public func openCapture(_ source: String, rate: Int? = nil, channels: Int? = nil, periodFrames: Int? = nil) throws(AudioCaptureError) -> AudioCapture {
        let capturing = backends.filter(\.capturesAudio)
        if let colon = source.firstIndex(of: ":"), let backend = capturing.first(where: { $0.name == source[..<colon] }) {
            return try backend.openCapture(String(source[source.index(after: colon)...]), rate: rate, channels: channels, periodFrames: periodFrames)
        }
        guard let backend = capturing.first else {
            var reason = "no loaded backend captures audio: the alsa backend (libhaptics-alsa.so, which needs libasound2) does"
            if case .daemon = mode {
                reason += "; this process plays through hapticsd and loads no backend: capture in the service (its Listen method), or set HAPTICS_DAEMON=off"
            } else if let failure = plugins.failures.first(where: { "\($0)".contains("alsa") }) {
                reason += ", and it did not load: \(failure)"
            } else {
                reason += ", and it is not on the plugin path (\(plugins.searchedDirectories.joined(separator: ":")))"
            }
            throw AudioCaptureError(source: source, errno: ENOENT, message: "\(source): \(reason)")
        }
        return try backend.openCapture(source, rate: rate, channels: channels, periodFrames: periodFrames)
    }
}
