import Foundation
import RoomTapAll

/// A track's file as the review page and `timeline` read it: its format and layout (so the page
/// can fetch stretches of a WAV's samples itself), and its samples, read once from start to end in
/// chunks (hours-long files are never loaded whole) through ``RecordedAudio``: WAV as it is, FLAC
/// decoded by libFLAC, Ogg Opus decoded at 48 kHz by libopus.
///
/// Thread: a value; ``forEachChunk(_:)`` runs on the caller's thread and blocks in read(2).
struct LaneAudio {
    /// Where a WAV's samples are: the page's byte-range reads start at `dataOffset`.
    struct WAVLayout: Encodable {
        var dataOffset: Int64
        /// Bytes of whole sample frames that the file holds (a cut-short file: what reached the disk).
        var dataBytes: Int64
        var blockAlign: Int
        var bitsPerSample: Int
    }

    let path: String
    /// "wav", "flac" or "opus".
    let format: String
    let sampleRate: Int
    let channels: Int
    /// Length of the file's audio, seconds.
    let duration: Double
    let wav: WAVLayout?

    /// Looks at the file's header (a FLAC file whose STREAMINFO has no length, as a killed
    /// recorder leaves it, is decoded once to count). Throws a ``RuntimeError`` naming the file
    /// and what is wrong.
    init(path: String) throws {
        self.path = path
        switch AudioFileFormat.fromExtension(of: path) {
        case .wav, nil:
            let file: WAVFile
            do { file = try WAVFile.inspect(path: path) } catch { throw RuntimeError(description: "\(error)") }
            format = "wav"
            sampleRate = file.sampleRate
            self.channels = file.channels
            duration = file.duration
            wav = WAVLayout(
                dataOffset: file.dataOffset, dataBytes: file.frameCount * Int64(file.blockAlign),
                blockAlign: file.blockAlign, bitsPerSample: file.bitsPerSample)
        case .opus:
            let info: OggOpusFileInfo
            do { info = try OggOpusFileInfo.inspect(path: path) } catch { throw RuntimeError(description: "\(error)") }
            format = "opus"
            sampleRate = 48_000
            self.channels = max(1, min(2, info.head.channelCount))
            duration = Double(info.durationSamples) / 48_000
            wav = nil
        case .flac:
            let reader: FLACFileReader
            do { reader = try FLACFileReader(path: path) } catch { throw RuntimeError(description: "\(error)") }
            format = "flac"
            sampleRate = reader.sampleRate
            self.channels = reader.channels
            var frames = reader.statedFrames
            if frames == 0 {
                let scratch = UnsafeMutablePointer<Int16>.allocate(capacity: 4_800 * reader.channels)
                defer { scratch.deallocate() }
                while let n = try? reader.read(into: scratch, frames: 4_800), n > 0 { frames += Int64(n) }
            }
            duration = Double(frames) / Double(reader.sampleRate)
            wav = nil
        }
    }

    /// Calls `body` with the file's interleaved samples, about a second at a time, in order.
    /// Throws a ``RuntimeError`` when the file cannot be read.
    func forEachChunk(_ body: (UnsafeBufferPointer<Int16>) -> Void) throws {
        let reader = try RecordedAudio.open(path)
        let frames = reader.sampleRate
        let chunk = UnsafeMutablePointer<Int16>.allocate(capacity: frames * reader.channels)
        defer { chunk.deallocate() }
        while true {
            let n: Int
            do {
                n = try reader.read(into: chunk, frames: frames)
            } catch {
                throw RuntimeError(description: "\(error)")
            }
            if n == 0 { break }
            body(UnsafeBufferPointer(start: chunk, count: n * reader.channels))
        }
    }
}
