import Foundation
import RoomTapControl
import RoomTapTestSupport
import Synchronization
import Testing

/// Hostile and heavy clients: the server keeps answering everyone else.
@Suite(.serialized) struct ServerRobustnessTests {
    let directory = ShortTemporaryDirectory()
    var path: String { directory.file("c.sock") }

    @Test func fiveThousandRequestsAsFastAsPossible() throws {
        let server = try ControlServer(path: path, handler: TestHandler())
        defer { server.stop() }
        let raw = try #require(RawConnection(path: path))
        let count = 5000
        let writer = BackgroundWork {
            for batch in stride(from: 0, to: count, by: 100) {
                raw.send((batch..<batch + 100).map { #"{"id":\#($0),"cmd":"ping"}"# + "\n" }.joined())
            }
        }
        var answered = 0
        while answered < count, let line = raw.readLine(timeout: 10) {
            guard line == #"{"id":\#(answered),"ok":true,"result":{"pong":true}}"# else {
                Issue.record("reply \(answered): \(line)")
                break
            }
            answered += 1
        }
        #expect(writer.wait())
        #expect(answered == count)
        #expect(server.statistics.requests == count)
    }

    @Test func aWatcherThatNeverReadsDoesNotStallOthers() throws {
        let server = try ControlServer(path: path, handler: TestHandler())
        defer { server.stop() }
        let stuck = try #require(RawConnection(path: path))
        stuck.send("{\"id\":1,\"cmd\":\"watch\"}\n")
        #expect(stuck.readLine() == #"{"id":1,"ok":true,"result":{"watching":true}}"#)
        // From here on `stuck` never reads.

        let publishing = Atomic<Bool>(true)
        let padding = String(repeating: "p", count: 1000)
        let publisher = BackgroundWork {
            var n = 0
            while publishing.load(ordering: .relaxed) {
                server.publish(["event": "levels", "n": .number(Double(n)), "pad": .string(padding)])
                n += 1
            }
        }
        let client = try ControlClient(path: path)
        for n in 0..<200 {
            #expect(
                try client.request("echo", ["n": .number(Double(n))], timeout: .seconds(30)) == [
                    "n": .number(Double(n))
                ]
            )
        }
        // Wait until the stuck watcher's queue is full and events are being dropped.
        _ = waitUntil(timeout: .seconds(30)) { server.statistics.droppedEvents > 0 }
        #expect(server.statistics.droppedEvents > 0)
        for _ in 0..<20 { #expect(try client.request("ping", timeout: .seconds(30)) == ["pong": true]) }
        // A second watcher still gets fresh events.
        let fresh = try #require(RawConnection(path: path))
        fresh.send("{\"id\":2,\"cmd\":\"watch\"}\n")
        #expect(fresh.readLine() == #"{"id":2,"ok":true,"result":{"watching":true}}"#)
        #expect(fresh.readLine()?.hasPrefix(#"{"event":"levels""#) == true)
        publishing.store(false, ordering: .relaxed)
        #expect(publisher.wait())
        // The stuck client can still ask: its reply fits, or it is disconnected (counted).
        stuck.send("{\"id\":3,\"cmd\":\"ping\"}\n")
        #expect(try client.request("ping") == ["pong": true])
    }

    @Test func aClientThatNeverReadsItsRepliesIsThrottled() throws {
        let server = try ControlServer(path: path, handler: TestHandler())
        defer { server.stop() }
        let greedy = try #require(RawConnection(path: path))
        // 400 requests of 60 KB whose replies are as large, never read: the server stops reading
        // this client once its queue holds a quarter MiB, and serves others meanwhile.
        let pad = String(repeating: "z", count: 60_000)
        let line = #"{"cmd":"echo","pad":"\#(pad)"}"# + "\n"
        let writer = BackgroundWork {
            for _ in 0..<400 { if !greedy.send(line) { return } }
        }
        let client = try ControlClient(path: path)
        for _ in 0..<50 { #expect(try client.request("ping", timeout: .seconds(30)) == ["pong": true]) }
        #expect(server.statistics.requests < 100 + 50)
        #expect(server.statistics.slowClientsDisconnected == 0)
        shutdown(greedy.fd, Int32(SHUT_RDWR))
        #expect(writer.wait())
        #expect(try client.request("ping") == ["pong": true])
    }

    @Test func aClientWhoseQueueCannotTakeAReplyIsDisconnected() throws {
        let server = try ControlServer(path: path, handler: TestHandler())
        defer { server.stop() }
        let greedy = try #require(RawConnection(path: path))
        // Ten 300 KB replies asked for in one write, never read: the fourth cannot fit in 1 MiB.
        greedy.send(String(repeating: #"{"cmd":"big","bytes":300000}"# + "\n", count: 10))
        _ = waitUntil(timeout: .seconds(30)) { server.statistics.slowClientsDisconnected > 0 }
        #expect(server.statistics.slowClientsDisconnected == 1)
        #expect(greedy.closedByPeer())
        // A reader gets a reply larger than the limit: nothing else was queued for it.
        let client = try ControlClient(path: path)
        let large = try client.request("big", ["bytes": 2_000_000])
        #expect(large.stringValue?.utf8.count == 2_000_000)
    }

    @Test func seventyClientsAtOnce() throws {
        let server = try ControlServer(path: path, handler: TestHandler())
        defer { server.stop() }
        var connections: [RawConnection] = []
        for _ in 0..<70 { connections.append(try #require(RawConnection(path: path))) }
        var pongs = 0
        var refused = 0
        for connection in connections {
            connection.send("{\"id\":1,\"cmd\":\"ping\"}\n")
            let line = connection.readLine()
            if line == #"{"id":1,"ok":true,"result":{"pong":true}}"# {
                pongs += 1
            } else if line?.contains(#""code":"unavailable""#) == true, line?.contains("too many") == true {
                refused += 1
                #expect(connection.closedByPeer())
            } else {
                Issue.record("unexpected: \(line ?? "nothing")")
            }
        }
        #expect(pongs == ControlLimits.maxClients)
        #expect(refused == 70 - ControlLimits.maxClients)
        #expect(server.statistics.clientsRejected == refused)
        // The client library reports the refusal as the recorder's error, even when the server
        // closed the connection before the request went out.
        do {
            let late = try ControlClient(path: path)
            // The server turned it away before its request goes out.
            #expect(waitUntil(timeout: .seconds(30)) { server.statistics.clientsRejected == refused + 1 })
            _ = try late.request("ping")
            Issue.record("a 65th client was served")
        } catch {
            guard case .failure(let code, let message) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(code == .unavailable)
            #expect(message.hasPrefix("too many control clients (64)"))
        }
        // Closing some makes room again.
        connections.removeAll()
        _ = waitUntil(timeout: .seconds(30)) { server.statistics.clientsConnected == 0 }
        #expect(server.statistics.clientsConnected == 0)
        #expect(try ControlClient(path: path).request("ping") == ["pong": true])
    }

    @Test func clientsThatHangUpBeforeTheReplyDoNotKillTheProcess() throws {
        let server = try ControlServer(path: path, handler: TestHandler())
        defer { server.stop() }
        for _ in 0..<50 {
            let raw = try #require(RawConnection(path: path))
            raw.send(String(repeating: #"{"cmd":"ping"}"# + "\n", count: 200))
            var linger = linger(l_onoff: 1, l_linger: 0)
            setsockopt(raw.fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<linger>.size))
        }
        // Hostile bytes: binary garbage with and without newlines.
        let garbage = try #require(RawConnection(path: path))
        garbage.send((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 7) })
        garbage.send("\n{\"id\":\"after\",\"cmd\":\"ping\"}\n")
        var sawAfter = false
        while let line = garbage.readLine(timeout: 5) {
            #expect((try? JSONValue(parsing: line)) != nil, "a reply that is not JSON: \(line)")
            if line == #"{"id":"after","ok":true,"result":{"pong":true}}"# {
                sawAfter = true
                break
            }
        }
        #expect(sawAfter)
        #expect(try ControlClient(path: path).request("ping") == ["pong": true])
    }
}
