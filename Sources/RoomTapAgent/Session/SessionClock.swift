/// One session's input audio clock: maps the offsets the server gives (`audio_start_ms`,
/// `audio_end_ms`: milliseconds into all audio appended in the session) back to room samples,
/// through the room sample of every run of chunks sent. A new session starts a new clock.
///
/// Thread: a value, kept under the agent's lock.
struct SessionClock {
    /// Where runs of contiguous chunks start: (24 kHz session sample, 48 kHz room sample).
    private var segments: [(session: Int64, room: Int64)] = []
    /// 24 kHz samples appended this session.
    private(set) var sessionSamples: Int64 = 0
    private var lastChunkEnd: Int64 = -1

    /// The room sample of the first audio appended since the last commit, and the 24 kHz samples
    /// appended since (a transcription session that commits its own turns).
    private(set) var turnStart: Int64?
    private(set) var turnSamples = 0

    /// The audio since the last commit as one turn: its room span, when it holds `minimum` 24 kHz
    /// samples (the service refuses a commit under 100 ms); the next turn starts after it.
    mutating func takeTurn(minimum: Int = 2_400) -> (start: Int64, end: Int64)? {
        guard let start = turnStart, turnSamples >= minimum, let end = lastRoomSample else { return nil }
        turnStart = nil
        turnSamples = 0
        return (start, end)
    }

    /// `count` 24 kHz samples heard from room sample `roomSample` on were appended.
    mutating func appended(count: Int, roomSample: Int64) {
        if turnStart == nil { turnStart = roomSample }
        turnSamples += count
        if roomSample != lastChunkEnd || segments.isEmpty {
            segments.append((sessionSamples, roomSample))
            if segments.count > 512 { segments.removeFirst(256) }
        }
        sessionSamples += Int64(count)
        lastChunkEnd = roomSample + 2 * Int64(count)
    }

    /// The room sample (48 kHz) just after the last audio appended; nil before any.
    var lastRoomSample: Int64? { lastChunkEnd < 0 ? nil : lastChunkEnd }

    /// The room sample (48 kHz) of session offset `ms`; nil before any audio was sent.
    func roomSample(sessionMs ms: Int) -> Int64? {
        let sample = Int64(max(0, ms)) * 24
        guard let seg = segments.last(where: { $0.session <= sample }) ?? segments.first else { return nil }
        return seg.room + 2 * (sample - seg.session)
    }
}
