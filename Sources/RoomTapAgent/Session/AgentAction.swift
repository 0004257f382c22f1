/// What the agent decided to do while holding its lock, done after releasing it: sends, log
/// lines, transcript lines, closes ("decide under the lock, act after it").
///
/// Thread: a value.
enum AgentAction {
    /// A client event (JSON text) on a connection.
    case send(String, on: RealtimeConnection)
    /// One log line (no key, no audio).
    case log(String)
    /// One transcript line.
    case transcript(PendingTranscriptLine)
    /// Close a connection (1000).
    case close(RealtimeConnection)
    /// Run a tool for a call of session `generation` (on the tools thread).
    case runTool(RealtimeFunctionCall, generation: Int)
}

/// A line of transcript.jsonl, decided under the lock and written after.
struct PendingTranscriptLine {
    var start: Int64
    var end: Int64
    var speaker: String
    var text: String
    var interrupted = false
    /// The times are on the files' timeline already (a transcription session hears a track's
    /// record): the writer adds no record lag.
    var onRecordTimeline = false
}
