import Foundation
import RoomTapAll
import RoomTapSync

/// The agent of a recorded room (`record --agent`, or `--agent-pipeline` for a ``PipelineAgent``
/// that hears per-speaker turns): a ``RealtimeAgent`` whose voice is the track
/// `agent` (recorded to agent.wav, mixed, played, sent as RTP with --agent-send) and who hears a
/// mix-minus of the chosen human tracks after their controls, never itself. Transcripts go to
/// transcript.jsonl. Whatever happens to the agent's connection, the room records on untouched.
///
/// Thread: created and attached on the recorder's main thread; `trackAdded` on whichever thread
/// adds a track (the room's add-track handler); `handle` on the control server's thread.
final class RoomAgent: Sendable {
    let options: AgentOptions
    /// The agent, whichever kind: ``realtime`` (`--agent`) or ``pipeline`` (`--agent-pipeline`).
    let engine: any AgentEngine
    let realtime: RealtimeAgent?
    let pipeline: PipelineAgent?
    let transcript: TranscriptWriter
    private let tracks: Locked<AgentTracks?>
    /// The room attached to (for solo, in what the pipeline agent hears).
    private let room: Locked<Room?>
    private let sender: RTPOpusSender?
    /// The voice into the joined room (`--agent-publish`).
    private let published: RTPOpusSender?
    /// The built-in room tools (mute_track, ...), acting through the control handler.
    let tools: RoomTools

    /// Checks the key and opens transcript.jsonl and the RTP sender; nothing connects yet.
    /// `recordLagSamples`: how much later than heard the files hold the audio (transcript times
    /// follow the files).
    /// `publish`: where the voice goes besides `--agent-send` (a WebRTC connection into the joined
    /// room, `--agent-publish`).
    /// `transcript`: the room's transcript.jsonl (the caller closes it); `humanLines`: whether
    /// the agent's session transcribes what it hears (off with `--transcribe`, whose per-speaker
    /// sessions write the humans' lines).
    /// `environment`: the API key, and the environment of `--agent-tools`' commands; `console`:
    /// where the agent's warnings go.
    init(
        options: AgentOptions, transcript: TranscriptWriter, environment: [String: String], console: Console,
        humanLines: Bool = true, publish: (transport: any RTPPacketTransport, ssrc: UInt32, payloadType: UInt8)? = nil
    ) throws {
        let key = try Self.apiKey(in: environment, azure: options.azure)
        let tracks = Locked<AgentTracks?>(nil)
        let room = Locked<Room?>(nil)
        self.tracks = tracks
        self.room = room
        self.options = options
        do {
            sender = try options.send.map { try RTPOpusSender(destination: $0) }
            published = try publish.map {
                try RTPOpusSender(transport: $0.transport, ssrc: $0.ssrc, payloadType: $0.payloadType)
            }
        } catch { throw RuntimeError(description: "\(error)") }
        self.transcript = transcript
        let tools = RoomTools()
        self.tools = tools
        let userTools = options.userTools
        let toolRunner: @Sendable (RealtimeFunctionCall) -> RealtimeToolResult = { call in
            if let tool = userTools.first(where: { $0.name == call.name }) {
                guard call.argumentObject != nil else {
                    return .error("the arguments of \(call.name) are not a JSON object")
                }
                return tool.run(arguments: call.arguments.isEmpty ? "{}" : call.arguments, environment: environment)
            }
            return tools.run(call)
        }
        let toolDefinitions = RoomTools.definitions + options.userTools.map(\.definition)
        if let pipelineOptions = options.pipeline {
            // A turn reaches the chat model only from a speaker the agent hears now: one of
            // agent-hears' inputs (--agent-hears) whose heard gain is not 0 (mute, solo elsewhere).
            let hears: @Sendable (String) -> Bool = { name in
                guard let inputs = tracks.withLock({ $0?.hears.mixer?.inputs }) else { return options.hears(name) }
                guard let track = inputs.first(where: { $0.name == name }) else { return false }
                let soloActive = room.withLock { $0.map { !$0.soloedTracks.isEmpty } ?? false }
                return track.controls.state.heardGain(soloActive: soloActive) > 0
            }
            let agent = try RoomPipeline.make(
                options: options, pipeline: pipelineOptions, key: key, transcript: transcript, tools: toolDefinitions,
                toolRunner: toolRunner, hears: hears, console: console)
            engine = agent
            pipeline = agent
            realtime = nil
            return
        }
        var settings = RealtimeSessionSettings(
            model: options.model, instructions: options.instructions, voice: options.voice,
            vadThreshold: options.vadThreshold, vadSilenceDurationMs: options.vadSilenceMilliseconds,
            transcriptionModel: humanLines ? options.transcriptionModel : nil)
        settings.tools = toolDefinitions
        settings.turnDetection = options.turnDetection
        settings.idleTimeoutMs = options.idleTimeoutMilliseconds
        settings.noiseReduction = options.noiseReduction
        settings.transcriptionLanguage = options.transcriptionLanguage
        settings.transcriptionPrompt = options.transcriptionPrompt
        var configuration = RealtimeAgentConfiguration(
            apiKey: key, url: options.url, session: settings, chunkMilliseconds: options.chunkMilliseconds,
            transcript: transcript,
            log: { line in console.printWarning("agent: \(line)") })
        configuration.toolRunner = toolRunner
        if options.azure {
            configuration.authentication = .azureAPIKey
            configuration.keyName = Self.azureKeyName
        }
        do {
            let agent = try RealtimeAgent(configuration: configuration)
            engine = agent
            realtime = agent
            pipeline = nil
        } catch { throw RuntimeError(description: "cannot set up the agent: \(error)") }
    }

    static let azureKeyName = "AZURE_OPENAI_API_KEY"

    /// The key: OpenAI's from `OPENAI_API_KEY`, an Azure OpenAI resource's (`azure`) from
    /// `AZURE_OPENAI_API_KEY`; one clear line when it is missing or blank. `record` checks it
    /// before it creates anything.
    static func apiKey(in environment: [String: String], azure: Bool, option: String = "--agent") throws -> String {
        let name = azure ? azureKeyName : "OPENAI_API_KEY"
        guard let key = environment[name], !key.trimmingCharacters(in: .whitespaces).isEmpty else {
            let who = option == "--agent" ? "the agent" : option
            throw RuntimeError(
                description: azure
                    ? "\(who) on Azure OpenAI needs the resource's key: export AZURE_OPENAI_API_KEY=... (sent "
                        + "only in the api-key header; never printed or written anywhere)"
                    : "\(option) needs an OpenAI API key: export OPENAI_API_KEY=... (it is never printed or written "
                        + "anywhere)")
        }
        return key
    }

    /// Adds the agent's voice and what it hears to `room`; `humans` are the tracks already there.
    func attach(to room: Room, humans: [AudioTrack]) {
        let heard = humans.filter { $0.role.isSpeaker && options.hears($0.name) }
        // Fires the add-track handler: no lock held.
        let attached = engine.attach(to: room, hearing: heard, voiceName: "agent", hearsName: "agent-hears")
        tracks.withLock { $0 = attached }
        self.room.withLock { $0 = room }
    }

    /// True for the tracks the agent itself added (its voice, its mix-minus).
    func owns(_ track: AudioTrack) -> Bool { engine.isOwn(track) }

    /// A track joined the room (a live participant, the microphone): the agent hears it if chosen.
    /// The voice track gets the RTP sender.
    func trackAdded(_ track: AudioTrack) {
        if track.source === engine.voice {
            if let sender { track.addSink(sender, tap: .heard) }
            if let published { track.addSink(published, tap: .heard) }
            return
        }
        if options.hears(track.name) { engine.hear(track) }
    }

    func start() { engine.start() }

    /// Ends the session and flushes the RTP senders (the transcript is the caller's). Idempotent.
    func stop() {
        engine.stop()
        try? sender?.close()
        try? published?.close()
    }

    /// `roomtap agent say|instructions|mute|unmute` (the control socket's `agent`, its parameters
    /// checked by ``ControlCommand``). Control server's thread; never waits.
    func handle(_ action: ControlCommand.AgentAction) -> ControlResponse {
        switch action {
        case .say(let text):
            engine.say(text)
            return .ok(.object(["message": .string("the agent will answer: \(text)")]))
        case .instructions(let text):
            engine.setInstructions(text)
            return .ok(.object(["message": .string("instructions changed")]))
        case .mute:
            engine.setListening(false)
            return .ok(.object(["message": .string("the agent no longer hears the room (session kept)")]))
        case .unmute:
            engine.setListening(true)
            return .ok(.object(["message": .string("the agent hears the room again")]))
        }
    }

    /// The `agent` object of `status`: the state (idle, connecting, connected, reconnecting,
    /// stopped, failed), the last error, the retry count, a refused session.update, counters.
    var status: JSONValue {
        if let pipeline { return RoomPipeline.status(pipeline) }
        guard let agent = realtime else { return .object([:]) }
        let s = agent.statistics
        var object: [String: JSONValue] = [
            "state": .string(s.state.rawValue), "retries": .number(Double(s.retries)),
            "reconnects": .number(Double(s.reconnects)), "rollovers": .number(Double(s.rollovers)),
            "responses": .number(Double(s.responses)), "barge_ins": .number(Double(s.bargeIns)),
            "errors": .number(Double(s.errors)), "listening": .bool(engine.isListening),
        ]
        if let e = s.lastError { object["last_error"] = .string(e) }
        if let w = s.sessionWarning { object["session_warning"] = .string(w) }
        if let f = s.failure { object["failure"] = .string(f) }
        return .object(object)
    }

    /// For room.json (never the key).
    struct Report: Codable {
        var model: String
        var voice: String
        var url: String
        /// `bearer` or `api-key` (Azure): how the key was sent (never the key).
        var authentication: String
        var instructionsFile: String?
        /// --agent-tools: the file and the user tools' names.
        var toolsFile: String?
        var userTools: [String]?
        var hears: [String]
        var sendTo: String?
        var rtpPacketsSent: Int?
        var transcriptLines: Int
        /// The Realtime agent's numbers (`--agent`).
        var statistics: RealtimeAgentStatistics?
        /// The pipeline agent's (`--agent-pipeline`): models, turns, replies, latency.
        var pipeline: RoomPipeline.Report?
    }

    var report: Report {
        let hears = tracks.withLock { $0?.hears.mixer }?.inputs.map(\.name) ?? []
        return Report(
            model: pipeline.map { _ in options.pipeline?.chatModel ?? "" } ?? options.model, voice: options.voice,
            url: realtime?.configuration.url ?? options.pipeline?.baseURL ?? "",
            authentication: realtime?.configuration.authentication.rawValue ?? "bearer",
            instructionsFile: options.instructionsFile, toolsFile: options.toolsFile,
            userTools: options.userTools.isEmpty ? nil : options.userTools.map(\.name), hears: hears,
            sendTo: options.send?.description,
            rtpPacketsSent: sender?.packetsSent, transcriptLines: transcript.lineCount,
            statistics: realtime?.statistics,
            pipeline: pipeline.map { RoomPipeline.report($0, options: options.pipeline) })
    }
}
