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

    /// The watch ticker on virtual time: no call and no timer while nobody watches (a minute
    /// passes); with a watcher, one call per interval, at the interval and not a nanosecond before;
    /// a stall of ten intervals brings one call, not ten; the watcher gone, no call again.
    @Test func tickerTicksAtTheIntervalOnlyWhileWatched() throws {
        let clock = VirtualDeadlineClock()
        let server = try ControlServer(path: path, handler: TestHandler(), clock: clock)
        defer { server.stop() }
        let calls = Atomic<Int>(0)
        server.setWatchTicker(interval: .milliseconds(100)) {
            let n = calls.add(1, ordering: .relaxed).newValue
            return ["event": "levels", "room_time": .number(Double(n) / 10), "tracks": []]
        }
        let watcher = try #require(RawConnection(path: path))
        clock.advance(by: .seconds(60))
        #expect(Self.levelsBeforeReply(on: watcher, id: 1) == 0, "nobody watches: no call")
        #expect(calls.load(ordering: .relaxed) == 0 && clock.waiters == 0, "and no timer")

        watcher.send("{\"id\":2,\"cmd\":\"watch\"}\n")
        #expect(watcher.readLine() == #"{"id":2,"ok":true,"result":{"watching":true}}"#)
        let start = clock.now
        for n in 1...5 {
            let due = start + .milliseconds(100 * n)
            #expect(waitUntil { clock.nextDeadline == due }, "tick \(n) is due an interval after the last")
            clock.advance(to: due - .nanoseconds(1))
            #expect(Self.levelsBeforeReply(on: watcher, id: 10 + n) == 0, "not before the interval")
            clock.advance(by: .nanoseconds(1))
            #expect(watcher.readLine()?.hasPrefix(#"{"event":"levels""#) == true, "tick \(n) at the interval")
            #expect(calls.load(ordering: .relaxed) == n)
        }

        // A stall of ten intervals: one call, and the next an interval after it.
        #expect(waitUntil { clock.nextDeadline == start + .milliseconds(600) })
        clock.advance(by: .seconds(1))
        #expect(watcher.readLine()?.hasPrefix(#"{"event":"levels""#) == true)
        #expect(waitUntil { clock.nextDeadline == clock.now + .milliseconds(100) })
        #expect(Self.levelsBeforeReply(on: watcher, id: 20) == 0)
        #expect(calls.load(ordering: .relaxed) == 6)

        // The watcher leaves: the timer goes, and a minute brings no call.
        shutdown(watcher.fd, Int32(SHUT_RDWR))
        #expect(waitUntil { server.statistics.clientsConnected == 0 })
        #expect(waitUntil { clock.waiters == 0 })
        clock.advance(by: .seconds(60))
        let bystander = try #require(RawConnection(path: path))
        #expect(Self.levelsBeforeReply(on: bystander, id: 30) == 0)
        #expect(calls.load(ordering: .relaxed) == 6)
    }

    /// Pings the server over `connection` and reads up to the reply: the `levels` events that came
    /// before it (the server loop provably ran after whatever the test did before); -1 when the
    /// reply did not come.
    static func levelsBeforeReply(on connection: RawConnection, id: Int) -> Int {
        connection.send("{\"id\":\(id),\"cmd\":\"ping\"}\n")
        var levels = 0
        while let line = connection.readLine(timeout: 30) {
            if line.contains("\"id\":\(id)") { return levels }
            if line.hasPrefix(#"{"event":"levels""#) { levels += 1 }
        }
        return -1
    }
}
