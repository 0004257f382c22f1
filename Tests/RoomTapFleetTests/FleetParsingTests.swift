import Foundation
import RoomTapCLITestSupport
import RoomTapFleet
import RoomTapTestSupport
import Testing

/// What the fleet reads from outside: Redis URLs, job ids, HTTP request heads, sd_notify.
@Suite("Fleet: parsing what comes from outside")
struct FleetParsingTests {
    @Test func redisURLs() throws {
        #expect(
            try RedisURL("redis://10.0.0.5:6380/3")
                == RedisURL(endpoint: .tcp(host: "10.0.0.5", port: 6380), database: 3))
        #expect(try RedisURL("redis://localhost").endpoint == .tcp(host: "localhost", port: 6379))
        #expect(try RedisURL("redis://[::1]:7000").endpoint == .tcp(host: "::1", port: 7000))
        #expect(
            try RedisURL("unix:///run/redis.sock?db=2")
                == RedisURL(endpoint: .unix(path: "/run/redis.sock"), database: 2))
        let secret = try RedisURL("redis://:hunter2@db:6379")
        #expect(secret.password == "hunter2" && !secret.description.contains("hunter2"))
        for bad in [
            "", "http://x:1", "redis://", "redis://:1", "redis://h:0", "redis://h:65536", "redis://h:1x",
            "redis://h/16",
            "redis://h/-1", "redis://h x:1", "redis://h:1/a", "unix://", "unix://rel", "unix:///s?db=x", "redis://[::1",
            "redis://h\u{0}:1", "redis://h:+1", String(repeating: "a", count: 5000),
        ] {
            #expect(throws: RedisError.self, "\(bad.debugDescription)") { try RedisURL(bad) }
        }
        do { _ = try RedisURL("redis://u:pw@") } catch {
            #expect(!error.description.contains("pw"), "a password never appears in a message")
        }
    }

    @Test func jobIDs() {
        #expect(JobID.isValid("standup-2026.12.02_a"))
        for bad in ["", ".hidden", "-x", "a/b", "a b", "é", String(repeating: "x", count: 65), "..", "a\nb"] {
            #expect(!JobID.isValid(bad), "\(bad.debugDescription)")
        }
        let made = JobID.make()
        #expect(JobID.isValid(made) && made.hasPrefix("job-"))
        #expect(JobID.make() != JobID.make())
    }

    @Test func httpRequestHeads() {
        let ok = HTTPRequestHead(Array("GET /metrics?x=1 HTTP/1.1\r\nHost: a\r\n\r\n".utf8))
        #expect(ok == nil ? false : ok!.method == "GET" && ok!.path == "/metrics")
        let hostile: [[UInt8]] = [
            [], Array("GET /metrics HTTP/1.1\r\n".utf8), Array("GET metrics HTTP/1.1\r\n\r\n".utf8),
            Array("get / HTTP/1.1\r\n\r\n".utf8), Array("GET / HTTP/2\r\n\r\n".utf8),
            Array("GET  / HTTP/1.1\r\n\r\n".utf8),
            Array("GET /\u{7f} HTTP/1.1\r\n\r\n".utf8), [0xff, 0xfe, 13, 10, 13, 10],
            Array(("GET /" + String(repeating: "a", count: 9000) + " HTTP/1.1\r\n\r\n").utf8),
            Array("\r\n\r\n".utf8),
        ]
        for bytes in hostile { #expect(HTTPRequestHead(bytes) == nil, "\(bytes.prefix(40))") }
        var random = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let bytes = (0..<Int.random(in: 0..<64, using: &random)).map { _ in
                UInt8.random(in: 0...255, using: &random)
            }
            _ = HTTPRequestHead(bytes + [13, 10, 13, 10])
        }
    }

    @Test func remainingDurationOfARoomTakenOver() {
        #expect(
            Worker.remainingDuration(["--listen", ":0", "--duration", "60"], elapsed: 15) == [
                "--listen", ":0", "--duration", "45.00",
            ])
        #expect(Worker.remainingDuration(["--duration=10"], elapsed: 30) == ["--duration=1.00"])
        #expect(Worker.remainingDuration(["--mix"], elapsed: 30) == ["--mix"])
    }

    @Test func systemdNotifyDatagrams() throws {
        let directory = try TestScratch.directory("notify")
        let path = directory.appendingPathComponent("notify.sock").path
        let receiver = try DatagramReceiver(path: path)
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": path, "WATCHDOG_USEC": "4000000"])
        #expect(notifier.isActive && notifier.watchdogInterval == 2)
        #expect(notifier.notify("READY=1\nSTATUS=taking work"))
        #expect(receiver.receive() == "READY=1\nSTATUS=taking work")
        #expect(SystemdNotifier(environment: [:]).isActive == false)
        #expect(SystemdNotifier(environment: ["NOTIFY_SOCKET": "relative"]).isActive == false)
    }
}
