import Foundation
public import RoomTapJSON

/// Sora's WebSocket signaling, the messages a receive-only client reads and writes (Sora's
/// documentation https://sora-doc.shiguredo.jp/SIGNALING; the client side as Shiguredo's SDKs
/// write it: sora-js-sdk `src/base.ts`, `src/utils.ts` `createSignalingMessage`; see
/// shared/sora-reference.md §1).
///
/// Every message from the server is hostile input: a text that is no JSON object, has no string
/// `type`, or lacks what its type needs (an `offer` without `sdp`, a `redirect` without
/// `location`) is a ``WebRTCError/signaling(_:)`` naming it; an unknown `type` is `.other` (the
/// caller ignores and counts it). Bounded: at most ``maxBytes`` of text, JSON depth as
/// ``JSONValue`` reads it, at most ``maxEntries`` entries of a notify's `data` and of
/// `iceServers`.
///
/// Thread: a value type, use anywhere; pure.
package enum SoraMessage: Sendable, Equatable {
    /// The server's offer, the answer to our `connect`.
    case offer(Offer)
    /// Publishers came or went: a new offer of the same connection.
    case reOffer(sdp: String)
    /// Keep-alive; answer `pong` (with `stats` when asked).
    case ping(stats: Bool)
    /// A `notify` event.
    case notify(Notify)
    /// An application push (`data`, kept as sent).
    case push(JSONValue)
    /// Connect again to `location` with `redirect: true`.
    case redirect(location: String)
    /// The server ends the connection (`reason`).
    case disconnect(reason: String)
    /// A type this client does not use (`switched`, `update`, or one from a later Sora).
    case other(type: String)

    /// Most bytes of one message read (an offer with a hundred publishers is well below).
    package static let maxBytes = 1 << 20
    /// Most entries read of a list (`data`, `iceServers`, a server's `urls`).
    package static let maxEntries = 1000

    /// `offer`.
    package struct Offer: Sendable, Equatable {
        package var sdp: String
        package var clientID: String?
        package var connectionID: String?
        package var sessionID: String?
        /// `config.iceServers`: STUN/TURN URLs with their credentials.
        package var iceServers: [ICEServer] = []
        /// `config.iceTransportPolicy` is `relay`: use relay candidates only.
        package var relayOnly = false
    }

    /// One entry of `config.iceServers` (an RTCIceServer).
    package struct ICEServer: Sendable, Equatable {
        package var urls: [String]
        package var username: String?
        package var credential: String?
    }

    /// A `notify` message: `event_type` and, for `connection.*`, who.
    package struct Notify: Sendable, Equatable {
        package var eventType: String
        package var connection: Connection?
        /// `connection.created` of our own connection: everyone already in the channel.
        package var data: [Connection] = []
    }

    /// A connection of a notify event (or of its `data`).
    package struct Connection: Sendable, Equatable {
        package var connectionID: String
        package var clientID: String?
        package var role: String?
        /// `audio` (absent: unknown).
        package var audio: Bool?
        /// The connection's `signaling_notify_metadata` as others see it.
        package var metadata: JSONValue?
    }

    /// Reads one text message from the server.
    package static func parse(_ text: String) throws(WebRTCError) -> SoraMessage {
        guard text.utf8.count <= maxBytes else {
            throw .signaling("a Sora signaling message is longer than \(maxBytes >> 20) MiB")
        }
        let value: JSONValue
        do { value = try JSONValue(parsing: text) } catch {
            throw .signaling("a Sora signaling message is not JSON (\(error.description))")
        }
        guard value.objectValue != nil else { throw .signaling("a Sora signaling message is not a JSON object") }
        guard let type = value["type"]?.stringValue else {
            throw .signaling("a Sora signaling message has no \"type\"")
        }
        func sdp() throws(WebRTCError) -> String {
            guard let sdp = value["sdp"]?.stringValue, !sdp.isEmpty else {
                throw .signaling("Sora's \(type) has no \"sdp\"")
            }
            return sdp
        }
        switch type {
        case "offer":
            var offer = Offer(
                sdp: try sdp(), clientID: value["client_id"]?.stringValue,
                connectionID: value["connection_id"]?.stringValue, sessionID: value["session_id"]?.stringValue)
            for server in (value["config"]?["iceServers"]?.arrayValue ?? []).prefix(maxEntries) {
                let urls =
                    server["urls"]?.arrayValue?.prefix(maxEntries).compactMap(\.stringValue)
                    ?? server["urls"]?.stringValue.map { [$0] } ?? []
                guard !urls.isEmpty else { continue }
                offer.iceServers.append(
                    ICEServer(
                        urls: urls, username: server["username"]?.stringValue,
                        credential: server["credential"]?.stringValue))
            }
            offer.relayOnly = value["config"]?["iceTransportPolicy"]?.stringValue == "relay"
            return .offer(offer)
        case "re-offer":
            return .reOffer(sdp: try sdp())
        case "ping":
            return .ping(stats: value["stats"]?.boolValue ?? false)
        case "notify":
            guard let event = value["event_type"]?.stringValue else {
                throw .signaling("Sora's notify has no \"event_type\"")
            }
            var notify = Notify(eventType: event, connection: connection(value))
            notify.data = (value["data"]?.arrayValue ?? []).prefix(maxEntries).compactMap(connection)
            return .notify(notify)
        case "push":
            return .push(value["data"] ?? .null)
        case "redirect":
            guard let location = value["location"]?.stringValue,
                location.hasPrefix("wss://") || location.hasPrefix("ws://")
            else { throw .signaling("Sora's redirect has no ws:// or wss:// \"location\"") }
            return .redirect(location: location)
        case "disconnect":
            return .disconnect(reason: value["reason"]?.stringValue ?? "")
        default:
            return .other(type: String(type.prefix(64)))
        }
    }

    private static func connection(_ value: JSONValue) -> Connection? {
        guard let id = value["connection_id"]?.stringValue, !id.isEmpty else { return nil }
        return Connection(
            connectionID: id, clientID: value["client_id"]?.stringValue, role: value["role"]?.stringValue,
            audio: value["audio"]?.boolValue, metadata: value["metadata"])
    }

    // MARK: - What the client sends

    /// `connect` (sora-js-sdk `createSignalingMessage`): `role`, `channel_id`, audio only, our
    /// capability offer in `sdp`, no `multistream` (obsolete), signaling on the WebSocket only.
    package static func connect(
        target: SoraTarget, role: String, sdp: String, redirect: Bool, notifyMetadata: JSONValue? = nil
    ) -> String {
        var message: [String: JSONValue] = [
            "type": "connect", "role": .string(role), "channel_id": .string(target.channelID), "audio": true,
            "video": false, "sora_client": .string(target.client), "environment": .string(environment),
            "sdp": .string(sdp), "data_channel_signaling": false,
        ]
        if let metadata = target.metadata { message["metadata"] = metadata }
        if let notifyMetadata { message["signaling_notify_metadata"] = notifyMetadata }
        if redirect { message["redirect"] = true }
        return JSONValue.object(message).jsonText
    }

    /// `answer` or `re-answer`.
    package static func answer(_ sdp: String, re: Bool) -> String {
        JSONValue.object(["type": .string(re ? "re-answer" : "answer"), "sdp": .string(sdp)]).jsonText
    }

    /// A trickled ICE candidate (`candidate:...`).
    package static func candidate(_ candidate: String) -> String {
        JSONValue.object(["type": "candidate", "candidate": .string(candidate)]).jsonText
    }

    /// `pong`, with `stats` (one RTCStats-shaped `inbound-rtp` entry per stream) when given.
    package static func pong(stats: [JSONValue]?) -> String {
        var message: [String: JSONValue] = ["type": "pong"]
        if let stats { message["stats"] = .array(stats) }
        return JSONValue.object(message).jsonText
    }

    /// The hang-up at the end of a room.
    package static let disconnect = #"{"reason":"NO-ERROR","type":"disconnect"}"#

    /// `environment`: what runs this client.
    package static var environment: String {
        var name = utsname()
        uname(&name)
        func text<T>(_ field: T) -> String {
            withUnsafeBytes(of: field) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        }
        return "\(text(name.sysname)) \(text(name.release)) \(text(name.machine))"
    }
}
