/// The `code` of a failed reply (`{"ok":false,"error":{"code":...}}`); see docs/CONTROL-PROTOCOL.md.
public enum ControlErrorCode: String, Sendable, CaseIterable, Codable {
    /// The line is not valid JSON, or not valid UTF-8.
    case badJSON = "bad_json"
    /// Valid JSON but not a request: not an object, `cmd` missing or not a string, `id` neither a
    /// number nor a string, a parameter missing or of the wrong type.
    case badRequest = "bad_request"
    /// The line was longer than ``ControlLimits/maxLineBytes``; it was discarded through its newline.
    case lineTooLong = "line_too_long"
    /// No command of that name.
    case unknownCommand = "unknown_command"
    /// No track of that name.
    case unknownTrack = "unknown_track"
    /// A value outside its range (a volume below 0 or above 10, ...).
    case outOfRange = "out_of_range"
    /// The command cannot act now (no agent in this room, too many clients, ...).
    case unavailable
    /// The recorder is still setting up its room (`hello` says `starting`): a command about its
    /// tracks (``ControlCommand/namesTracks``) or `stop` cannot act yet. Answered at once; send the
    /// request again in a moment (``ControlClient/request(_:timeout:whileStarting:)`` does).
    case starting
    /// A fault in the recorder.
    case `internal`
}

/// A request that cannot be served: the error code and one line for the user. Thrown by the typed
/// parameter accessors of ``ControlRequest``; a handler turns it into a reply with
/// ``ControlResponse/failure(_:)``.
public struct ControlFailure: Error, Sendable, Equatable, CustomStringConvertible {
    public let code: ControlErrorCode
    /// One line, no trailing period needed ("no track named \"bob\"; see roomtap tracks").
    public let message: String

    public init(_ code: ControlErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }

    /// The `starting` answer: the recorder is still setting up its room.
    public static let starting = ControlFailure(.starting, "the recorder is still starting; try again in a moment")
}

/// Sizes the protocol and the server hold to.
package enum ControlLimits {
    /// Longest request line in bytes, newline excluded (64 KiB). Longer lines get one
    /// `line_too_long` reply and are discarded through their newline.
    public static let maxLineBytes = 65_536
    /// Most clients connected at once; one more gets an `unavailable` error line and is closed.
    public static let maxClients = 64
    /// Bytes queued for one client at most (1 MiB). The server stops reading a client's requests
    /// while a quarter of it waits to be sent; watch events that would pass three quarters are
    /// dropped (and counted); a client whose queue cannot take a reply is disconnected (a reply to
    /// a client with nothing queued always goes out, whatever its size).
    public static let maxOutputBytes = 1 << 20
}
