import Foundation
import RoomTapControl
import RoomTapSync
import RoomTapTestSupport
import Synchronization
import Testing

/// `watch`: events fan out to every watcher; the ticker runs while someone watches.
@Suite struct WatchTests {
    let directory = ShortTemporaryDirectory()
    var path: String { directory.file("c.sock") }

    @Test func twoWatchersReceiveEveryEvent() throws {
        let server = try ControlServer(path: path, handler: TestHandler())
        defer { server.stop() }
        let watchers = try (0..<2).map { _ in try #require(RawConnection(path: path)) }
        for (index, watcher) in watchers.enumerated() {
            watcher.send("{\"id\":\(index),\"cmd\":\"watch\"}\n")
            #expect(watcher.readLine() == #"{"id":\#(index),"ok":true,"result":{"watching":true}}"#)
        }
        let bystander = try #require(RawConnection(path: path))
        server.publish(["event": "track_added", "track": ["name": "alice", "state": "live"]])
        server.publish(["event": "track_removed", "track": "alice"])
        for watcher in watchers {
            #expect(watcher.readLine() == #"{"event":"track_added","track":{"name":"alice","state":"live"}}"#)
            #expect(watcher.readLine() == #"{"event":"track_removed","track":"alice"}"#)
        }
        #expect(bystander.readLine(timeout: 0.2) == nil)
        // A watcher may still send requests.
        watchers[0].send("{\"id\":9,\"cmd\":\"ping\"}\n")
        #expect(watchers[0].readReply() == #"{"id":9,"ok":true,"result":{"pong":true}}"#)
    }

    @Test func eventsPublishedFromManyThreadsReachEveryWatcherInOrder() throws {
        let server = try ControlServer(path: path, handler: TestHandler())
        defer { server.stop() }
        let watchers = try (0..<2).map { _ in try #require(RawConnection(path: path)) }
        for watcher in watchers {
            watcher.send("{\"cmd\":\"watch\"}\n")
            #expect(watcher.readLine() == #"{"id":null,"ok":true,"result":{"watching":true}}"#)
        }
        let threads = 4
        let perThread = 500
        let publishers = (0..<threads).map { thread in
            BackgroundWork {
                for n in 0..<perThread {
                    server.publish([
                        "event": "control_changed", "thread": .number(Double(thread)), "n": .number(Double(n)),
                    ])
                }
            }
        }
        for publisher in publishers { #expect(publisher.wait()) }
        for watcher in watchers {
            var next = [Int](repeating: 0, count: threads)
            for _ in 0..<threads * perThread {
                guard let line = watcher.readLine(), let event = try? JSONValue(parsing: line),
                    let thread = event["thread"]?.intValue, let n = event["n"]?.intValue
                else {
                    Issue.record("missing or bad event")
                    break
                }
                #expect(n == next[thread])
                next[thread] = n + 1
            }
            #expect(next == [Int](repeating: perThread, count: threads))
        }
        #expect(server.statistics.droppedEvents == 0)
    }

    @Test func clientWatchStreamsUntilTheCallbackStops() throws {
        let server = try ControlServer(path: path, handler: TestHandler())
        defer { server.stop() }
        let path = self.path
        let received = Locked<[JSONValue]>([])
        let watcher = BackgroundWork {
            do {
                let client = try ControlClient(path: path)
                try client.watch { event in
                    received.withLock { $0.append(event) }
                    return received.withLock { $0.count } < 3
                }
            } catch {
                Issue.record("watch failed: \(error)")
            }
        }
        var n = 0
        let deadline = Date().addingTimeInterval(10)
        while received.withLock({ $0.count }) < 3 && Date() < deadline {
            server.publish(["event": "control_changed", "n": .number(Double(n))])
            n += 1
            usleep(5000)  // the test's own pacing of events
        }
        #expect(watcher.wait())
        let events = received.withLock { $0 }
        #expect(events.count == 3)
        #expect(events.allSatisfy { $0["event"] == "control_changed" })
        let numbers = events.compactMap { $0["n"]?.intValue }
        #expect(numbers == numbers.sorted() && Set(numbers).count == 3)
    }

    @Test func tickerRunsAboutTenTimesASecondOnlyWhileWatched() throws {
        let server = try ControlServer(path: path, handler: TestHandler())
        defer { server.stop() }
        let calls = Atomic<Int>(0)
        server.setWatchTicker(interval: .milliseconds(100)) {
            let n = calls.add(1, ordering: .relaxed).newValue
            return ["event": "levels", "room_time": .number(Double(n) / 10), "tracks": []]
        }
        // The server loop runs (a client's pings answered) for 0.3 s, three ticker intervals, with
        // nobody watching: the ticker never runs.
        #expect(Self.serverAnswers(at: path, for: .milliseconds(300)))
        #expect(calls.load(ordering: .relaxed) == 0)

        let watcher = try #require(RawConnection(path: path))
        watcher.send("{\"id\":1,\"cmd\":\"watch\"}\n")
        #expect(watcher.readLine() == #"{"id":1,"ok":true,"result":{"watching":true}}"#)
        var levels = 0
        let end = Date().addingTimeInterval(1)
        while Date() < end, let line = watcher.readLine(timeout: end.timeIntervalSinceNow) {
            if line.hasPrefix(#"{"event":"levels""#) { levels += 1 }
        }
        #expect(levels >= 5)
        #expect(levels <= 15)

        // The watcher leaves: the ticker stops.
        shutdown(watcher.fd, Int32(SHUT_RDWR))
        #expect(waitUntil(timeout: .seconds(30)) { server.statistics.clientsConnected == 0 })
        let stopped = calls.load(ordering: .relaxed)
        #expect(Self.serverAnswers(at: path, for: .milliseconds(300)))
        #expect(calls.load(ordering: .relaxed) == stopped)
    }

    /// Pings the server at `path` over one connection, one after another, until `span` has passed
    /// (the server loop provably ran through that span, however loaded the machine); false if a
    /// ping went unanswered.
    static func serverAnswers(at path: String, for span: Duration) -> Bool {
        guard let client = RawConnection(path: path) else { return false }
        let end = ContinuousClock.now + span
        var id = 100
        repeat {
            id += 1
            client.send("{\"id\":\(id),\"cmd\":\"ping\"}\n")
            guard client.readLine(timeout: 30)?.contains("\"id\":\(id)") == true else { return false }
        } while ContinuousClock.now < end
        return true
    }
}
