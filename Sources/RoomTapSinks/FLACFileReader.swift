import CFLAC
import Glibc

/// Reads a FLAC file's samples a piece at a time with libFLAC's stream decoder
/// (https://xiph.org/flac/api/group__flac__stream__decoder.html), one FLAC frame decoded at a time
/// (at most STREAMINFO's largest block held), shifted to 16 bits.
///
/// A file cut short (a killed recorder's, before `roomtap repair`) is read up to its last frame
/// that decodes: the first decode error ends the audio, and ``endedAtDamage`` says so.
///
/// Thread: one thread at a time.
public final class FLACFileReader: SampleReader {
    public let path: String
    public let sampleRate: Int
    public let channels: Int
    /// Bits per sample of the file (samples are given as 16-bit).
    public let bitsPerSample: Int
    /// Sample frames STREAMINFO states (0: not known, as a killed encoder leaves it).
    public let statedFrames: Int64
    /// Whether the audio ended at a frame that did not decode, before the end of the file.
    public private(set) var endedAtDamage = false

    private let decoder: UnsafeMutablePointer<FLAC__StreamDecoder>
    private let state: UnsafeMutablePointer<roomtap_flac_pcm>
    private let pcm: UnsafeMutablePointer<Int16>
    private var position = 0  // samples of `state.filled` already given
    private var ended = false

    /// Opens `path` and reads its STREAMINFO. Throws ``WAVError``: `.cannotOpen`, `.notAWAV` (not
    /// a FLAC file), `.unsupportedFormat` (more than 8 channels or no samples per block).
    public init(path: String) throws(WAVError) {
        guard let decoder = FLAC__stream_decoder_new() else {
            throw WAVError(path: path, message: "libFLAC: out of memory", kind: .readFailed)
        }
        let state = UnsafeMutablePointer<roomtap_flac_pcm>.allocate(capacity: 1)
        state.initialize(to: roomtap_flac_pcm())
        func fail(_ error: WAVError) -> WAVError {
            FLAC__stream_decoder_delete(decoder)
            state.deallocate()
            return error
        }
        guard roomtap_flac_init_pcm(decoder, path, state) == FLAC__STREAM_DECODER_INIT_STATUS_OK else {
            throw fail(
                WAVError(
                    path: path, message: "cannot open: \(PosixFile.describe(errno))", kind: .cannotOpen, errno: errno))
        }
        guard FLAC__stream_decoder_process_until_end_of_metadata(decoder) != 0, state.pointee.channels > 0 else {
            _ = FLAC__stream_decoder_finish(decoder)
            throw fail(WAVError(path: path, message: "is not a FLAC file (no STREAMINFO)", kind: .notAWAV))
        }
        let info = state.pointee
        guard (1...8).contains(info.channels), info.max_blocksize > 0, info.sample_rate > 0 else {
            _ = FLAC__stream_decoder_finish(decoder)
            throw fail(
                WAVError(
                    path: path, message: "has a STREAMINFO roomtap cannot read (\(info.channels) channels)",
                    kind: .unsupportedFormat))
        }
        let capacity = Int(info.max_blocksize) * Int(info.channels)
        pcm = .allocate(capacity: capacity)
        state.pointee.pcm = pcm
        state.pointee.capacity = capacity
        self.decoder = decoder
        self.state = state
        self.path = path
        sampleRate = Int(info.sample_rate)
        channels = Int(info.channels)
        bitsPerSample = Int(info.bits)
        statedFrames = Int64(info.total_samples)
    }

    deinit {
        _ = FLAC__stream_decoder_finish(decoder)
        FLAC__stream_decoder_delete(decoder)
        pcm.deallocate()
        state.deallocate()
    }

    public func read(into destination: UnsafeMutablePointer<Int16>, frames: Int) throws(WAVError) -> Int {
        var done = 0
        while done < frames {
            let available = (state.pointee.filled - position) / channels
            if available == 0 {
                guard decodeNextFrame() else { break }
                continue
            }
            let take = min(available, frames - done)
            (destination + done * channels).update(from: pcm + position, count: take * channels)
            position += take * channels
            done += take
        }
        return done
    }

    /// Decodes one more FLAC frame into `pcm`. False at the end of the audio.
    private func decodeNextFrame() -> Bool {
        guard !ended else { return false }
        state.pointee.filled = 0
        position = 0
        while state.pointee.filled == 0 {
            let errors = state.pointee.errors
            let ok = FLAC__stream_decoder_process_single(decoder) != 0
            let decoderState = FLAC__stream_decoder_get_state(decoder)
            if !ok || state.pointee.errors != errors || state.pointee.refused != 0
                || decoderState == FLAC__STREAM_DECODER_ABORTED
            {
                endedAtDamage = true
                state.pointee.filled = 0
                ended = true
                return false
            }
            if decoderState == FLAC__STREAM_DECODER_END_OF_STREAM && state.pointee.filled == 0 {
                ended = true
                return false
            }
        }
        return true
    }
}
