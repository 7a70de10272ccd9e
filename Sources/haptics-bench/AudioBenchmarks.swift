import Foundation
import Haptics
import HapticsAudioAnalysis
import HapticsAudioFile

#if canImport(Glibc)
import Glibc
#endif

/// Audio to haptics: conversion speed beside decoding alone, and peak memory against the file's
/// length (issue #29's goals: ≥ 200× real time for 3 minutes of stereo 48 kHz, memory flat).
enum AudioBenchmarks {
    static func run(quick: Bool) throws {
        let directory = NSTemporaryDirectory() + "haptics-bench-audio-\(getpid())"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let runs = quick ? 1 : 5
        print("audio → haptics (stereo 48 kHz 16-bit WAV of beats over a tone, read through libsndfile; medians of \(runs))")
        print("length     decode only    decode + analysis   × real time   taps   breakpoints   peak RSS")
        for minutes in quick ? [1.0] : [1.0, 3.0, 10.0, 60.0] {
            let path = directory + "/music-\(Int(minutes)).wav"
            try writeMusic(seconds: minutes * 60, to: path)
            var decode: [Double] = [], convert: [Double] = []
            var clip: HapticClip?
            // An hour's file (691 MB) is converted three times, not five: the row says so.
            for _ in 0..<(minutes >= 60 ? min(runs, 3) : runs) {
                decode.append(try time { _ = try decodeOnly(path) })
                convert.append(try time { clip = try analyse(path) })
            }
            let seconds = minutes * 60
            let taps = clip?.amplitude.filter { $0.emphasis != nil }.count ?? 0
            print(
                pad("\(Int(minutes)) min", 10) + pad(String(format: "%.3f s", median(decode)), 15) + pad(String(format: "%.3f s", median(convert)), 20)
                    + pad(String(format: "%.0f×", seconds / median(convert)), 14) + pad("\(taps)", 7) + pad("\(clip?.amplitude.count ?? 0)", 14)
                    + String(format: "%.1f MB", peakResidentMegabytes()))
            try? FileManager.default.removeItem(atPath: path)
        }
        print("(peak RSS is the process's high-water mark so far: flat rows mean memory does not grow with the file)")
    }

    static func decodeOnly(_ path: String) throws -> Int {
        try AudioFileReader(path: path).stream { _ in }
    }

    static func analyse(_ path: String) throws -> HapticClip {
        let reader = try AudioFileReader(path: path)
        var analyzer = try AudioToHaptics(sampleRate: reader.sampleRate)
        analyzer.reserveCapacity(forSeconds: Double(reader.declaredFrames) / reader.sampleRate)
        try reader.stream { analyzer.feed($0) }
        return try analyzer.finish()
    }

    /// Beats (a 55 Hz kick every 0.5 s, a noise hat between), a quiet 440 Hz tone; written in blocks.
    static func writeMusic(seconds: Double, to path: String) throws {
        let rate = 48_000, frames = Int(seconds * Double(rate))
        guard FileManager.default.createFile(atPath: path, contents: nil), let handle = FileHandle(forWritingAtPath: path) else { throw CocoaError(.fileWriteUnknown) }
        defer { try? handle.close() }
        var header = Data()
        func le32(_ value: Int) { withUnsafeBytes(of: UInt32(value).littleEndian) { header.append(contentsOf: $0) } }
        func le16(_ value: Int) { withUnsafeBytes(of: UInt16(value).littleEndian) { header.append(contentsOf: $0) } }
        header.append(contentsOf: Array("RIFF".utf8)); le32(36 + frames * 4); header.append(contentsOf: Array("WAVEfmt ".utf8))
        le32(16); le16(1); le16(2); le32(rate); le32(rate * 4); le16(4); le16(16)
        header.append(contentsOf: Array("data".utf8)); le32(frames * 4)
        handle.write(header)
        var state: UInt32 = 1
        var block = Data(capacity: 65_536 * 4)
        for index in 0..<frames {
            let t = Double(index) / Double(rate)
            let beat = t.truncatingRemainder(dividingBy: 0.5), offbeat = (t + 0.25).truncatingRemainder(dividingBy: 0.5)
            state = state &* 1_664_525 &+ 1_013_904_223
            let noise = Double(state >> 8) / Double(1 << 24) * 2 - 1
            let value = 0.6 * exp(-beat * 20) * sin(2 * .pi * 55 * beat) + 0.2 * noise * exp(-offbeat * 80) + 0.05 * sin(2 * .pi * 440 * t)
            let sample = Int16(max(-1, min(1, value)) * 32_767)
            withUnsafeBytes(of: sample.littleEndian) { block.append(contentsOf: $0); block.append(contentsOf: $0) }
            if block.count >= 65_536 * 4 {
                handle.write(block)
                block.removeAll(keepingCapacity: true)
            }
        }
        handle.write(block)
    }

    static func time(_ body: () throws -> Void) rethrows -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        try body()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }

    static func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

    static func pad(_ text: String, _ width: Int) -> String { text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count) }

    static func peakResidentMegabytes() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_maxrss) / 1024
    }
}
