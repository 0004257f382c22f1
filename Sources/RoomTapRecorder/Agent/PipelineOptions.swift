import Foundation
import RoomTapAll

/// `record --agent-pipeline ...` (docs/AGENT.md, "The pipeline agent"): the agent that knows who
/// is speaking — per-speaker transcription (implied `--transcribe`), a chat model and speech over
/// an OpenAI-compatible HTTP API. The options it shares with the Realtime agent (--agent-voice,
/// --agent-instructions, --agent-hears, --agent-send, --agent-publish, --agent-tools) stay in
/// ``AgentOptions``.
struct PipelineOptions {
    /// The voices of `POST /audio/speech` (a custom voice's id `voice_...` too).
    static let voices = [
        "alloy", "ash", "ballad", "coral", "echo", "fable", "nova", "onyx", "sage", "shimmer", "verse", "marin",
        "cedar",
    ]

    var baseURL = "https://api.openai.com/v1"
    var chatModel = "gpt-4.1-mini"
    var ttsModel = "gpt-4o-mini-tts"
    var turnSilenceMilliseconds = 700

    /// The Realtime agent's own options, refused with --agent-pipeline (with what to use instead).
    static let realtimeOnly: [(String, String)] = [
        ("--agent-model", "--agent-chat-model"), ("--agent-url", "--agent-base-url"), ("--agent-azure", ""),
        ("--agent-vad", "--agent-turn-silence-ms"), ("--agent-vad-threshold", "--agent-turn-silence-ms"),
        ("--agent-vad-silence-ms", "--agent-turn-silence-ms"), ("--agent-vad-eagerness", ""),
        ("--agent-idle-timeout-ms", ""), ("--agent-noise-reduction", ""), ("--agent-chunk-ms", ""),
        ("--agent-transcription", "--transcribe-model"), ("--agent-transcription-language", "--transcribe-language"),
        ("--agent-transcription-prompt", "--transcribe-prompt"),
    ]

    /// The pipeline options of `args`, or nil without --agent-pipeline (and then none of its own
    /// options).
    static func parse(_ args: ParsedArguments) throws(UsageError) -> PipelineOptions? {
        let base = args.value("--agent-base-url")
        let chat = args.value("--agent-chat-model")
        let tts = args.value("--agent-tts-model")
        let silence = args.value("--agent-turn-silence-ms")
        guard args.flag("--agent-pipeline") else {
            if [base, chat, tts, silence].contains(where: { $0 != nil }) {
                throw UsageError(
                    description: "--agent-base-url, --agent-chat-model, --agent-tts-model and --agent-turn-silence-ms "
                        + "need --agent-pipeline", command: "record")
            }
            return nil
        }
        if args.flag("--agent") {
            throw UsageError(
                description: "--agent (the Realtime agent) and --agent-pipeline are two agents: give one",
                command: "record")
        }
        for (option, instead) in realtimeOnly where args.flag(option) || args.value(option) != nil {
            throw UsageError(
                description: "\(option) is the Realtime agent's (--agent)"
                    + (instead.isEmpty ? "" : "; with --agent-pipeline use \(instead)"), command: "record")
        }
        var o = PipelineOptions()
        if let base {
            guard base.hasPrefix("http://") || base.hasPrefix("https://"), URLComponents(string: base)?.host != nil
            else {
                throw UsageError(
                    description: "--agent-base-url '\(base)' must be an http:// or https:// URL such as "
                        + "https://api.openai.com/v1", command: "record")
            }
            let components = URLComponents(string: base)
            if components?.query != nil || components?.user != nil || components?.password != nil {
                throw UsageError(
                    description: "--agent-base-url must not carry a key, a user or a query (it would be logged and "
                        + "written to room.json): give the base URL alone and export OPENAI_API_KEY",
                    command: "record")
            }
            o.baseURL = base
        }
        for (option, value) in [("--agent-chat-model", chat), ("--agent-tts-model", tts)] {
            guard let value else { continue }
            guard !value.isEmpty, value.count <= 128,
                value.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-_.:/".contains($0)) })
            else { throw UsageError(description: "\(option) '\(value)' is not a model name", command: "record") }
        }
        if let chat { o.chatModel = chat }
        if let tts { o.ttsModel = tts }
        if let silence {
            guard let value = Int(silence), (100...10_000).contains(value) else {
                throw UsageError(
                    description: "--agent-turn-silence-ms must be 100...10000, not '\(silence)'", command: "record")
            }
            o.turnSilenceMilliseconds = value
        }
        return o
    }

    /// True when `voice` is a speech voice (a built-in one or a custom voice's id).
    static func isVoice(_ voice: String) -> Bool {
        voices.contains(voice)
            || (voice.hasPrefix("voice_") && voice.count > 6
                && voice.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" })
    }
}
