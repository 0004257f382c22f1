import Foundation
public import RoomTapJSON

/// A Sora channel to join: `sora+wss://HOST[:PORT]/signaling?channel_id=ID` (`sora+ws://` for a
/// plain WebSocket), with the `metadata` of the connect message (where Sora deployments put an
/// access token) and the key of the notify metadata that names a publisher's track. The metadata
/// never shows in ``description``, a log line or room.json.
///
/// Thread: a value type, use anywhere.
public struct SoraTarget: Sendable, Equatable, CustomStringConvertible {
    /// The signaling URL (`wss://HOST[:PORT]/signaling`, without the query).
    public var signalingURL: String
    /// `channel_id`.
    public var channelID: String
    /// The connect message's `metadata` (secret); nil: none sent.
    public var metadata: JSONValue?
    /// The member of a publisher's notify `metadata` that names its track (default `name`).
    public var nameKey = "name"
    /// `sora_client` of the connect message.
    public var client = "roomtap"

    /// Parses a `--join` URL; nil when it is not `sora+ws(s)://HOST.../...?channel_id=ID`.
    public init?(url text: String) {
        let scheme: String
        if text.hasPrefix("sora+wss://") {
            scheme = "wss://"
        } else if text.hasPrefix("sora+ws://") {
            scheme = "ws://"
        } else {
            return nil
        }
        guard let components = URLComponents(string: String(text.dropFirst("sora+".count))),
            let host = components.host, !host.isEmpty
        else { return nil }
        let items = components.queryItems ?? []
        guard let channel = items.first(where: { $0.name == "channel_id" })?.value, !channel.isEmpty,
            channel.utf8.count <= 255
        else { return nil }
        let port = components.port.map { ":\($0)" } ?? ""
        let path = components.path.isEmpty ? "/signaling" : components.path
        let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        signalingURL = scheme + bracketed + port + path
        channelID = channel
    }

    public var description: String { "Sora channel \(channelID) at \(signalingURL)" }
}
