#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where the control socket lives.
///
/// Thread: pure functions.
public enum ControlSocketPath {
    /// The environment variable naming the socket (below `--control`, above the defaults).
    public static let environmentVariable = "ROOMTAP_CONTROL"

    /// The socket path, by precedence: `explicit` (`--control PATH`), then `$ROOMTAP_CONTROL`, then
    /// `$XDG_RUNTIME_DIR/roomtap/default.sock`, then `/tmp/roomtap-<uid>/default.sock`. Empty values
    /// count as unset.
    public static func resolve(explicit: String?, environment: [String: String]) -> String {
        if let explicit, !explicit.isEmpty { return explicit }
        if let fromEnvironment = environment[environmentVariable], !fromEnvironment.isEmpty { return fromEnvironment }
        return defaultDirectory(environment: environment) + "/default.sock"
    }

    /// The per-user directory of the default socket: `$XDG_RUNTIME_DIR/roomtap` when that variable
    /// is set (an absolute path), else `/tmp/roomtap-<uid>`. The server creates it 0700 and refuses
    /// it when it exists but is not private to this user.
    public static func defaultDirectory(environment: [String: String]) -> String {
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
            return (runtime.hasSuffix("/") ? String(runtime.dropLast()) : runtime) + "/roomtap"
        }
        return "/tmp/roomtap-\(geteuid())"
    }

    /// The longest socket path in bytes (`sun_path` less its terminating NUL: 107 on Linux).
    public static let maxPathBytes = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1
}
