import Foundation

/// How a ``PipelineAgent`` talks: its chat model and voice, what it is told, when it answers,
/// what it may do, where its lines go.
///
/// Thread: a value.
public struct PipelineAgentConfiguration: Sendable {
    public var chat: ChatCompletionClient
    public var speech: SpeechClient
    /// The system prompt (`--agent-instructions`).
    public var instructions = ""
    /// The agent answers once no new turn came for this long (`--agent-turn-silence-ms`).
    public var turnSilence: Duration = .milliseconds(700)
    /// A turn holding one of these words (any case, a whole word) addresses the agent: it answers
    /// at once, without waiting for ``turnSilence``.
    public var names = ["agent"]
    /// Recent messages kept whole; older ones become the summary line.
    public var recentMessages = 24
    /// Function tools offered to the chat model (`tools`), run by ``toolRunner``.
    public var tools: [RealtimeTool] = []
    public var toolRunner: (@Sendable (RealtimeFunctionCall) -> RealtimeToolResult)?
    /// Where every human turn comes from (``TranscriptWriter/observe(_:)``) and every reply goes.
    public var transcript: TranscriptWriter?
    /// The agent's speaker name in the transcript (its own lines are not turns).
    public var speakerName = "agent"
    /// Whether the agent hears a speaker now (`--agent-hears`, and the speaker not muted or
    /// soloed away for what is heard): a turn of a speaker it does not hear never reaches the chat
    /// model. Called on the transcript's thread when a line is written.
    public var hears: @Sendable (String) -> Bool = { _ in true }
    /// One line per event worth telling (a failure, a retry); never the key.
    public var log: @Sendable (String) -> Void = { _ in }
    /// Retries of a chat request that failed before anything was said (5xx, timeouts, 429).
    public var retries = 2
    /// The first retry's wait; each next one doubles it.
    public var backoff: Duration = .milliseconds(500)
    /// Speech over the agent for this long stops it (.zero: only a finished turn does).
    public var bargeIn: Duration = .milliseconds(300)
    /// The level of speech that counts for barge-in, in dBFS of a 10 ms frame's RMS.
    public var bargeInThresholdDBFS = -40.0
    /// The time the turn-silence and backoff timers run on.
    public var clock: any AgentClock = SystemAgentClock()
    /// The voice's ring, in seconds of 48 kHz audio.
    public var voiceBufferSeconds = 300

    public init(chat: ChatCompletionClient, speech: SpeechClient) {
        self.chat = chat
        self.speech = speech
    }
}

/// What a ``PipelineAgent`` did, for `status` and room.json (never the key).
///
/// Thread: a value.
public struct PipelineAgentStatistics: Sendable, Codable, Equatable {
    /// `idle`, `running`, `stopped` or `failed`.
    public var state = "idle"
    /// Human turns heard (transcript lines of the speakers while listening).
    public var turns = 0
    /// Replies spoken (at least some audio played or queued).
    public var replies = 0
    public var bargeIns = 0
    public var retries = 0
    public var errors = 0
    /// Turns given up on (a failure after the retries).
    public var droppedTurns = 0
    public var toolCalls = 0
    /// True once the server refused `name` and speakers go in the content.
    public var namesInContent = false
    public var lastError: String?
    /// Why the agent ended (a fatal failure), if it did.
    public var failure: String?
    /// From the end of the turn that was answered (its transcript line) to the reply's first audio
    /// ready to play, in ms; and from the moment the agent decided to answer (turn silence over,
    /// or addressed) to the same point: the chat model's first sentence and the first speech.
    public var turnToFirstAudioMs: Percentiles?
    public var answerToFirstAudioMs: Percentiles?

    public init() {}

    /// p50 / p99 of a list of milliseconds.
    public struct Percentiles: Sendable, Codable, Equatable {
        public var count: Int
        public var p50: Double
        public var p99: Double

        /// nil for an empty list.
        public init?(_ values: [Double]) {
            guard !values.isEmpty else { return nil }
            let sorted = values.sorted()
            func at(_ q: Double) -> Double {
                (sorted[min(sorted.count - 1, Int((q * Double(sorted.count - 1)).rounded()))] * 10).rounded() / 10
            }
            count = values.count
            p50 = at(0.5)
            p99 = at(0.99)
        }
    }
}
