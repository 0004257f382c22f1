import Foundation
import RoomTapAll

/// The CLI side of `record --agent-pipeline`: the ``PipelineAgent`` made from the options, its
/// `status` object and its part of room.json (never the key).
enum RoomPipeline {
    /// The agent: chat and speech at the base URL with `key` (Authorization header only), the
    /// room tools, lines into `transcript` (which also brings it every speaker's turn; those of
    /// speakers `hears` refuses are dropped), its warnings to `console`.
    static func make(
        options: AgentOptions, pipeline: PipelineOptions, key: String, transcript: TranscriptWriter,
        tools: [RealtimeTool], toolRunner: @escaping @Sendable (RealtimeFunctionCall) -> RealtimeToolResult,
        hears: @escaping @Sendable (String) -> Bool, console: Console
    ) throws -> PipelineAgent {
        let endpoint = PipelineEndpoint(baseURL: pipeline.baseURL, apiKey: key)
        var configuration = PipelineAgentConfiguration(
            chat: ChatCompletionClient(endpoint: endpoint, model: pipeline.chatModel),
            speech: SpeechClient(endpoint: endpoint, model: pipeline.ttsModel, voice: options.voice))
        configuration.instructions = options.instructions
        configuration.turnSilence = .milliseconds(pipeline.turnSilenceMilliseconds)
        configuration.tools = tools
        configuration.toolRunner = toolRunner
        configuration.transcript = transcript
        configuration.hears = hears
        configuration.log = { line in console.printWarning("agent: \(line)") }
        do { return try PipelineAgent(configuration: configuration) } catch {
            throw RuntimeError(description: "cannot set up the agent: \(error)")
        }
    }

    /// The `agent` object of `status`.
    static func status(_ agent: PipelineAgent) -> JSONValue {
        let s = agent.statistics
        var object: [String: JSONValue] = [
            "kind": "pipeline", "state": .string(s.state), "turns": .number(Double(s.turns)),
            "replies": .number(Double(s.replies)), "barge_ins": .number(Double(s.bargeIns)),
            "retries": .number(Double(s.retries)), "errors": .number(Double(s.errors)),
            "listening": .bool(agent.isListening),
        ]
        if let e = s.lastError { object["last_error"] = .string(e) }
        if let f = s.failure { object["failure"] = .string(f) }
        return .object(object)
    }

    /// room.json's `agent.pipeline`.
    struct Report: Codable {
        var baseURL: String
        var chatModel: String
        var ttsModel: String
        var turnSilenceMs: Int
        var statistics: PipelineAgentStatistics
    }

    static func report(_ agent: PipelineAgent, options: PipelineOptions?) -> Report {
        let o = options ?? PipelineOptions()
        return Report(
            baseURL: o.baseURL, chatModel: o.chatModel, ttsModel: o.ttsModel, turnSilenceMs: o.turnSilenceMilliseconds,
            statistics: agent.statistics)
    }
}
