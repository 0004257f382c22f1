/// What a control request asks, typed: the one definition of the commands (docs/CONTROL-PROTOCOL.md)
/// that the recorder's handler, the `roomtap` verbs, the live page's `POST /api` and the agent's
/// room tools share. ``init(_:)`` reads and checks a request's parameters (the recorder's side);
/// ``request(id:)`` writes the request a command is sent as (a client's side). For every command
/// `c`, `try ControlCommand(c.request())` is `c`.
///
/// What a command does to a room (which track a name finds, a scope's default, the replies) is the
/// handler's; this type only says what was asked. Parameters a command does not take are ignored.
///
/// Thread: a value.
public enum ControlCommand: Sendable, Equatable {
    /// `ping`: `{"pong": true}`.
    case ping
    /// `hello`: who the recorder is.
    case hello
    /// `tracks`: every track.
    case tracks
    /// `status`: the recorder's numbers.
    case status
    /// `mute`: the mute of `scope` (nil: the command's default, `heard`) is set.
    case mute(track: String, scope: Scope?)
    /// `unmute`: the mute of `scope` (nil: the default, every mute of a speaker) is lifted.
    case unmute(track: String, scope: Scope?)
    /// `volume`: the volume of `scope` (nil: `heard`) set or changed; a mute is never touched.
    case volume(track: String, change: VolumeChange, scope: Scope?)
    /// `solo`: only these tracks are heard (at least one name).
    case solo(tracks: [String])
    /// `unsolo`: every track is heard again.
    case unsolo
    /// `watch`: the reply, then events until the client disconnects.
    case watch
    /// `stop`: stop as SIGINT does, then events until `stopped`.
    case stop
    /// `agent`: the room's agent.
    case agent(AgentAction)

    /// The `cmd` of each command. The order is the one error messages list them in.
    public enum Name: String, Sendable, CaseIterable {
        case ping, hello, tracks, status, mute, unmute, volume, solo, unsolo, watch, stop, agent
    }

    /// The `scope` parameter of `mute`, `unmute` and `volume`: what the change applies to, as the
    /// protocol spells it. (The recorder maps it onto RoomTapCore's `ControlScope`, which has the
    /// same cases; this target does not depend on the audio core.)
    public enum Scope: String, Sendable, CaseIterable {
        /// Mixes, playback and the agent; the track's own file stays raw.
        case heard
        /// The track's own file and the recorded mix.
        case record
        /// Both.
        case all
    }

    /// How `volume` changes a volume.
    public enum VolumeChange: Sendable, Equatable {
        /// Set it to this linear gain, `0...10` (the `volume` parameter; ``VolumeLevel``).
        case set(Float)
        /// Multiply it by 10^(dB/20), clamped to `0...10`, in one atomic step on the recorder (the
        /// `change_db` parameter, `-200...200`).
        case change(decibels: Double)
    }

    /// The `action` of `agent` (with its `text`).
    public enum AgentAction: Sendable, Equatable {
        /// Have the agent say something.
        case say(String)
        /// Replace the agent's instructions.
        case instructions(String)
        /// The agent stops hearing the room (its session is kept).
        case mute
        /// The agent hears the room again.
        case unmute

        /// The `action` parameter.
        public var name: String {
            switch self {
            case .say: return "say"
            case .instructions: return "instructions"
            case .mute: return "mute"
            case .unmute: return "unmute"
            }
        }

        static let names = ["say", "instructions", "mute", "unmute"]
    }

    /// Largest `change_db`, either way (dB).
    public static let maxChangeDecibels = 200.0

    // MARK: Request → command

    /// The command `request` asks for, its parameters checked. Throws the reply to send instead:
    /// `unknown_command` for a `cmd` that is none of ``Name``; `bad_request` for a parameter that is
    /// missing, of the wrong type or not one of its words; `out_of_range` for a volume outside
    /// `0...10` or a `change_db` outside `-200...200`. Each message is one line naming the
    /// parameter (docs/CONTROL-PROTOCOL.md).
    ///
    /// Thread: any; pure.
    public init(_ request: ControlRequest) throws(ControlFailure) {
        guard let name = Name(rawValue: request.command) else {
            let names = Name.allCases.map(\.rawValue).joined(separator: ", ")
            throw ControlFailure(.unknownCommand, "unknown command '\(request.command)' (commands: \(names))")
        }
        switch name {
        case .ping: self = .ping
        case .hello: self = .hello
        case .tracks: self = .tracks
        case .status: self = .status
        case .unsolo: self = .unsolo
        case .watch: self = .watch
        case .stop: self = .stop
        case .mute: self = .mute(track: try request.string("track"), scope: try Self.scope(of: request))
        case .unmute: self = .unmute(track: try request.string("track"), scope: try Self.scope(of: request))
        case .volume:
            let track = try request.string("track")
            let scope = try Self.scope(of: request)
            self = .volume(track: track, change: try Self.volumeChange(of: request), scope: scope)
        case .solo:
            let names = try request.strings("tracks")
            guard !names.isEmpty else { throw ControlFailure(.badRequest, "'solo' needs at least one track name") }
            self = .solo(tracks: names)
        case .agent:
            switch try request.choice("action", AgentAction.names) {
            case "say": self = .agent(.say(try request.string("text")))
            case "instructions": self = .agent(.instructions(try request.string("text")))
            case "mute": self = .agent(.mute)
            case "unmute": self = .agent(.unmute)
            default:
                throw ControlFailure(.badRequest, "'agent' needs \"action\": say, instructions, mute or unmute")
            }
        }
    }

    private static func scope(of request: ControlRequest) throws(ControlFailure) -> Scope? {
        try request.choice("scope", Scope.allCases.map(\.rawValue)).flatMap(Scope.init(rawValue:))
    }

    /// `change_db` (relative) or `volume` (absolute); both is `bad_request`.
    private static func volumeChange(of request: ControlRequest) throws(ControlFailure) -> VolumeChange {
        guard let decibels = try request.optionalNumber("change_db") else { return .set(try request.volume()) }
        guard request.parameters["volume"] == nil else {
            throw ControlFailure(.badRequest, "give \"volume\" or \"change_db\", not both")
        }
        guard abs(decibels) <= maxChangeDecibels else {
            throw ControlFailure(.outOfRange, "\"change_db\" must be -200...200 (dB)")
        }
        return .change(decibels: decibels)
    }

    // MARK: Command → request

    /// The `cmd` of this command.
    public var name: Name {
        switch self {
        case .ping: return .ping
        case .hello: return .hello
        case .tracks: return .tracks
        case .status: return .status
        case .mute: return .mute
        case .unmute: return .unmute
        case .volume: return .volume
        case .solo: return .solo
        case .unsolo: return .unsolo
        case .watch: return .watch
        case .stop: return .stop
        case .agent: return .agent
        }
    }

    /// The request's parameters (every member but `id` and `cmd`). A gain is sent as the number
    /// that reads back as the same `Float`; a scope only when one was given.
    public var parameters: [String: JSONValue] {
        var parameters: [String: JSONValue] = [:]
        switch self {
        case .ping, .hello, .tracks, .status, .unsolo, .watch, .stop: break
        case .mute(let track, let scope), .unmute(let track, let scope):
            parameters["track"] = .string(track)
            if let scope { parameters["scope"] = .string(scope.rawValue) }
        case .volume(let track, let change, let scope):
            parameters["track"] = .string(track)
            if let scope { parameters["scope"] = .string(scope.rawValue) }
            switch change {
            case .set(let gain): parameters["volume"] = .number(Double(gain))
            case .change(let decibels): parameters["change_db"] = .number(decibels)
            }
        case .solo(let tracks):
            parameters["tracks"] = .array(tracks.map(JSONValue.string))
        case .agent(let action):
            parameters["action"] = .string(action.name)
            switch action {
            case .say(let text), .instructions(let text): parameters["text"] = .string(text)
            case .mute, .unmute: break
            }
        }
        return parameters
    }

    /// The request this command is sent as, with `id`.
    public func request(id: JSONValue = .null) -> ControlRequest {
        ControlRequest(id: id, command: name.rawValue, parameters: parameters)
    }

    /// True for the commands about the room's tracks (`tracks`, `mute`, `unmute`, `volume`, `solo`,
    /// `unsolo`): a recorder still setting up its room answers them `starting` (``SetUpGate``).
    public var namesTracks: Bool {
        switch self {
        case .tracks, .mute, .unmute, .volume, .solo, .unsolo: return true
        case .ping, .hello, .status, .watch, .stop, .agent: return false
        }
    }
}
