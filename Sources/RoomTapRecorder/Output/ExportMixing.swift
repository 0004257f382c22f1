import Foundation
import RoomTapAll
import RoomTapFiles

/// The parts of `roomtap export` that read every speaker file at once: the normalized mix and the
/// multichannel file. Files are read in lockstep, ``chunkFrames`` at a time (never whole); a file
/// that ends early counts as silence for the rest.
enum ExportMixing {
    /// Frames per read: 100 ms, a multiple of the limiter's block.
    static let chunkFrames = 4_800

    /// Sums the speakers, each with its gain (dB), into a `channels`-channel mix through the
    /// room's ``Limiter`` (never clips), written with `options`. Returns the mix's loudness and
    /// length in room samples.
    static func mix(
        _ inputs: [String], gainsDB: [Double], channels: Int, to output: String, options: EncodedFileWriter.Options
    ) throws -> (LoudnessMeter.Result?, Int64) {
        try wrapping {
            let readers = try inputs.map { try RecordedAudio.openAtRoomRate($0, command: "export") }
            let gains = gainsDB.map { Float(pow(10, $0 / 20)) }
            let writer = try EncodedFileWriter(path: output, channels: channels, options: options)
            let n = chunkFrames
            let input = UnsafeMutablePointer<Int16>.allocate(capacity: n * 2)
            let sum = UnsafeMutablePointer<Float>.allocate(capacity: n * channels)
            let out = UnsafeMutablePointer<Int16>.allocate(capacity: n * channels)
            defer {
                input.deallocate()
                sum.deallocate()
                out.deallocate()
            }
            var limiter = Limiter()
            while true {
                sum.update(repeating: 0, count: n * channels)
                var longest = 0
                for (reader, gain) in zip(readers, gains) {
                    let got = try reader.read(into: input, frames: n)
                    longest = max(longest, got)
                    let c = reader.channels
                    for f in 0..<got {
                        for o in 0..<channels {
                            // Mono to stereo duplicates; stereo to mono averages.
                            let v: Float =
                                c == channels
                                ? Float(input[f * c + o])
                                : c == 1 ? Float(input[f]) : (Float(input[f * c]) + Float(input[f * c + 1])) / 2
                            sum[f * channels + o] += v * gain
                        }
                    }
                }
                if longest == 0 { break }
                let frames = (longest + Limiter.blockLength - 1) / Limiter.blockLength * Limiter.blockLength
                limiter.process(sum, frames: frames, channels: channels, into: out)
                try writer.append(out, frames: longest)
            }
            try writer.finish()
            return (writer.loudness, writer.samplesWritten)
        }
    }

    /// Writes the speakers as the channels of one file (stereo speakers averaged to one channel),
    /// with `options`. Returns its length in room samples.
    static func interleave(_ inputs: [String], to output: String, options: EncodedFileWriter.Options) throws -> Int64 {
        try wrapping {
            let readers = try inputs.map { try RecordedAudio.openAtRoomRate($0, command: "export") }
            let channels = readers.count
            let writer = try EncodedFileWriter(path: output, channels: channels, options: options)
            let n = chunkFrames
            let input = UnsafeMutablePointer<Int16>.allocate(capacity: n * 2)
            let out = UnsafeMutablePointer<Int16>.allocate(capacity: n * channels)
            defer {
                input.deallocate()
                out.deallocate()
            }
            while true {
                out.update(repeating: 0, count: n * channels)
                var longest = 0
                for (k, reader) in readers.enumerated() {
                    let got = try reader.read(into: input, frames: n)
                    longest = max(longest, got)
                    let c = reader.channels
                    for f in 0..<got {
                        out[f * channels + k] =
                            c == 1 ? input[f] : Int16((Int32(input[f * c]) + Int32(input[f * c + 1])) / 2)
                    }
                }
                if longest == 0 { break }
                try writer.append(out, frames: longest)
            }
            try writer.finish()
            return writer.samplesWritten
        }
    }

    /// Runs `body`, turning a ``WAVError`` or ``OutputFileError`` into the one-line ``RuntimeError``.
    private static func wrapping<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as WAVError {
            throw RuntimeError(description: error.description)
        } catch let error as OutputFileError {
            throw RuntimeError(description: error.description)
        }
    }
}
