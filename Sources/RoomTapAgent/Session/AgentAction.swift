/// What the session reducer (``AgentSession``) decided, for the shell (``RealtimeAgent``) to do
/// after releasing its lock: sends, log and transcript lines, closes, connection attempts, tools
/// and the voice track's writes ("decide under the lock, act after it"). Connections are named by
/// their generation; the shell keeps the connection of each.
///
/// Thread: a value.
package enum AgentAction: Equatable {
    /// Make the connection of session `generation` and open it (the upgrade blocks: only the
    /// supervisor thread does this), then report ``SessionInput/connected(generation:)`` or
    /// ``SessionInput/connectFailed(generation:_:)``.
    case open(generation: Int)
    /// A client event with its `event_id`, on the connection of session `generation`.
    case send(RealtimeClientEvent, eventID: String, on: Int)
    /// The chunk of heard audio in hand as `input_audio_buffer.append` (``SessionInput/audioChunk(samples:roomSample:)``).
    case sendAudio(eventID: String, on: Int)
    /// Close the connection of session `generation` (1000). Idempotent.
    case close(generation: Int)
    /// One log line (no key, no audio).
    case log(String)
    /// One transcript line.
    case transcript(PendingTranscriptLine)
    /// Run a tool for a call of session `generation` (on the tools queue), then report
    /// ``SessionInput/toolFinished(_:_:generation:)``.
    case runTool(RealtimeFunctionCall, generation: Int)
    /// Reply audio (24 kHz mono): resample to 48 kHz and queue it on the voice track.
    case play([Int16])
    /// The end of an item's audio: release the resampler's tail and mark what is queued complete.
    case endVoiceRun
    /// Barge-in: drop the queued voice at once and restart the resampler, then report
    /// ``SessionInput/voiceFlushed(stoppedAt:)``.
    case flushVoice
}

/// A line of transcript.jsonl, decided under the lock and written after.
package struct PendingTranscriptLine: Equatable {
    package var start: Int64
    package var end: Int64
    package var speaker: String
    package var text: String
    package var interrupted = false
    /// The times are on the files' timeline already (a transcription session hears a track's
    /// record): the writer adds no record lag.
    package var onRecordTimeline = false
    /// `start` and `end` are positions on the voice ring (an agent line): the shell maps them to
    /// room samples as it writes the line.
    package var onVoiceRing = false
}
