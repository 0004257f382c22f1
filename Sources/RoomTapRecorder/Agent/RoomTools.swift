import Foundation
import RoomTapAll
import RoomTapSync

/// The agent's built-in room tools (function calling): `mute_track`, `unmute_track`,
/// `set_volume`, `list_tracks`, `leave_room`. The first four are ``ControlCommand``s done by the
/// control socket's own handler (``RoomControlHandler/handle(_:by:)``), so they act exactly like
/// `roomtap mute NAME` (same scope rules, a change at the next tick, ramped over one frame) and
/// appear in room.json `controls` with `"by": "agent"`.
///
/// Thread: ``run(_:)`` on the agent's tools thread; ``setHandler(_:)`` from the recorder's
/// main thread. Never on the room clock's thread: a tool only sets the tracks' atomics.
final class RoomTools: Sendable {
    private let handler = Locked<RoomControlHandler?>(nil)

    /// The control handler of the room (nil until the control socket is open; no socket: every
    /// call is an error result).
    func setHandler(_ handler: RoomControlHandler?) { self.handler.withLock { $0 = handler } }

    static let name: JSONValue = .object(["type": .string("string"), "description": .string("The track's name.")])

    /// The tools as the session declares them.
    static let definitions: [RealtimeTool] = [
        RealtimeTool(
            name: "mute_track",
            description: "Mute a participant's track in the room (what everyone hears and the mix; their own "
                + "recording is kept), as the room's operator would. Use list_tracks for the names.",
            parameters: schema(["name": name])),
        RealtimeTool(
            name: "unmute_track", description: "Unmute a participant's track.", parameters: schema(["name": name])),
        RealtimeTool(
            name: "set_volume",
            description: "Set a track's volume: 0 to 10, 1 is unchanged (0.5 half, 2 double).",
            parameters: schema([
                "name": name,
                "volume": .object([
                    "type": .string("number"), "minimum": .number(0), "maximum": .number(10),
                    "description": .string("Linear gain, 1 is unity."),
                ]),
            ])),
        RealtimeTool(
            name: "list_tracks", description: "List the room's tracks: name, whether they are talking, muted, volume.",
            parameters: schema([:])),
        RealtimeTool(
            name: "leave_room",
            description: "Leave the room: you stop listening and speaking; the recording goes on.",
            parameters: schema([:])),
    ]

    private static func schema(_ properties: [String: JSONValue]) -> JSONValue {
        .object([
            "type": .string("object"), "properties": .object(properties),
            "required": .array(properties.keys.sorted().map(JSONValue.string)),
        ])
    }

    /// Runs one call; an error result (never a crash) for bad arguments, an unknown track or tool.
    func run(_ call: RealtimeFunctionCall) -> RealtimeToolResult {
        guard let arguments = call.argumentObject else {
            return .error("the arguments of \(call.name) are not a JSON object")
        }
        if call.name == "leave_room" { return .ok(["left": .bool(true)], endsAgent: true) }
        guard let handler = handler.withLock({ $0 }) else {
            return .error("this room has no controls (no control socket)")
        }
        let command: ControlCommand
        switch call.name {
        case "mute_track", "unmute_track", "set_volume":
            guard let name = arguments["name"]?.stringValue, !name.isEmpty else {
                return .error("\(call.name) needs \"name\" (a track name; list_tracks has them)")
            }
            switch call.name {
            case "mute_track": command = .mute(track: name, scope: nil)
            case "unmute_track": command = .unmute(track: name, scope: nil)
            default:
                guard let volume = arguments["volume"], volume.doubleValue != nil else {
                    return .error("set_volume needs \"volume\" (a number 0...10, 1 is unity)")
                }
                do throws(ControlFailure) {
                    command = .volume(track: name, change: .set(try VolumeLevel.parse(volume)), scope: nil)
                } catch { return .error(error.message) }
            }
        case "list_tracks":
            command = .tracks
        default:
            return .error("there is no tool named '\(call.name)'")
        }
        switch handler.handle(command, by: "agent") {
        case .ok(let result), .watch(let result):
            if call.name == "list_tracks" { return .ok(["tracks": .array(tracks(in: result))]) }
            var fields: [String: JSONValue] = [:]
            for key in ["track", "muted", "volume"] { fields[key] = result[key] }
            return .ok(fields)
        case .failure(_, let message):
            return .error(message)
        }
    }

    /// The humans' tracks of a `tracks` answer (not the mixes, not the agent's own): name,
    /// talking, muted, volume.
    private func tracks(in result: JSONValue) -> [JSONValue] {
        (result["tracks"]?.arrayValue ?? []).compactMap { track in
            let source = track["source"]?.stringValue ?? ""
            guard let name = track["name"]?.stringValue, source != "mix", !source.hasPrefix("agent ") else {
                return nil
            }
            return .object([
                "name": .string(name), "talking": track["talking"] ?? .bool(false),
                "muted": track["muted"] ?? .bool(false), "volume": track["volume"] ?? .number(1),
            ])
        }
    }
}
