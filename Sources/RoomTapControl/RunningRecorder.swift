/// A recorder answering on a control socket, as its `hello` reply describes it
/// (docs/CONTROL-PROTOCOL.md).
///
/// Thread: a value.
public struct RunningRecorder: Sendable, Equatable {
    /// The control socket it answered on.
    public var socket: String
    /// Its process id (0 when the reply did not say).
    public var pid: Int32
    /// Its output directory, absolute ("" when the reply did not say).
    public var directory: String
    /// Tracks in its room now.
    public var tracks: Int
    /// Seconds since it started (a reply's value is clamped to 0...``maxUptime``).
    public var uptime: Double

    /// The largest uptime read from a reply (about 31 700 years): any uptime converts to `Int`.
    public static let maxUptime: Double = 1e12
    /// When it started: ISO 8601 in UTC ("" when the reply did not say).
    public var started: String
    /// `starting` (its room has not started yet: `stop` is refused), `recording`, or `stopping`
    /// (asked to stop, or its room ended: it is finishing its files).
    public var state: String

    public init(
        socket: String, pid: Int32, directory: String, tracks: Int, uptime: Double, started: String,
        state: String
    ) {
        self.socket = socket
        self.pid = pid
        self.directory = directory
        self.tracks = tracks
        self.uptime = uptime
        self.started = started
        self.state = state
    }

    /// Reads a `hello` reply's result. Missing or mistyped members take their empty values (a reply
    /// is outside input: nothing in it can trap).
    public init(socket: String, hello: JSONValue) {
        let pid = hello["pid"]?.intValue ?? 0
        let tracks = hello["tracks"]?.intValue ?? 0
        let uptime = hello["uptime"]?.doubleValue ?? 0
        self.init(
            socket: socket, pid: Int32(exactly: pid) ?? 0, directory: hello["dir"]?.stringValue ?? "",
            tracks: max(0, tracks), uptime: uptime.isFinite ? min(max(0, uptime), RunningRecorder.maxUptime) : 0,
            started: hello["started"]?.stringValue ?? "",
            state: hello["state"]?.stringValue.flatMap {
                ["starting", "recording", "stopping"].contains($0) ? $0 : nil
            }
                ?? "recording")
    }

    /// The recorder as `roomtap list --json` prints it: `dir`, `socket`, `pid`, `tracks`, `uptime`
    /// (seconds), `started`, `state`.
    public var json: JSONValue {
        .object([
            "dir": .string(directory), "socket": .string(socket), "pid": .number(Double(pid)),
            "tracks": .number(Double(tracks)), "uptime": .number((uptime * 10).rounded() / 10),
            "started": .string(started), "state": .string(state),
        ])
    }
}
