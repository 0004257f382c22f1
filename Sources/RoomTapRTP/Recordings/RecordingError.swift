/// Why a recording (a Janus `.mjr`, a WebM/Matroska/MP4 file) cannot be used, with a one-line
/// message for the user. Thrown before any output is created.
///
/// `description` is `"<path>: <message>"`, the message saying what was wrong and what to do, e.g.
/// `bob-video.mjr: a Janus video recording; roomtap records audio: give the participant's audio .mjr`.
public struct RecordingError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The path as given by the caller.
    public let path: String
    /// One line, without the path: what was wrong and what to do.
    public let message: String

    public init(path: String, message: String) {
        self.path = path
        self.message = message
    }

    public var description: String { "\(path): \(message)" }
}
