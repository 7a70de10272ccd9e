#if canImport(Glibc)
import Glibc
#endif

/// An in-place radix-2 FFT of one power-of-two size, its twiddles and bit-reversal table made once.
///
/// Written here rather than taken from FFTW: the analysis needs one small real transform per 5 ms
/// hop (1,024 or 2,048 points), which this does in a few microseconds, and a C library with its
/// plans and threads would be a system dependency for that alone (`Docs/AudioToHaptics.md`).
struct FFT {
    let size: Int
    private let cosines: [Float]
    private let sines: [Float]
    private let reversed: [Int]

    /// A transform of `size` points (a power of two, at least 4).
    init(size: Int) {
        precondition(size >= 4 && size & (size - 1) == 0, "an FFT size is a power of two")
        self.size = size
        cosines = (0..<(size / 2)).map { Float(cos(-2 * Double.pi * Double($0) / Double(size))) }
        sines = (0..<(size / 2)).map { Float(sin(-2 * Double.pi * Double($0) / Double(size))) }
        let bits = Int(log2(Double(size)))
        reversed = (0..<size).map { index in
            var result = 0, value = index
            for _ in 0..<bits {
                result = (result << 1) | (value & 1)
                value >>= 1
            }
            return result
        }
    }

    /// The magnitudes of bins 0 … size/2 of the real signal `input` (size samples) into
    /// `magnitudes`, using `real` and `imaginary` (size each) as scratch.
    func magnitudes(of input: UnsafeBufferPointer<Float>, real: UnsafeMutableBufferPointer<Float>, imaginary: UnsafeMutableBufferPointer<Float>,
                    into magnitudes: UnsafeMutableBufferPointer<Float>) {
        for index in 0..<size {
            real[reversed[index]] = input[index]
            imaginary[index] = 0
        }
        var length = 2
        while length <= size {
            let half = length / 2, stride = size / length
            var start = 0
            while start < size {
                for k in 0..<half {
                    let c = cosines[k * stride], s = sines[k * stride]
                    let a = start + k, b = a + half
                    let tr = real[b] * c - imaginary[b] * s
                    let ti = real[b] * s + imaginary[b] * c
                    real[b] = real[a] - tr
                    imaginary[b] = imaginary[a] - ti
                    real[a] += tr
                    imaginary[a] += ti
                }
                start += length
            }
            length *= 2
        }
        for bin in 0...(size / 2) { magnitudes[bin] = (real[bin] * real[bin] + imaginary[bin] * imaginary[bin]).squareRoot() }
    }
}
