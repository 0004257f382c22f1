#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where control sockets live.
///
/// A recorder listens on `--control PATH`, else `$ROOMTAP_CONTROL`, else a socket of its own in
/// the per-user runtime directory, `rec-<pid>.sock`, so several recorders on one machine never
/// collide. Clients given neither find the recorders in that directory (``RecorderDirectory``).
///
/// Thread: pure functions.
public enum ControlSocketPath {
    /// The environment variable naming the socket (below `--control`, above the runtime directory).
    public static let environmentVariable = "ROOMTAP_CONTROL"

    /// The socket the user named: `explicit` (`--control PATH`), else `$ROOMTAP_CONTROL`; nil when
    /// neither is set (empty values count as unset).
    public static func configured(explicit: String?, environment: [String: String]) -> String? {
        if let explicit, !explicit.isEmpty { return explicit }
        if let fromEnvironment = environment[environmentVariable], !fromEnvironment.isEmpty { return fromEnvironment }
        return nil
    }

    /// The socket a recorder with process id `pid` listens on: the ``configured(explicit:environment:)``
    /// one, else ``recorderSocket(pid:environment:)``.
    public static func forRecorder(explicit: String?, environment: [String: String], pid: Int32) -> String {
        configured(explicit: explicit, environment: environment) ?? recorderSocket(pid: pid, environment: environment)
    }

    /// `<runtime directory>/rec-<pid>.sock`: the socket of the recorder `pid` when none was named.
    public static func recorderSocket(pid: Int32, environment: [String: String]) -> String {
        defaultDirectory(environment: environment) + "/" + recorderSocketName(pid: pid)
    }

    /// `rec-<pid>.sock`.
    public static func recorderSocketName(pid: Int32) -> String { "rec-\(pid).sock" }

    /// The pid in a name made by ``recorderSocketName(pid:)``; nil for any other name.
    public static func pid(inSocketName name: String) -> Int32? {
        guard name.hasPrefix("rec-"), name.hasSuffix(".sock") else { return nil }
        let digits = name.dropFirst(4).dropLast(5)
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let pid = Int32(digits), pid > 0
        else { return nil }
        return pid
    }

    /// The per-user runtime directory of the recorders' sockets: `$XDG_RUNTIME_DIR/roomtap` when that
    /// variable is set (an absolute path), else `/tmp/roomtap-<uid>`. The server creates it 0700 and
    /// refuses it when it exists but is not private to this user.
    public static func defaultDirectory(environment: [String: String]) -> String {
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
            return (runtime.hasSuffix("/") ? String(runtime.dropLast()) : runtime) + "/roomtap"
        }
        return "/tmp/roomtap-\(geteuid())"
    }

    /// The longest socket path in bytes (`sun_path` less its terminating NUL: 107 on Linux).
    public static let maxPathBytes = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1
}
