import Foundation
import RoomTapControl
import Synchronization
import Testing

/// Requests and replies over a real socket.
@Suite struct ServerProtocolTests {
    let directory = ShortTemporaryDirectory()
    var path: String { directory.file("c.sock") }

    @Test func roundTripThroughTheClient() throws {
        let server = try ControlServer(path: path, handler: TestHandler())
        defer { server.stop() }
        let client = try ControlClient(path: path)
        #expect(try client.request("ping") == ["pong": true])
        #expect(try client.request("echo", ["a": 1, "b": ["x"]]) == ["a": 1, "b": ["x"]])
        #expect(
            try client.request("volume", ["track": "alice", "volume": "+20dB"]) == ["track": "alice", "volume": 10])
        #expect(throws: ControlClientError.failure(code: .unknownTrack, message: #"no track named "bob""#)) {
            try client.request("volume", ["track": "bob", "volume": 1])
        }
        #expect(throws: ControlClientError.self) { try client.request("nope") }
        #expect(try client.request("ping") == ["pong": true])
    }

    @Test func echoesNumberAndStringIdsInOrder() throws {
        let server = try ControlServer(path: path, handler: TestHandler())
        defer { server.stop() }
        let raw = try #require(RawConnection(path: path))
        raw.send(
            "{\"id\":7,\"cmd\":\"ping\"}\n{\"id\":\"abc\",\"cmd\":\"ping\"}\r\n{\"cmd\":\"ping\"}\n  \n{\"id\":2.5,\"cmd\":\"ping\"}\n"
        )
        #expect(raw.readLine() == #"{"id":7,"ok":true,"result":{"pong":true}}"#)
        #expect(raw.readLine() == #"{"id":"abc","ok":true,"result":{"pong":true}}"#)
        #expect(raw.readLine() == #"{"id":null,"ok":true,"result":{"pong":true}}"#)
        #expect(raw.readLine() == #"{"id":2.5,"ok":true,"result":{"pong":true}}"#)
        #expect(raw.readLine(timeout: 0.2) == nil)  // the blank line got no reply
    }

    @Test func pipelinedRequestsAreAnsweredInOrder() throws {
        let server = try ControlServer(path: path, handler: TestHandler())
        defer { server.stop() }
        let raw = try #require(RawConnection(path: path))
        raw.send((0..<500).map { #"{"id":\#($0),"cmd":"echo","n":\#($0)}"# + "\n" }.joined())
        for id in 0..<500 {
            let line = try #require(raw.readLine())
            #expect(line == #"{"id":\#(id),"ok":true,"result":{"n":\#(id)}}"#)
        }
    }

    @Test func everyErrorCodePath() throws {
        let server = try ControlServer(path: path, handler: TestHandler())
        defer { server.stop() }
        let raw = try #require(RawConnection(path: path))
        func code(_ line: String?) -> String? { (try? JSONValue(parsing: line ?? ""))?["error"]?["code"]?.stringValue }
        func id(_ line: String?) -> JSONValue? { (try? JSONValue(parsing: line ?? ""))?["id"] }

        raw.send("{\"id\":1,\"cmd\":\n")
        let malformed = raw.readLine()
        #expect(code(malformed) == "bad_json")
        #expect(id(malformed) == .null)
        raw.send([UInt8](#"{"id":2,"cmd":"p"#.utf8) + [0xFF, 0xFE] + [UInt8](#""}"#.utf8) + [0x0A])
        let invalidUTF8 = raw.readLine()
        #expect(code(invalidUTF8) == "bad_json")
        #expect(invalidUTF8?.contains("invalid UTF-8") == true)
        raw.send("[1,2]\n")
        #expect(code(raw.readLine()) == "bad_request")
        raw.send("{\"id\":3}\n")
        let missing = raw.readLine()
        #expect(code(missing) == "bad_request")
        #expect(id(missing) == 3)
        raw.send("{\"id\":4,\"cmd\":5}\n")
        #expect(code(raw.readLine()) == "bad_request")
        raw.send("{\"id\":5,\"cmd\":\"dance\"}\n")
        let unknown = raw.readLine()
        #expect(code(unknown) == "unknown_command")
        #expect(id(unknown) == 5)
        raw.send("{\"id\":6,\"cmd\":\"volume\",\"track\":\"alice\",\"volume\":true}\n")
        #expect(code(raw.readLine()) == "bad_request")
        raw.send("{\"id\":7,\"cmd\":\"volume\",\"track\":\"alice\",\"volume\":11}\n")
        #expect(code(raw.readLine()) == "out_of_range")
        raw.send("{\"id\":8,\"cmd\":\"volume\",\"track\":\"carol\",\"volume\":\"-6dB\"}\n")
        #expect(code(raw.readLine()) == "unknown_track")

        // A 1 MiB line: one line_too_long reply, then the next request works.
        raw.send(#"{"id":9,"cmd":"echo","pad":""# + String(repeating: "x", count: 1 << 20) + "\"}\n")
        raw.send("{\"id\":10,\"cmd\":\"ping\"}\n")
        let tooLong = raw.readLine()
        #expect(code(tooLong) == "line_too_long")
        #expect(id(tooLong) == .null)
        #expect(raw.readLine() == #"{"id":10,"ok":true,"result":{"pong":true}}"#)
        #expect(server.statistics.linesTooLong == 1)
        #expect(server.statistics.requests == 11)
    }

    @Test func theLineLimitIsExactly64KiB() throws {
        let server = try ControlServer(path: path, handler: TestHandler())
        defer { server.stop() }
        let raw = try #require(RawConnection(path: path))
        func line(length: Int, id: Int) -> String {
            let head = #"{"id":\#(id),"cmd":"echo","pad":""#
            return head + String(repeating: "x", count: length - head.utf8.count - 2) + "\"}"
        }
        #expect(line(length: 65_536, id: 1).utf8.count == ControlLimits.maxLineBytes)
        raw.send(line(length: 65_536, id: 1) + "\n" + line(length: 65_537, id: 2) + "\n")
        let first = try JSONValue(parsing: try #require(raw.readLine()))
        #expect(first["id"] == 1)
        #expect(first["result"]?["pad"]?.stringValue?.utf8.count == 65_536 - 30)
        let second = try JSONValue(parsing: try #require(raw.readLine()))
        #expect(second["error"]?["code"] == "line_too_long")
    }

    @Test func aFinalLineWithoutNewlineIsAnsweredBeforeClosing() throws {
        let server = try ControlServer(path: path, handler: TestHandler())
        defer { server.stop() }
        let raw = try #require(RawConnection(path: path))
        raw.send(#"{"id":1,"cmd":"ping"}"#)
        shutdown(raw.fd, Int32(SHUT_WR))
        #expect(raw.readLine() == #"{"id":1,"ok":true,"result":{"pong":true}}"#)
        #expect(raw.closedByPeer())
    }
}
