public import Foundation
import RoomTapTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// One blocking HTTP/1.1 request to 127.0.0.1 (`Connection: close`, the answer read to the end),
/// for the test helpers that talk to Janus's HTTP API or a WHEP server. Thread: the caller's.
public enum LoopbackHTTP {
    /// An answer: the status, the headers (names in lower case, in order; repeated ones kept) and
    /// the body.
    public struct Response: Sendable {
        public let status: Int
        public let headers: [(name: String, value: String)]
        public let body: Data

        /// The first value of header `name` (any case).
        public func header(_ name: String) -> String? {
            headers.first { $0.name == name.lowercased() }?.value
        }

        /// The body as UTF-8 text.
        public var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// Why no HTTP answer came (nothing listening, a timeout, a malformed answer).
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Sends `method path` to 127.0.0.1:`port` with `headers` and `body`; waits at most
    /// `timeout` for the whole answer.
    public static func request(
        _ method: String, port: UInt16, path: String, headers: [(String, String)] = [], body: Data = Data(),
        timeout: Duration = .seconds(10)
    ) throws(Failure) -> Response {
        let fd = TestTCP.connect(port: port)
        guard fd >= 0 else { throw Failure(description: "nothing answers on 127.0.0.1:\(port)") }
        defer { close(fd) }
        var limit = timeval(tv_sec: Int(timeout.components.seconds), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        head += "Content-Length: \(body.count)\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        let request = Data((head + "\r\n").utf8) + body
        let sent = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard sent == request.count else { throw Failure(description: "send to 127.0.0.1:\(port) failed") }
        var answer = Data()
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n == 0 { break }
            guard n > 0 else {
                throw Failure(description: "no complete answer from 127.0.0.1:\(port)\(path) within \(timeout)")
            }
            answer.append(contentsOf: buffer[0..<n])
        }
        return try parse(answer, from: "127.0.0.1:\(port)\(path)")
    }

    private static func parse(_ answer: Data, from origin: String) throws(Failure) -> Response {
        guard let split = answer.range(of: Data("\r\n\r\n".utf8)) else {
            throw Failure(description: "\(origin) answered no HTTP head (\(answer.count) bytes)")
        }
        let lines = String(decoding: answer[..<split.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let statusWords = lines[0].split(separator: " ")
        guard statusWords.count >= 2, let status = Int(statusWords[1]) else {
            throw Failure(description: "\(origin) answered a malformed status line: \(lines[0])")
        }
        let headers = lines.dropFirst().compactMap { line -> (name: String, value: String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (
                line[..<colon].lowercased(), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            )
        }
        var body = Data(answer[split.upperBound...])
        if headers.contains(where: { $0.name == "transfer-encoding" && $0.value.lowercased().contains("chunked") }) {
            body = try dechunk(body, from: origin)
        }
        return Response(status: status, headers: headers, body: body)
    }

    private static func dechunk(_ data: Data, from origin: String) throws(Failure) -> Data {
        var out = Data()
        var rest = data[...]
        while let lineEnd = rest.range(of: Data("\r\n".utf8)) {
            let sizeText = String(decoding: rest[..<lineEnd.lowerBound], as: UTF8.self)
            guard let size = Int(sizeText.split(separator: ";")[0], radix: 16) else {
                throw Failure(description: "\(origin) sent a malformed chunk size: \(sizeText)")
            }
            if size == 0 { break }
            let start = lineEnd.upperBound
            guard rest.distance(from: start, to: rest.endIndex) >= size else {
                throw Failure(description: "\(origin) sent a truncated chunk")
            }
            let end = rest.index(start, offsetBy: size)
            out.append(rest[start..<end])
            rest = rest[rest.index(end, offsetBy: min(2, rest.distance(from: end, to: rest.endIndex)))...]
        }
        return out
    }
}
