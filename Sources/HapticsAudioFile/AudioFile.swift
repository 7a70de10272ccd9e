import CSndfile
import Haptics

#if canImport(Glibc)
import Glibc
#endif

/// Why an audio file did not become an ``Haptics/AudioClip``: each names the file and the problem.
public enum AudioFileError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file is not there, or cannot be read (the system's reason).
    case unreadable(path: String, reason: String)
    /// libsndfile could not open it as audio (its reason: an unknown format, a broken header).
    case notAudio(path: String, reason: String)
    /// Decoding failed part way (libsndfile's reason).
    case decodingFailed(path: String, reason: String)
    /// The samples are no clip (too many channels, too long, …).
    case clip(AudioClipError)

    public var description: String {
        switch self {
        case .unreadable(let path, let reason): "\(path): \(reason)"
        case .notAudio(let path, let reason):
            "\(path): not an audio file libsndfile reads (\(reason)); use WAV, FLAC, Ogg Vorbis or Opus, or MP3"
        case .decodingFailed(let path, let reason): "\(path): decoding failed: \(reason)"
        case .clip(let error): error.description
        }
    }
}

extension AudioClip {
    /// The clip in the audio file at `path` (WAV, AIFF, FLAC, Ogg Vorbis or Opus, MP3: whatever
    /// libsndfile reads), decoded to floats at the file's own rate; the engine converts it to each
    /// device's rate as it plays.
    ///
    /// The file is read in blocks and given up on as soon as it is longer than
    /// ``AudioClip/maximumDuration``, so a huge file costs no more memory than a clip may hold.
    ///
    /// - Throws: ``AudioFileError`` naming the file and the problem.
    public init(contentsOfFile path: String) throws(AudioFileError) {
        if access(path, R_OK) != 0 { throw .unreadable(path: path, reason: String(cString: strerror(errno))) }
        var info = SF_INFO()
        guard let file = sf_open(path, Int32(SFM_READ), &info) else { throw .notAudio(path: path, reason: String(cString: sf_strerror(nil))) }
        defer { sf_close(file) }
        let channels = Int(info.channels)
        guard (1...2).contains(channels) else { throw .clip(.channelCount(name: path, channels)) }
        let rate = Double(info.samplerate)
        guard AudioClip.sampleRates.contains(rate) else { throw .clip(.sampleRate(name: path, rate)) }
        // Declared lengths can lie (a truncated file, a stream): read until the end, bounded.
        let limit = Int(AudioClip.maximumDuration * rate) + 1
        var samples: [Float] = []
        samples.reserveCapacity(min(max(Int(info.frames), 0), limit) * channels)
        let blockFrames = 8_192
        var block = [Float](repeating: 0, count: blockFrames * channels)
        var frames = 0
        while true {
            let read = block.withUnsafeMutableBufferPointer { sf_readf_float(file, $0.baseAddress, sf_count_t(blockFrames)) }
            if read < 0 || sf_error(file) != 0 {
                throw .decodingFailed(path: path, reason: String(cString: sf_strerror(file)))
            }
            if read == 0 { break }
            frames += Int(read)
            if frames > limit { throw .clip(.tooLong(name: path, seconds: Double(frames) / rate)) }
            samples.append(contentsOf: block[0..<(Int(read) * channels)])
        }
        do {
            try self.init(interleaved: samples, channelCount: channels, sampleRate: rate, name: path)
        } catch {
            throw .clip(error)
        }
    }
}

/// An audio file read in blocks and mixed down to mono, for analysis of any length in bounded
/// memory (``AudioClip/init(contentsOfFile:)`` holds a whole clip instead). It owns libsndfile's
/// handle and closes it when released.
public final class AudioFileReader {
    /// The file.
    public let path: String
    /// Frames per second.
    public let sampleRate: Double
    /// Channels in the file (mixed down to one by ``read(into:)``).
    public let channelCount: Int
    /// The frames the header declares (it may lie, for a truncated file or a stream).
    public let declaredFrames: Int
    private let file: OpaquePointer
    private var interleaved: [Float] = []

    /// Opens `path` (WAV, AIFF, FLAC, Ogg Vorbis or Opus, MP3: whatever libsndfile reads).
    /// - Throws: ``AudioFileError`` naming the file and the problem.
    public init(path: String) throws(AudioFileError) {
        if access(path, R_OK) != 0 { throw .unreadable(path: path, reason: String(cString: strerror(errno))) }
        var info = SF_INFO()
        guard let file = sf_open(path, Int32(SFM_READ), &info) else { throw .notAudio(path: path, reason: String(cString: sf_strerror(nil))) }
        guard info.channels > 0, info.samplerate > 0 else {
            sf_close(file)
            throw .notAudio(path: path, reason: "\(info.channels) channels at \(info.samplerate) Hz")
        }
        self.path = path
        self.file = file
        sampleRate = Double(info.samplerate)
        channelCount = Int(info.channels)
        declaredFrames = max(0, Int(info.frames))
    }

    deinit { sf_close(file) }

    /// Reads the next frames, each channel's mean, into `block` (up to its count); returns how
    /// many were read (0 at the end).
    /// - Throws: ``AudioFileError/decodingFailed(path:reason:)``.
    public func read(into block: inout [Float]) throws(AudioFileError) -> Int {
        let frames = block.count
        if interleaved.count < frames * channelCount { interleaved = [Float](repeating: 0, count: frames * channelCount) }
        let read = interleaved.withUnsafeMutableBufferPointer { sf_readf_float(file, $0.baseAddress, sf_count_t(frames)) }
        if read < 0 || sf_error(file) != 0 { throw .decodingFailed(path: path, reason: String(cString: sf_strerror(file))) }
        let count = Int(read)
        if channelCount == 1 {
            for index in 0..<count { block[index] = interleaved[index] }
        } else {
            let scale = 1 / Float(channelCount)
            for frame in 0..<count {
                var sum: Float = 0
                for channel in 0..<channelCount { sum += interleaved[frame * channelCount + channel] }
                block[frame] = sum * scale
            }
        }
        return count
    }

    /// Reads the rest of the file in blocks of `blockFrames`, handing each (mono) to `body`;
    /// returns the frames read.
    /// - Throws: ``AudioFileError/decodingFailed(path:reason:)``, or what `body` throws.
    @discardableResult
    public func stream(blockFrames: Int = 16_384, _ body: (UnsafeBufferPointer<Float>) throws -> Void) throws -> Int {
        var block = [Float](repeating: 0, count: blockFrames)
        var total = 0
        while true {
            let count = try read(into: &block)
            if count == 0 { return total }
            total += count
            try block.withUnsafeBufferPointer { try body(UnsafeBufferPointer(rebasing: $0[0..<count])) }
        }
    }
}
