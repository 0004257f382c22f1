import Foundation
import RoomTapAll

/// `record --agent ...`: what the agent is told, how it sounds, what it hears, where it connects.
struct AgentOptions {
    static let voices = ["alloy", "ash", "ballad", "coral", "echo", "sage", "shimmer", "verse", "marin", "cedar"]

    var instructions = ""
    var instructionsFile: String?
    var voice = "marin"
    /// nil: every human track; otherwise these track names.
    var hears: [String]?
    var send: ListenAddress?
    var model = RealtimeSessionSettings.defaultModel
    var url: String?
    var vadThreshold = 0.5
    var vadSilenceMilliseconds = 500
    /// nil: no input transcription.
    var transcriptionModel: String? = "gpt-4o-mini-transcribe"
    var chunkMilliseconds = 40
    /// Azure OpenAI: the key from `AZURE_OPENAI_API_KEY` in the `api-key` header (--agent-azure,
    /// or an --agent-url under `*.openai.azure.com`).
    var azure = false
    /// --agent-tools FILE: the user's own function tools.
    var toolsFile: String?
    /// `--agent-publish`: the agent's voice published into the room joined with `--join`.
    var publish = false
    var userTools: [UserTool] = []
    /// `--agent-vad server|semantic` and `--agent-vad-eagerness` (semantic only).
    var turnDetection = RealtimeSessionSettings.TurnDetection.server
    /// `--agent-idle-timeout-ms` (server VAD only).
    var idleTimeoutMilliseconds: Int?
    /// `--agent-noise-reduction far_field|near_field|none` (nil: none).
    var noiseReduction: String? = "far_field"
    /// `--agent-transcription-language`, `--agent-transcription-prompt`.
    var transcriptionLanguage: String?
    var transcriptionPrompt: String?
    /// `--agent-pipeline`: the pipeline agent instead of the Realtime one (its own options).
    var pipeline: PipelineOptions?

    /// The agent options of `args`, or nil without --agent (and then no other --agent-* option).
    /// Reads `--agent-instructions FILE` into ``instructions`` (trimmed). A file that cannot be
    /// read is bad input like a missing `--file`: one line, exit 1. Main thread, before the plan.
    mutating func readInstructions() throws {
        guard let file = instructionsFile else { return }
        do {
            instructions = try String(contentsOfFile: file, encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines)
        } catch {
            var info = stat()
            let reason =
                stat(file, &info) != 0
                ? String(cString: strerror(errno)) : "not a readable UTF-8 text file"
            throw RuntimeError(
                description: "cannot read --agent-instructions \(file): \(reason); give a text file of instructions")
        }
    }

    static func parse(_ args: ParsedArguments) throws(UsageError) -> AgentOptions? {
        let pipeline = try PipelineOptions.parse(args)
        let enabled = args.flag("--agent") || pipeline != nil
        var o = AgentOptions()
        o.pipeline = pipeline
        let file = args.value("--agent-instructions")
        let voice = args.value("--agent-voice")
        let hears = args.value("--agent-hears")
        let send = args.value("--agent-send")
        let model = args.value("--agent-model")
        let url = args.value("--agent-url")
        let threshold = args.value("--agent-vad-threshold")
        let silence = args.value("--agent-vad-silence-ms")
        let transcription = args.value("--agent-transcription")
        let chunk = args.value("--agent-chunk-ms")
        let azure = args.flag("--agent-azure")
        let publish = args.flag("--agent-publish")
        let tools = args.value("--agent-tools")
        let vad = args.value("--agent-vad")
        let eagerness = args.value("--agent-vad-eagerness")
        let idle = args.value("--agent-idle-timeout-ms")
        let noise = args.value("--agent-noise-reduction")
        let language = args.value("--agent-transcription-language")
        let prompt = args.value("--agent-transcription-prompt")
        let given =
            azure || publish
            || [
                file, voice, hears, send, model, url, threshold, silence, transcription, chunk, tools, vad, eagerness,
                idle, noise, language, prompt,
            ].contains { $0 != nil }
        guard enabled else {
            if given {
                throw UsageError(description: "--agent-* options need --agent or --agent-pipeline", command: "record")
            }
            return nil
        }
        if publish {
            guard args.value("--join") != nil else {
                throw UsageError(
                    description:
                        "--agent-publish publishes into the room of --join janus+http://... or sora+wss://...; give --join too",
                    command: "record")
            }
            o.publish = true
        }
        o.instructionsFile = file  // read by ``readInstructions()``: a missing file is bad input, not usage
        if let voice, pipeline != nil {
            guard PipelineOptions.isVoice(voice) else {
                throw UsageError(
                    description: "--agent-voice '\(voice)' is not a speech voice ("
                        + "\(PipelineOptions.voices.joined(separator: ", ")), or a custom voice's id voice_...)",
                    command: "record")
            }
            o.voice = voice
        } else if let voice {
            // A built-in voice by name, or a custom voice by its id (voice_...).
            let custom =
                voice.hasPrefix("voice_") && voice.count > 6
                && voice.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" }
            guard voices.contains(voice) || custom else {
                throw UsageError(
                    description: "--agent-voice '\(voice)' is not a Realtime voice (\(voices.joined(separator: ", ")), "
                        + "or a custom voice's id voice_...)",
                    command: "record")
            }
            o.voice = voice
        }
        switch vad {
        case nil, "server": o.turnDetection = .server
        case "semantic": o.turnDetection = .semantic(eagerness: "auto")
        default:
            throw UsageError(description: "--agent-vad takes server or semantic, not '\(vad!)'", command: "record")
        }
        if let eagerness {
            guard case .semantic = o.turnDetection else {
                throw UsageError(description: "--agent-vad-eagerness needs --agent-vad semantic", command: "record")
            }
            guard ["low", "medium", "high", "auto"].contains(eagerness) else {
                throw UsageError(
                    description: "--agent-vad-eagerness takes low, medium, high or auto, not '\(eagerness)'",
                    command: "record")
            }
            o.turnDetection = .semantic(eagerness: eagerness)
        }
        if let idle {
            guard case .server = o.turnDetection else {
                throw UsageError(description: "--agent-idle-timeout-ms works with server VAD only", command: "record")
            }
            guard let value = Int(idle), (1_000...600_000).contains(value) else {
                throw UsageError(
                    description: "--agent-idle-timeout-ms must be 1000...600000, not '\(idle)'", command: "record")
            }
            o.idleTimeoutMilliseconds = value
        }
        if let noise {
            guard ["far_field", "near_field", "none"].contains(noise) else {
                throw UsageError(
                    description: "--agent-noise-reduction takes far_field, near_field or none, not '\(noise)'",
                    command: "record")
            }
            o.noiseReduction = noise == "none" ? nil : noise
        }
        if let language {
            guard (2...3).contains(language.count), language.allSatisfy({ ("a"..."z").contains($0) }) else {
                throw UsageError(
                    description: "--agent-transcription-language takes an ISO-639-1 code such as en, not '\(language)'",
                    command: "record")
            }
            o.transcriptionLanguage = language
        }
        o.transcriptionPrompt = prompt
        if let hears, hears != "all" {
            let names = hears.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }
            guard !names.isEmpty, !names.contains(where: \.isEmpty) else {
                throw UsageError(description: "--agent-hears takes 'all' or NAME,NAME,...", command: "record")
            }
            o.hears = names
        }
        if let send {
            guard send.hasPrefix("rtp://"), let address = ListenAddress(String(send.dropFirst(6))), address.port > 0
            else {
                throw UsageError(
                    description: "--agent-send '\(send)' must be rtp://HOST:PORT with a numeric address "
                        + "(e.g. rtp://127.0.0.1:5004)", command: "record")
            }
            o.send = address
        }
        if let model { o.model = model }
        if let url {
            guard url.hasPrefix("ws://") || url.hasPrefix("wss://") else {
                throw UsageError(description: "--agent-url '\(url)' must be a ws:// or wss:// URL", command: "record")
            }
            // A key in a URL ends up in logs, room.json and proxies: it goes in a header only.
            let query = URLComponents(string: url)?.queryItems ?? []
            if query.contains(where: {
                ["api-key", "api_key", "apikey", "key", "access_token"].contains($0.name.lowercased())
            }) {
                throw UsageError(
                    description: "--agent-url must not carry a key (it would be logged and written to room.json): "
                        + "remove it from the URL and export OPENAI_API_KEY (or AZURE_OPENAI_API_KEY for Azure)",
                    command: "record")
            }
            // The model is given in one place: the URL's model= wins unless --agent-model disagrees.
            if let inURL = RealtimeAgentConfiguration.model(inURL: url) {
                if let model, model != inURL {
                    throw UsageError(
                        description: "--agent-model '\(model)' disagrees with the model '\(inURL)' in --agent-url; "
                            + "give the model once", command: "record")
                }
                o.model = inURL
            }
            o.url = url
        }
        if let threshold {
            guard let value = Double(threshold), (0...1).contains(value) else {
                throw UsageError(
                    description: "--agent-vad-threshold must be 0...1, not '\(threshold)'", command: "record")
            }
            o.vadThreshold = value
        }
        if let silence {
            guard let value = Int(silence), (100...5_000).contains(value) else {
                throw UsageError(
                    description: "--agent-vad-silence-ms must be 100...5000, not '\(silence)'", command: "record")
            }
            o.vadSilenceMilliseconds = value
        }
        o.azure = azure || o.url.map(RealtimeAuthentication.isAzureHost) == true
        if azure && o.url == nil {
            throw UsageError(
                description: "--agent-azure needs --agent-url wss://RESOURCE.openai.azure.com/openai/v1/realtime?model="
                    + "DEPLOYMENT", command: "record")
        }
        if let tools {
            o.toolsFile = tools
            o.userTools = try UserTool.load(path: tools, reserved: Set(RoomTools.definitions.map(\.name)))
        }
        if let transcription { o.transcriptionModel = transcription == "none" ? nil : transcription }
        if let chunk {
            guard let value = Int(chunk), (20...100).contains(value) else {
                throw UsageError(description: "--agent-chunk-ms must be 20...100, not '\(chunk)'", command: "record")
            }
            o.chunkMilliseconds = value
        }
        return o
    }

    /// True when the agent should hear a track of this name.
    func hears(_ name: String) -> Bool { hears?.contains(name) ?? true }
}
