import RoomTapAll

/// A recording's file opened for reading in whichever format roomtap wrote it, by its extension:
/// WAV/RF64 (``WAVStreamReader``), FLAC (``FLACFileReader``, libFLAC) or Ogg Opus (decoded at
/// 48 kHz by libopus, ``OggOpusSampleReader``). What `export`, `timeline` and `view` read.
enum RecordedAudio {
    /// Opens `path`. An Ogg Opus file is decoded to its own channel count (at most 2). Throws a
    /// one-line ``RuntimeError`` naming the file and what is wrong.
    static func open(_ path: String) throws -> any SampleReader {
        do {
            switch AudioFileFormat.fromExtension(of: path) {
            case .wav, nil: return try WAVStreamReader(path: path)
            case .flac: return try FLACFileReader(path: path)
            case .opus: return try OggOpusSampleReader(path: path)
            }
        } catch let error as WAVError {
            throw RuntimeError(description: error.description)
        } catch {
            throw RuntimeError(description: "\(error)")
        }
    }

    /// ``open(_:)``, for a command that works on the room's 48 kHz samples: a file at another rate
    /// (`record --rate`) is one line saying what the command reads.
    static func openAtRoomRate(_ path: String, command: String) throws -> any SampleReader {
        let reader = try open(path)
        guard reader.sampleRate == AudioFrame.sampleRate else {
            throw RuntimeError(
                description: "\(path) is \(reader.sampleRate) Hz; \(command) reads 48 kHz recordings "
                    + "(record without --rate)")
        }
        return reader
    }
}

/// An Ogg Opus file's samples at 48 kHz, decoded by libopus through ``OggOpusFileSource`` (pre-skip
/// and end trimming as the granule positions say; damaged pages concealed), ten milliseconds at a
/// time. Thread: one thread at a time.
final class OggOpusSampleReader: SampleReader {
    let sampleRate = AudioFrame.sampleRate
    let channels: Int
    private let source: OggOpusFileSource
    private let frame: UnsafeMutablePointer<Int16>
    private var next: Int64 = 0  // room sample of the next frame to render
    private var held = 0  // frames of `frame` not given yet
    private var heldAt = 0  // frame index where they start

    init(path: String) throws(IngestError) {
        let info = try OggOpusFileInfo.inspect(path: path)
        channels = max(1, min(2, info.head.channelCount))
        source = try OggOpusFileSource(path: path, channels: channels)
        frame = .allocate(capacity: AudioFrame.samplesPerChannel * channels)
    }

    deinit { frame.deallocate() }

    func read(into destination: UnsafeMutablePointer<Int16>, frames: Int) throws(WAVError) -> Int {
        var done = 0
        while done < frames {
            if held == 0 {
                let left = source.durationSamples - next
                guard left > 0 else { break }
                _ = source.render(
                    into: UnsafeMutableBufferPointer(start: frame, count: AudioFrame.samplesPerChannel * channels),
                    at: next)
                held = Int(min(Int64(AudioFrame.samplesPerChannel), left))
                heldAt = 0
                next += Int64(AudioFrame.samplesPerChannel)
            }
            let take = min(held, frames - done)
            (destination + done * channels).update(from: frame + heldAt * channels, count: take * channels)
            held -= take
            heldAt += take
            done += take
        }
        return done
    }
}
