import RoomTapAll
import RoomTapFuzzing
import Testing

/// The HTTP request head and the access rules of `record --http`, with hostile input: what a
/// request from anyone who can reach the port is taken to be, and who may use the room.
@Suite("HTTP request heads and access")
struct HTTPAccessTests {
    static func head(_ text: String) -> HTTPRequestHead? { HTTPRequestHead(Array(text.utf8)) }

    @Test func headsAreReadStrictly() throws {
        let ok = try #require(
            Self.head(
                "POST /api?token=a%20b&x=1 HTTP/1.1\r\nHost: 127.0.0.1:80\r\ncookie: a=1; roomtap_token=t\r\n"
                    + "X-Two: 1\r\nX-two: 2\r\nContent-Length: 12\r\n\r\n{\"cmd\":\"x\"}\n"))
        #expect(ok.method == "POST" && ok.path == "/api" && ok.query == "token=a%20b&x=1")
        #expect(ok.queryValue("token") == "a b" && ok.queryValue("x") == "1" && ok.queryValue("y") == nil)
        #expect(ok.cookie("roomtap_token") == "t" && ok.cookie("a") == "1" && ok.cookie("b") == nil)
        #expect(ok.field("HOST") == "127.0.0.1:80" && ok.field("x-two") == "1, 2" && ok.contentLength == 12)
        let hostile = [
            "GET / HTTP/1.1\nHost: a\n\n\r\n\r\n",  // bare LF
            "GET / HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n",  // obsolete line folding
            "GET / HTTP/1.1\r\nHo st: a\r\n\r\n", "GET / HTTP/1.1\r\n: a\r\n\r\n", "GET / HTTP/1.1\r\nHost a\r\n\r\n",
            "GET / HTTP/1.1\r\nX: a\u{0}b\r\n\r\n", "GET / HTTP/1.1\r\nX: a\rb\r\n\r\n",
            "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",  // one way to size a body only
            "POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
            "POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", "POST / HTTP/1.1\r\nContent-Length: 1e3\r\n\r\n",
            "POST / HTTP/1.1\r\nContent-Length: 99999999999\r\n\r\n", "POST / HTTP/1.1\r\nContent-Length:\r\n\r\n",
            "GET / HTTP/1.1\r\n" + String(repeating: "X: 1\r\n", count: 65) + "\r\n",
            "GET / HTTP/1.1\r\nX: " + String(repeating: "a", count: 8200) + "\r\n\r\n",
        ]
        for text in hostile { #expect(Self.head(text) == nil, "\(text.prefix(60))") }
        #expect(Self.head("POST / HTTP/1.1\r\nContent-Length: 5\r\ncontent-length: 5\r\n\r\n")?.contentLength == 5)
        #expect(Self.head("GET /?token=%zz HTTP/1.1\r\n\r\n")?.queryValue("token") == nil, "a bad escape is no value")
        #expect(Self.head("GET /?token=%ff HTTP/1.1\r\n\r\n")?.queryValue("token") == nil, "not UTF-8")
    }

    @Test func withoutATokenOnlyThisMachineByNameAndOnlyThisPageMayChange() {
        let access = HTTPAccess(token: nil, host: "127.0.0.1", port: 8080)
        let allowed = [
            "GET / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n", "GET / HTTP/1.1\r\nHost: localhost:8080\r\n\r\n",
            "POST /api HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nOrigin: http://127.0.0.1:8080\r\n"
                + "Sec-Fetch-Site: same-origin\r\n\r\n",
            "GET /healthz HTTP/1.1\r\n\r\n",
        ]
        for text in allowed { #expect(access.check(Self.head(text)!) == nil, "\(text)") }
        let refused = [
            "GET / HTTP/1.1\r\n\r\n", "GET / HTTP/1.1\r\nHost: evil.example:8080\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: 127.0.0.1:9999\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: 127.0.0.1.evil.example:8080\r\n\r\n",
            "POST /api HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nOrigin: http://evil.example\r\n\r\n",
            "POST /api HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nOrigin: null\r\n\r\n",
            "POST /api HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nSec-Fetch-Site: cross-site\r\n\r\n",
            "POST /api HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nSec-Fetch-Site: same-site\r\n\r\n",
        ]
        for text in refused { #expect(access.check(Self.head(text)!)?.status == 403, "\(text)") }
    }

    @Test func withATokenEveryRequestCarriesIt() {
        let token = "0123456789abcdef-secret"
        let access = HTTPAccess(token: token, host: "0.0.0.0", port: 8080)
        let allowed = [
            "GET /?token=\(token) HTTP/1.1\r\nHost: 10.0.0.5:8080\r\n\r\n",
            "GET /events HTTP/1.1\r\nHost: box:8080\r\nCookie: x=1; roomtap_token=\(token)\r\n\r\n",
            "GET /metrics HTTP/1.1\r\nAuthorization: Bearer \(token)\r\n\r\n",
            "GET /healthz HTTP/1.1\r\n\r\n",
        ]
        for text in allowed { #expect(access.check(Self.head(text)!) == nil, "\(text)") }
        let refused = [
            "GET / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n", "GET /?token= HTTP/1.1\r\n\r\n",
            "GET /?token=\(token)x HTTP/1.1\r\n\r\n", "GET /?token=\(token.dropLast()) HTTP/1.1\r\n\r\n",
            "GET / HTTP/1.1\r\nAuthorization: Basic \(token)\r\n\r\n",
            "GET / HTTP/1.1\r\nCookie: roomtap_token=\r\n\r\n", "GET /metrics HTTP/1.1\r\n\r\n",
        ]
        for text in refused { #expect(access.check(Self.head(text)!)?.status == 401, "\(text)") }
        let crossSite =
            "POST /api HTTP/1.1\r\nHost: h:8080\r\nCookie: roomtap_token=\(token)\r\nOrigin: http://evil\r\n\r\n"
        #expect(access.check(Self.head(crossSite)!)?.status == 403, "the cookie does not let another site post")
    }

    @Test func whichAddressesNeedATokenAndWhatATokenIs() {
        for host in ["127.0.0.1", "127.1.2.3", "localhost"] { #expect(!HTTPAccess.requiresToken(host: host)) }
        for host in ["0.0.0.0", "", "10.0.0.5", "192.168.1.2", "127.0.0", "1.127.0.0"] {
            #expect(HTTPAccess.requiresToken(host: host), "\(host)")
        }
        #expect(HTTPAccess.problem(with: "short") != nil)
        #expect(HTTPAccess.problem(with: "0123456789abcdef") == nil)
        #expect(HTTPAccess.problem(with: "0123456789abcdef; x") != nil)
        #expect(HTTPAccess.problem(with: "0123456789abcdéf0") != nil)
    }

    @Test func theFuzzEntryHoldsOnRandomAndMutatedHeads() {
        var random = SystemRandomNumberGenerator()
        let seeds = [
            "GET /?token=0123456789abcdef HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nCookie: roomtap_token=x\r\n\r\n",
            "POST /api HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nContent-Length: 3\r\nOrigin: http://127.0.0.1:8080\r\n\r\n{}",
        ].map { Array($0.utf8) }
        for round in 0..<3000 {
            var bytes = seeds[round % seeds.count]
            for _ in 0..<Int.random(in: 0...6, using: &random) {
                let at = Int.random(in: 0..<bytes.count, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0: bytes[at] = UInt8.random(in: 0...255, using: &random)
                case 1: bytes.remove(at: at)
                default: bytes.insert(UInt8.random(in: 0...255, using: &random), at: at)
                }
            }
            bytes.withUnsafeBytes { HTTPFuzz.exercise($0) }
        }
    }
}
