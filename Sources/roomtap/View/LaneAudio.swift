import Foundation
import RoomTap

/// A track's file as the review page reads it: its format and layout (so the page can fetch
/// stretches of a WAV's samples itself), and its samples, read once from start to end in chunks
/// (hours-long files are never loaded whole).
///
/// WAV (16-bit PCM, RF64 too) is read as it is; Ogg Opus is decoded at 48 kHz by libopus
/// (``OggOpusFileSource``). FLAC is not decoded here: its lane has no level drawn (``readable``
/// false) but plays in the page, which decodes it.
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

    /// Whether ``forEachChunk(_:)`` can read the samples (WAV and Ogg Opus).
    var readable: Bool { format != "flac" }

    /// Looks at the file's header. Throws a ``RuntimeError`` naming the file and what is wrong.
    init(path: String, channels: Int) throws {
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
            self.channels = max(1, min(2, channels))
            duration = Double(info.durationSamples) / 48_000
            wav = nil
        case .flac:
            format = "flac"
            sampleRate = 48_000
            self.channels = max(1, channels)
            duration = 0
            wav = nil
        }
    }

    /// Calls `body` with the file's interleaved samples, about a second at a time, in order.
    /// Throws a ``RuntimeError`` when the file cannot be read.
    func forEachChunk(_ body: (UnsafeBufferPointer<Int16>) -> Void) throws {
        switch format {
        case "wav": try readWAV(body)
        case "opus": try decodeOpus(body)
        default: return
        }
    }

    private func readWAV(_ body: (UnsafeBufferPointer<Int16>) -> Void) throws {
        guard let wav, let handle = FileHandle(forReadingAtPath: path) else {
            throw RuntimeError(description: "cannot read \(path): \(String(cString: strerror(errno)))")
        }
        defer { try? handle.close() }
        do {
            try handle.seek(toOffset: UInt64(wav.dataOffset))
            var left = Int(wav.dataBytes)
            let chunk = sampleRate * wav.blockAlign
            var samples = [Int16](repeating: 0, count: chunk / 2)
            while left > 0 {
                guard let data = try handle.read(upToCount: min(chunk, left)), !data.isEmpty else { break }
                left -= data.count
                let count = data.count / 2
                data.withUnsafeBytes { raw in
                    for i in 0..<count {
                        samples[i] = Int16(littleEndian: raw.loadUnaligned(fromByteOffset: 2 * i, as: Int16.self))
                    }
                }
                samples.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[..<count])) }
            }
        } catch {
            throw RuntimeError(description: "cannot read \(path): \(error.localizedDescription)")
        }
    }

    private func decodeOpus(_ body: (UnsafeBufferPointer<Int16>) -> Void) throws {
        let source: OggOpusFileSource
        do { source = try OggOpusFileSource(path: path, channels: channels) } catch {
            throw RuntimeError(description: "\(error)")
        }
        let perFrame = AudioFrame.samplesPerChannel * channels
        let framesPerChunk = 100
        var samples = [Int16](repeating: 0, count: perFrame * framesPerChunk)
        let total =
            (source.durationSamples + Int64(AudioFrame.samplesPerChannel) - 1)
            / Int64(AudioFrame.samplesPerChannel)
        var frame: Int64 = 0
        while frame < total {
            let count = Int(min(Int64(framesPerChunk), total - frame))
            samples.withUnsafeMutableBufferPointer { buffer in
                for i in 0..<count {
                    let slot = UnsafeMutableBufferPointer(rebasing: buffer[(i * perFrame)..<((i + 1) * perFrame)])
                    _ = source.render(into: slot, at: (frame + Int64(i)) * Int64(AudioFrame.samplesPerChannel))
                }
            }
            samples.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[..<(count * perFrame)])) }
            frame += Int64(count)
        }
    }
}
