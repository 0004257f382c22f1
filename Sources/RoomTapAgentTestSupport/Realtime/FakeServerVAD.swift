/// The stand-in's server VAD for transcription sessions: it finds turns in the audio appended
/// (24 kHz) the way the service's does, by level on 10 ms blocks: speech starts at the first loud
/// block (reported `prefix_padding_ms` earlier, as the service keeps that much before it), stops
/// after `silence_duration_ms` of quiet (reported where the speech ended), and each stopped turn is
/// committed as one item whose audio is transcribed.
///
/// Thread: a value, kept under the server's lock.
struct FakeServerVAD {
    /// A turn found in the audio.
    struct Turn {
        var itemID: String
        /// Offsets in the session's audio, in ms.
        var startMs: Int
        var endMs: Int
        /// Its audio (24 kHz), from `startMs` to `endMs`.
        var samples: [Int16]
    }

    /// What one append led to, in order.
    enum Event {
        case started(itemID: String, audioStartMs: Int)
        case stopped(Turn)
    }

    /// A 10 ms block at or above this RMS is speech (about −36 dBFS).
    static let speechRMS = 500.0
    static let block = 240

    var prefixPaddingMs = 300
    var silenceDurationMs = 500
    /// False with `turn_detection: null`: audio is only buffered, the client commits each turn.
    var detects = true
    /// Samples appended this session.
    private(set) var position = 0
    /// The audio since the last commit (bounded: at most the last 60 s).
    private var buffer: [Int16] = []
    private var bufferStart = 0
    private var partial: [Int16] = []
    /// The turn in progress: its item, where it is reported to start, where its speech last was.
    private var speech: (itemID: String, startSample: Int, lastVoice: Int)?

    var inSpeech: Bool { speech != nil }

    /// Samples not yet committed.
    var uncommittedSamples: Int { buffer.count }

    /// Takes appended audio; `newItem` names a new turn's item.
    mutating func append(_ samples: [Int16], newItem: () -> String) -> [Event] {
        var events: [Event] = []
        buffer += samples
        if buffer.count > 60 * 24_000 {
            let drop = buffer.count - 60 * 24_000
            buffer.removeFirst(drop)
            bufferStart += drop
        }
        partial += samples
        while partial.count >= Self.block {
            let blockStart = position
            var sum = 0.0
            for s in partial[0..<Self.block] { sum += Double(s) * Double(s) }
            partial.removeFirst(Self.block)
            position += Self.block
            let loud = (sum / Double(Self.block)).squareRoot() >= Self.speechRMS
            guard detects else { continue }
            if var current = speech {
                if loud {
                    current.lastVoice = position
                    speech = current
                } else if position - current.lastVoice >= silenceDurationMs * 24 {
                    events.append(.stopped(commit(end: current.lastVoice)))
                }
            } else if loud {
                let start = max(bufferStart, blockStart - prefixPaddingMs * 24, 0)
                let item = newItem()
                speech = (item, start, position)
                events.append(.started(itemID: item, audioStartMs: start / 24))
            }
        }
        return events
    }

    /// `input_audio_buffer.commit`: the turn in progress (or the audio since the last commit) as
    /// one item, or nil when under 100 ms of audio is uncommitted (the service's error).
    mutating func commit(newItem: () -> String) -> Turn? {
        if speech != nil { return commit(end: position) }
        guard buffer.count >= 2_400 else { return nil }
        speech = (newItem(), bufferStart, position)
        return commit(end: position)
    }

    private mutating func commit(end: Int) -> Turn {
        let current = speech!
        speech = nil
        let from = max(0, current.startSample - bufferStart)
        let to = max(from, min(buffer.count, end - bufferStart))
        let turn = Turn(
            itemID: current.itemID, startMs: current.startSample / 24, endMs: end / 24,
            samples: Array(buffer[from..<to]))
        // What follows the turn stays uncommitted (the server's buffer after a commit).
        buffer.removeFirst(to)
        bufferStart += to
        return turn
    }
}
