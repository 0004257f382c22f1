/// Why an SDP file or a JSON room file cannot describe a room, with a one-line message for the user.
///
/// Thrown by ``RoomDescription/parseSDP(_:source:)`` and ``RoomDescription/parseJSON(_:source:)``
/// before anything is bound or recorded. `description` is `"<source>:<line>: <message>"` when the
/// problem is on one line of the text, else `"<source>: <message>"`; the message says what is wrong
/// and what to do, e.g.
/// `room.sdp:7: m=audio on port 25000 offers only PCMU/8000; roomtap records Opus (a=rtpmap:<pt> opus/48000/2)`.
///
/// Thread: a value type, use anywhere.
public struct RoomDescriptionError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The kind of problem, for programs that decide policy (exit codes, retrying with another file).
    public enum Reason: Sendable, Equatable {
        /// The text is larger than roomtap reads, or has too many media sections or participants.
        case tooLarge
        /// A line or value is not well formed (not `<type>=<value>`, not JSON, a malformed `m=` line).
        case malformed
        /// The description has no audio stream roomtap can receive (no `m=audio`, no participants).
        case noAudio
        /// Audio is offered, but not in a form roomtap records (no Opus, SRTP, a non-RTP transport).
        case unsupported
        /// A well-formed value out of range or of the wrong type (a port of 70000, an unknown key).
        case invalidValue
        /// Two participants collide (same name, or same port and SSRC).
        case duplicate
    }

    /// The kind of problem.
    public let reason: Reason
    /// Where the text came from, as given by the caller (usually the file path).
    public let source: String
    /// The 1-based line of the text the problem is on, when it is on one line.
    public let line: Int?
    /// One line, without the source: what is wrong and what to do.
    public let message: String

    /// Creates an error. Line breaks in `message` are replaced by spaces so the description stays one line.
    public init(_ reason: Reason, source: String, line: Int? = nil, message: String) {
        self.reason = reason
        self.source = source
        self.line = line
        self.message = String(message.map { $0.isNewline ? " " : $0 })
    }

    /// `"<source>:<line>: <message>"`, or `"<source>: <message>"` without a line.
    public var description: String {
        if let line { return "\(source):\(line): \(message)" }
        return "\(source): \(message)"
    }
}
