import Foundation

/// A Janus VideoRoom to join: `janus+http://HOST:PORT/janus?room=1234[&pin=SECRET][&display=NAME]`
/// (`janus+https://` for TLS). The room id is a number, or a string when the server uses string
/// ids. The pin never shows in ``description``.
///
/// Thread: a value type, use anywhere.
public struct JanusVideoRoomTarget: Sendable, Equatable, CustomStringConvertible {
    /// The HTTP API base (`http://HOST:PORT/janus`).
    public var base: String
    /// The room id as given.
    public var room: String
    public var pin: String?
    /// Our own display name in the room (default `roomtap`).
    public var display = "roomtap"

    /// Parses a `--join` URL; nil when it is not `janus+http(s)://.../...?room=...`.
    public init?(url text: String) {
        let scheme: String
        if text.hasPrefix("janus+http://") {
            scheme = "http://"
        } else if text.hasPrefix("janus+https://") {
            scheme = "https://"
        } else {
            return nil
        }
        guard let components = URLComponents(string: String(text.dropFirst("janus+".count))),
            let host = components.host, !host.isEmpty
        else { return nil }
        let items = components.queryItems ?? []
        guard let room = items.first(where: { $0.name == "room" })?.value, !room.isEmpty else { return nil }
        let port = components.port.map { ":\($0)" } ?? ""
        let path = components.path.isEmpty ? "/janus" : components.path
        let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        base = scheme + bracketed + port + path
        self.room = room
        pin = items.first(where: { $0.name == "pin" })?.value
        if let display = items.first(where: { $0.name == "display" })?.value, !display.isEmpty {
            self.display = display
        }
    }

    public var description: String { "Janus room \(room) at \(base)" }
}
