import Foundation
import RoomTapSync

/// A transcription session's turns (``RealtimeAgentConfiguration/transcription``): committed by
/// the client when the model takes no turn detection, and at the end nothing a speaker said is
/// lost because the room stopped.
extension RealtimeAgent {
    /// The gate closed (listen thread): with a model that takes no turn detection, the turn is
    /// committed, and its room span kept for the `input_audio_buffer.committed` that names its item.
    /// `trailingSilence`: room samples at the end that are the gate's hangover, not speech (the
    /// line ends where the speaker stopped).
    func endOfTurn(trailingSilence: Int64) { feed(.endOfTurn(trailingSilence: trailingSilence)) }

    /// Sends what the listen sink still holds, lets the server finish the turns it has (a turn cut
    /// off by the end of the room, with no silence after it, is committed with
    /// `input_audio_buffer.commit`), waits up to `timeout` for their transcriptions, then
    /// ``stop()``s. Call once the room no longer feeds the listen sink. Blocks the caller (any
    /// thread but the room clock's); idempotent (later calls only stop).
    public func finishTranscription(timeout: Duration) {
        listenSink.close()  // every frame queued is converted and appended
        endOfTurn(trailingSilence: 0)  // a turn the room's end cut off (client-committed turns)
        let start = MonotonicClock.now
        let deadline = start + timeout
        // The server's answer to the last appends (speech_started) needs a round trip.
        let settled = start + min(timeout, .milliseconds(500))
        // A turn still open this long after the last audio has no silence coming: commit it.
        let silence = configuration.transcription?.vadSilenceDurationMs ?? 500
        let commitAt = start + .milliseconds(silence + 300)
        var committed = false
        state.withLock { $0.finishing = true }
        while true {
            let (connected, talking, pending) = state.withLock { s in
                (s.session.isConnected, s.session.turns.humanTalking, s.session.pendingTranscriptions)
            }
            let now = MonotonicClock.now
            guard connected, now < deadline else { break }
            if pending == 0 && (!talking || committed) && now >= settled { break }
            if talking && !committed && now >= commitAt {
                committed = true
                feed(.commitAudio)
            }
            // Until the next input (the server's events arrive on its connection's thread) or the
            // next moment above, whichever is first: no polling.
            var next = deadline
            if now < settled { next = min(next, settled) }
            if talking && !committed { next = min(next, commitAt) }
            _ = inputs.wait(timeout: .now() + .nanoseconds(Int(min((next - now).nanosecondsClamped, UInt64(Int.max)))))
        }
        stop()
    }
}
