import Foundation

/// How the agent connects and behaves. The API key is kept out of every description, log line and
/// file (``description`` redacts it).
///
/// Thread: a value; use anywhere.
public struct RealtimeAgentConfiguration: Sendable, CustomStringConvertible {
    /// The OpenAI endpoint for `model`.
    public static func defaultURL(model: String) -> String { "wss://api.openai.com/v1/realtime?model=\(model)" }

    /// The WebSocket URL (`wss://` or `ws://`, e.g. a local test server), always with the
    /// session's `model=` (the one place the model is given).
    public var url: String
    /// The API key, sent only in the header ``authentication`` says, never in a URL.
    public var apiKey: String
    /// How the key is sent: `Authorization: Bearer` (OpenAI) or `api-key` (Azure OpenAI). Default:
    /// ``RealtimeAuthentication/forURL(_:)`` of ``url``.
    public var authentication: RealtimeAuthentication
    /// Where the user set the key, named in the line that says it was refused
    /// (`OPENAI_API_KEY`, `AZURE_OPENAI_API_KEY`).
    public var keyName: String
    /// What `session.update` asks for.
    public var session: RealtimeSessionSettings
    /// Audio per `input_audio_buffer.append`, in milliseconds (clamped to 20–100).
    public var chunkMilliseconds: Int
    /// Whether the agent hears the room from the start (``RealtimeAgent/setListening(_:)``).
    public var listening: Bool
    /// Reply audio the voice track can hold, in seconds.
    public var voiceBufferSeconds: Int
    /// Recent transcript lines replayed as context after a reconnect.
    public var contextLines: Int
    /// Seconds to wait before reconnect attempt `n` (1, 2, …): default ``jitteredBackoff(_:)``
    /// (0.5 s doubling to 30 s, each drawn from its upper half so agents that lost the service
    /// together do not come back in step).
    public var reconnectDelay: @Sendable (_ attempt: Int) -> Double
    /// How long a session may last before the agent replaces it (the service ends sessions at 60
    /// minutes; default 55). A session's `expires_at`, when given, brings it forward to
    /// ``rolloverLead`` before that.
    public var sessionLifetime: Duration
    /// The most a rollover is planned before a session's `expires_at` (default 5 minutes). The
    /// lead is never more than ``rolloverShare`` of the session's life: a session that lives 5 s
    /// is replaced 0.5 s before its end, not at once.
    public var rolloverLead: Duration
    /// The share of a session's life (from its opening to its `expires_at`) that the rollover
    /// may take as its lead, 0...0.5 (default 0.1).
    public var rolloverShare: Double
    /// The floor between two connection attempts (reconnects and rollovers alike): no code path
    /// opens connections faster (default 1 s). A rollover is never planned sooner than this after
    /// a session opened.
    public var minimumConnectionInterval: Duration
    /// A session that ends (closed by the server, or `session_expired`) within this long of
    /// opening, or within half the life its `expires_at` gave it, ended "at once" (default 10 s).
    /// It is followed by backoff, never by an immediate new session.
    public var quickSessionEnd: Duration
    /// After this many sessions in a row ended at once, the agent stops with one line (default
    /// 5): a server that keeps closing is not retried forever.
    public var maxQuickSessionEnds: Int
    /// Runs the model's function calls (the tools are ``RealtimeSessionSettings/tools``), on the
    /// agent's tools queue (`roomtap.agent.tools`), calls side by side: it may block (a user tool's
    /// command) but should bound its time. Its output goes back as a `function_call_output`, then
    /// one `response.create` when it is the model's turn. Nil: every call gets an error result.
    public var toolRunner: (@Sendable (RealtimeFunctionCall) -> RealtimeToolResult)?
    /// Where transcript lines go (nil: none). The agent writes, the caller closes.
    public var transcript: TranscriptWriter?
    /// Set for a transcription session (``transcription(apiKey:url:settings:speaker:)``): the
    /// sessions are opened with `?intent=transcription` and set up with these settings; they
    /// never answer, speak or call tools. Nil: a conversation (the agent).
    public var transcription: RealtimeTranscriptionSettings?
    /// With ``transcription``: whose words every line is (the speaker's track name), and the heard
    /// audio is that track's record (so times are on the files' timeline, no record lag added).
    public var speaker: String?
    /// A local voice-activity gate on the heard audio (nil: everything is sent). Transcription
    /// sessions use one so that silence is never sent.
    public var gate: VoiceGate.Settings?
    /// Log lines (one line each, no key, no audio); default standard error.
    public var log: @Sendable (String) -> Void
    /// The time the session timers run on (backoff, the floor, rollover, patience): the wall
    /// clock, or a ``ManualAgentClock`` in tests.
    public var clock: any AgentClock = SystemAgentClock()

    /// A configuration; `url` defaults to the OpenAI endpoint for `session.model`. A `url` with a
    /// `model=` sets `session.model` (check that they agree before, as the CLI does); one without
    /// gets `session.model` added.
    public init(
        apiKey: String, url: String? = nil, session: RealtimeSessionSettings = RealtimeSessionSettings(),
        chunkMilliseconds: Int = 40, listening: Bool = true, voiceBufferSeconds: Int = 300, contextLines: Int = 20,
        reconnectDelay: @escaping @Sendable (Int) -> Double = Self.jitteredBackoff,
        sessionLifetime: Duration = .seconds(55 * 60), rolloverLead: Duration = .seconds(5 * 60),
        rolloverShare: Double = 0.1, minimumConnectionInterval: Duration = .seconds(1),
        quickSessionEnd: Duration = .seconds(10), maxQuickSessionEnds: Int = 5,
        transcript: TranscriptWriter? = nil, log: @escaping @Sendable (String) -> Void = Self.standardErrorLog
    ) {
        self.apiKey = apiKey
        self.authentication = .bearer
        self.keyName = "OPENAI_API_KEY"
        var session = session
        if let url {
            if let model = Self.model(inURL: url) {
                session.model = model
                self.url = url
            } else {
                let model = session.model ?? RealtimeSessionSettings.defaultModel
                session.model = model
                self.url = url + (url.contains("?") ? "&" : "?") + "model=" + model
            }
        } else {
            self.url = Self.defaultURL(model: session.model ?? RealtimeSessionSettings.defaultModel)
        }
        self.session = session
        authentication = RealtimeAuthentication.forURL(self.url)
        if authentication == .azureAPIKey { keyName = "AZURE_OPENAI_API_KEY" }
        self.sessionLifetime = sessionLifetime
        self.rolloverLead = rolloverLead
        self.rolloverShare = max(0, min(0.5, rolloverShare))
        self.minimumConnectionInterval = max(.zero, minimumConnectionInterval)
        self.quickSessionEnd = quickSessionEnd
        self.maxQuickSessionEnds = max(1, maxQuickSessionEnds)
        self.chunkMilliseconds = max(20, min(100, chunkMilliseconds))
        self.listening = listening
        self.voiceBufferSeconds = voiceBufferSeconds
        self.contextLines = contextLines
        self.reconnectDelay = reconnectDelay
        self.transcript = transcript
        self.log = log
    }

    public var description: String {
        "agent url=\(url) model=\(session.model ?? "-") voice=\(session.voice) key=\(apiKey.isEmpty ? "none" : "<redacted>") auth=\(authentication.rawValue)"
    }
}

/// How an agent authenticates to its Realtime endpoint (the key itself is in
/// ``RealtimeAgentConfiguration/apiKey``, never in the URL).
///
/// Thread: a value.
public enum RealtimeAuthentication: String, Sendable, Equatable, Codable {
    /// `Authorization: Bearer <key>` (OpenAI; an Azure Entra token too).
    case bearer
    /// `api-key: <key>` (an Azure OpenAI resource key).
    case azureAPIKey = "api-key"

    /// `azureAPIKey` for a host under `openai.azure.com`, else `bearer`.
    public static func forURL(_ url: String) -> RealtimeAuthentication {
        isAzureHost(url) ? .azureAPIKey : .bearer
    }

    /// True when `url`'s host is an Azure OpenAI resource (`*.openai.azure.com`).
    public static func isAzureHost(_ url: String) -> Bool {
        guard let host = URLComponents(string: url)?.host?.lowercased() else { return false }
        return host.hasSuffix(".openai.azure.com")
    }

    /// The upgrade request's header for `key`: (name, value).
    public func header(key: String) -> (name: String, value: String) {
        switch self {
        case .bearer: ("Authorization", "Bearer \(key)")
        case .azureAPIKey: ("api-key", key)
        }
    }
}

extension RealtimeAgentConfiguration {
    /// The OpenAI endpoint of transcription sessions (no `model=`: the model is in the session).
    public static let defaultTranscriptionURL = "wss://api.openai.com/v1/realtime?intent=transcription"

    /// A transcription session's configuration: `speaker`'s track goes to its own session at `url`
    /// (default ``defaultTranscriptionURL``; a URL without `intent=` gets `intent=transcription`,
    /// and never a `model=`), through a ``VoiceGate`` (`gate`), and every line is `speaker`'s.
    /// A small voice buffer (nothing is spoken); the authentication follows the URL as for the
    /// agent.
    public static func transcription(
        apiKey: String, url: String? = nil, settings: RealtimeTranscriptionSettings, speaker: String,
        gate: VoiceGate.Settings = VoiceGate.Settings(), chunkMilliseconds: Int = 100,
        transcript: TranscriptWriter? = nil, log: @escaping @Sendable (String) -> Void = Self.standardErrorLog
    ) -> RealtimeAgentConfiguration {
        var c = RealtimeAgentConfiguration(
            apiKey: apiKey, url: nil, session: RealtimeSessionSettings(model: nil),
            chunkMilliseconds: chunkMilliseconds,
            voiceBufferSeconds: 1, contextLines: 0, transcript: transcript, log: log)
        var target = url ?? defaultTranscriptionURL
        if !target.split(separator: "?", maxSplits: 1).dropFirst().contains(where: { $0.contains("intent=") }) {
            target += (target.contains("?") ? "&" : "?") + "intent=transcription"
        }
        c.url = target
        c.session.model = nil
        c.authentication = RealtimeAuthentication.forURL(target)
        c.keyName = c.authentication == .azureAPIKey ? "AZURE_OPENAI_API_KEY" : "OPENAI_API_KEY"
        c.transcription = settings
        c.speaker = speaker
        c.gate = gate
        return c
    }

    /// The `model=` of a URL's query, if it has one.
    public static func model(inURL url: String) -> String? {
        guard let query = url.split(separator: "?", maxSplits: 1).dropFirst().first else { return nil }
        for pair in query.split(separator: "&") where pair.hasPrefix("model=") {
            let value = String(pair.dropFirst(6))
            return value.removingPercentEncoding ?? value
        }
        return nil
    }

    /// The default ``reconnectDelay``: attempt `n` waits 0.5 s × 2^(n-1), at most 30 s, times a
    /// random factor in 0.5...1 (jitter). Seconds.
    public static let jitteredBackoff: @Sendable (Int) -> Double = { attempt in
        let base = min(30, 0.5 * Double(1 << min(max(attempt - 1, 0), 6)))
        return base * Double.random(in: 0.5...1)
    }

    /// The rollover lead of a session that lives `life` (from opening to `expires_at`): the
    /// smaller of `lead` and `share` of `life`, never negative.
    public static func rolloverLead(life: Duration, lead: Duration, share: Double) -> Duration {
        guard life > .zero else { return .zero }
        return min(lead, life * share)
    }

    /// Writes a line to standard error (the default ``log``).
    public static let standardErrorLog: @Sendable (String) -> Void = { line in
        var text = line
        text.append("\n")
        text.withUTF8 { bytes in _ = write(2, bytes.baseAddress, bytes.count) }
    }
}
