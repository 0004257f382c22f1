import Foundation
import RoomTap

/// `record --agent ...`: what the agent is told, how it sounds, what it hears, where it connects.
struct AgentOptions {
    static let voices = ["alloy", "ash", "ballad", "coral", "echo", "sage", "shimmer", "verse", "marin", "cedar"]

    var instructions = ""
    var instructionsFile: String?
    var voice = "marin"
    /// nil: every human track; otherwise these track names.
    var hears: [String]?
    var send: ListenAddress?
    var model = "gpt-realtime"
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
        let enabled = args.flag("--agent")
        var o = AgentOptions()
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
        let given =
            azure || publish
            || [file, voice, hears, send, model, url, threshold, silence, transcription, chunk, tools].contains {
                $0 != nil
            }
        guard enabled else {
            if given { throw UsageError(description: "--agent-* options need --agent", command: "record") }
            return nil
        }
        if publish {
            guard args.value("--join") != nil else {
                throw UsageError(
                    description: "--agent-publish publishes into the room of --join janus+http://...; give --join too",
                    command: "record")
            }
            o.publish = true
        }
        o.instructionsFile = file  // read by ``readInstructions()``: a missing file is bad input, not usage
        if let voice {
            guard voices.contains(voice) else {
                throw UsageError(
                    description: "--agent-voice '\(voice)' is not a Realtime voice (\(voices.joined(separator: ", ")))",
                    command: "record")
            }
            o.voice = voice
        }
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
