import CHiredis
import Glibc

/// One blocking connection to Redis through libhiredis (`redisCommandArgv`: binary-safe, no
/// format strings). Connects lazily, and again after a lost connection on the next command.
///
/// Thread: confined: one thread uses a connection at a time (hiredis contexts are not
/// thread-safe); each thread of the worker has its own. Not `Sendable`.
public final class RedisConnection {
    public let url: RedisURL
    /// Every command's limit, seconds (a BLOCK command's own time is added to it).
    public let timeout: Double
    private var context: UnsafeMutablePointer<redisContext>?

    public init(_ url: RedisURL, timeout: Double = 5) {
        self.url = url
        self.timeout = timeout
    }

    deinit { if let context { redisFree(context) } }

    /// Connects now (commands connect by themselves); throws when the server cannot be reached.
    public func connect() throws(RedisError) {
        if context != nil { return }
        let tv = Self.timeval(timeout)
        let made: UnsafeMutablePointer<redisContext>?
        switch url.endpoint {
        case .tcp(let host, let port): made = redisConnectWithTimeout(host, Int32(port), tv)
        case .unix(let path): made = redisConnectUnixWithTimeout(path, tv)
        }
        guard let made else { throw RedisError("cannot reach Redis at \(url): out of memory") }
        if made.pointee.err != 0 {
            let reason = Self.errorText(made)
            redisFree(made)
            throw RedisError("cannot reach Redis at \(url): \(reason)")
        }
        redisSetTimeout(made, tv)
        context = made
        do {
            if let password = url.password { _ = try command(["AUTH", password]) }
            if url.database != 0 { _ = try command(["SELECT", String(url.database)]) }
        } catch {
            close()
            throw error
        }
    }

    /// Closes the connection (the next command opens a new one). Idempotent.
    public func close() {
        if let context { redisFree(context) }
        context = nil
    }

    /// Runs one command; an error reply throws with `isReply` set. `blockSeconds` widens the
    /// socket timeout for a command that blocks on the server (XREADGROUP ... BLOCK).
    @discardableResult
    public func command(_ arguments: [String], blockSeconds: Double = 0) throws(RedisError) -> RedisReply {
        try connect()
        guard let context else { throw RedisError("cannot reach Redis at \(url)") }
        if blockSeconds > 0 { redisSetTimeout(context, Self.timeval(timeout + blockSeconds)) }
        defer { if blockSeconds > 0 { redisSetTimeout(context, Self.timeval(timeout)) } }
        let raw = Self.withArgv(arguments) { argv, lengths in
            redisCommandArgv(context, Int32(arguments.count), argv, lengths)
        }
        guard let raw else {
            let reason = Self.errorText(context)
            close()
            throw RedisError("lost the connection to Redis at \(url): \(reason)")
        }
        let reply = raw.assumingMemoryBound(to: redisReply.self)
        defer { freeReplyObject(raw) }
        if reply.pointee.type == REDIS_REPLY_ERROR {
            throw RedisError("Redis: \(Self.string(reply.pointee))", isReply: true)
        }
        return Self.convert(reply.pointee)
    }

    private static func convert(_ reply: redisReply) -> RedisReply {
        switch reply.type {
        case REDIS_REPLY_STRING: return .string(string(reply))
        case REDIS_REPLY_STATUS: return .status(string(reply))
        case REDIS_REPLY_INTEGER: return .integer(reply.integer)
        case REDIS_REPLY_ARRAY:
            var items: [RedisReply] = []
            items.reserveCapacity(reply.elements)
            for i in 0..<reply.elements {
                if let element = reply.element[i] {
                    items.append(convert(element.pointee))
                } else {
                    items.append(.null)
                }
            }
            return .array(items)
        default: return .null
        }
    }

    private static func string(_ reply: redisReply) -> String {
        guard let str = reply.str else { return "" }
        return str.withMemoryRebound(to: UInt8.self, capacity: reply.len) {
            String(decoding: UnsafeBufferPointer(start: $0, count: reply.len), as: UTF8.self)
        }
    }

    private static func errorText(_ context: UnsafeMutablePointer<redisContext>) -> String {
        let text = withUnsafeBytes(of: context.pointee.errstr) { raw in
            String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
        }
        return text.isEmpty ? "error \(context.pointee.err)" : text
    }

    private static func timeval(_ seconds: Double) -> Glibc.timeval {
        Glibc.timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - seconds.rounded(.down)) * 1_000_000))
    }

    /// Calls `body` with C copies of `arguments` (binary-safe lengths), freed afterwards.
    private static func withArgv<R>(
        _ arguments: [String], _ body: (UnsafeMutablePointer<UnsafePointer<CChar>?>, UnsafePointer<Int>) -> R
    ) -> R {
        let pointers = UnsafeMutablePointer<UnsafePointer<CChar>?>.allocate(capacity: max(1, arguments.count))
        var owned: [UnsafeMutablePointer<CChar>] = []
        owned.reserveCapacity(arguments.count)
        for (i, argument) in arguments.enumerated() {
            let bytes = Array(argument.utf8)
            let copy = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count + 1)
            bytes.withUnsafeBufferPointer { source in
                if let base = source.baseAddress {
                    UnsafeMutableRawPointer(copy).copyMemory(from: base, byteCount: source.count)
                }
            }
            copy[bytes.count] = 0
            owned.append(copy)
            pointers[i] = UnsafePointer(copy)
        }
        defer {
            for copy in owned { copy.deallocate() }
            pointers.deallocate()
        }
        let lengths = arguments.map { $0.utf8.count }
        return lengths.withUnsafeBufferPointer { body(pointers, $0.baseAddress ?? UnsafePointer(bitPattern: 8)!) }
    }
}
