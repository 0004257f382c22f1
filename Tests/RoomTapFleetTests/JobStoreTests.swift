import Foundation
import RoomTapCLITestSupport
import RoomTapFleet
import RoomTapTestSupport
import Testing

/// The job store against a real redis-server: claims, leases, fencing, reclaim, cancel.
@Suite("Fleet: jobs, leases and fencing on a real Redis")
struct JobStoreTests {
    let server: RedisTestServer
    let keys = FleetKeys(prefix: "t\(UInt32.random(in: 0...UInt32.max)):")

    init() throws { server = try RedisTestServer() }

    func store() throws -> JobStore {
        JobStore(connection: RedisConnection(try RedisURL(server.url)), keys: keys)
    }

    func submit(_ store: JobStore, _ id: String, live: Bool = false) throws {
        #expect(
            try store.submit(.init(id: id, arguments: ["--file", "a=/x.opus"], tracks: 2, isLive: live, upload: nil)))
    }

    @Test func aJobIsDeliveredOnceAndItsIdIsUnique() throws {
        let a = try store()
        try submit(a, "one")
        #expect(try a.submit(.init(id: "one", arguments: [], tracks: 1, isLive: false, upload: nil)) == false)
        try a.ensureGroup()
        let delivery = try #require(try a.readNew(consumer: "w1", block: 1))
        #expect(delivery.job == "one")
        #expect(try a.readNew(consumer: "w2", block: 0.1) == nil, "a delivery goes to one worker")
        guard case .claimed(let epoch, _, _) = try a.claim(delivery, worker: "w1", lease: 5) else {
            Issue.record("not claimed")
            return
        }
        #expect(epoch == 1)
        let record = try #require(try a.job("one"))
        #expect(record.state == .running && record.worker == "w1" && record.epoch == 1 && record.leased)
        #expect(record.arguments == ["--file", "a=/x.opus"])
    }

    @Test func anExpiredLeaseIsReclaimedAndTheOldEpochIsFencedOff() throws {
        let a = try store()
        let b = try store()
        try submit(a, "r", live: true)
        try a.ensureGroup()
        let delivery = try #require(try a.readNew(consumer: "w1", block: 1))
        #expect(
            try a.claim(delivery, worker: "w1", lease: 0.3)
                == .claimed(epoch: 1, previousWorker: "", previousState: "queued"))
        #expect(try a.update(job: "r", token: "w1/1", epoch: 1, [("listen", "127.0.0.1:1")]))
        // While the lease holds, nobody else can claim the room, even with its delivery in hand.
        #expect(try b.claim(delivery, worker: "w2", lease: 5) == .held("w1/1"))
        // w1 stops renewing: the lease expires, the delivery goes idle, w2's janitor takes it.
        #expect(waitUntil(timeout: .seconds(10)) { (try? a.job("r"))?.displayState == .moving })
        var reclaimed: [JobStore.Delivery] = []
        #expect(
            waitUntil(timeout: .seconds(10)) {
                reclaimed = (try? b.reclaimIdle(consumer: "w2", minIdle: 0.3)) ?? []
                return !reclaimed.isEmpty
            })
        #expect(reclaimed.map(\.job) == ["r"])
        #expect(
            try b.claim(reclaimed[0], worker: "w2", lease: 5)
                == .claimed(epoch: 2, previousWorker: "w1", previousState: "running"))
        // Every write of the old epoch is refused: renew, update, finish, hand-over.
        #expect(try a.renew(job: "r", token: "w1/1", lease: 5) == nil)
        #expect(try a.update(job: "r", token: "w1/1", epoch: 1, [("listen", "stale")]) == false)
        #expect(try a.finish(job: "r", token: "w1/1", epoch: 1, state: .done) == false)
        #expect(try a.handOver(job: "r", token: "w1/1", epoch: 1, state: .moving) == false)
        let record = try #require(try b.job("r"))
        #expect(record.state == .running && record.worker == "w2" && record.epoch == 2)
        #expect(record.listen == "", "a new attempt starts without the old address")
        // The new owner finishes it; a finished job is never redone.
        #expect(try b.finish(job: "r", token: "w2/2", epoch: 2, state: .done, [("outputs", "[\"a.wav\"]")]))
        #expect(try b.claim(reclaimed[0], worker: "w3", lease: 5) == .finished(.done))
        #expect(try b.job("r")?.outputs == ["a.wav"])
        #expect(try b.job("r")?.leased == false)
    }

    @Test func aHandOverIsDeliveredAgainAtOnce() throws {
        let a = try store()
        try submit(a, "h", live: true)
        try a.ensureGroup()
        let first = try #require(try a.readNew(consumer: "w1", block: 1))
        _ = try a.claim(first, worker: "w1", lease: 30)
        #expect(try a.handOver(job: "h", token: "w1/1", epoch: 1, state: .moving))
        #expect(try a.job("h")?.displayState == .moving)
        let again = try #require(try a.readNew(consumer: "w2", block: 1), "a new delivery, not after a lease")
        #expect(again.job == "h" && again.entry != first.entry)
        #expect(try a.claim(first, worker: "w3", lease: 5) == .stale, "the old delivery is stale")
        #expect(
            try a.claim(again, worker: "w2", lease: 5)
                == .claimed(epoch: 2, previousWorker: "w1", previousState: "moving"))
    }

    @Test func cancelStopsAQueuedJobAndFlagsARunningOne() throws {
        let a = try store()
        try submit(a, "q")
        try submit(a, "run")
        #expect(try a.cancel("q") == "cancelled")
        #expect(try a.cancel("nothing") == nil)
        try a.ensureGroup()
        var deliveries: [JobStore.Delivery] = []
        while let d = try a.readNew(consumer: "w1", block: 0.2) { deliveries.append(d) }
        let q = try #require(deliveries.first { $0.job == "q" })
        #expect(try a.claim(q, worker: "w1", lease: 5) == .finished(.cancelled))
        let run = try #require(deliveries.first { $0.job == "run" })
        _ = try a.claim(run, worker: "w1", lease: 5)
        #expect(try a.cancel("run") == "cancelling")
        #expect(try a.renew(job: "run", token: "w1/1", lease: 5) == true, "the renewal tells the worker")
        #expect(try a.finish(job: "run", token: "w1/1", epoch: 1, state: .cancelled))
        #expect(try a.cancel("run") == "ended:cancelled")
        #expect(try a.jobs().map(\.id) == ["q", "run"])
    }

    @Test func aDeliveryPutBackGoesToTheNextReader() throws {
        let a = try store()
        try submit(a, "big")
        try a.ensureGroup()
        let d = try #require(try a.readNew(consumer: "small", block: 1))
        try a.putBack(d)
        let again = try #require(try a.readNew(consumer: "large", block: 1))
        #expect(again.job == "big" && again.entry != d.entry)
        #expect(
            try a.claim(again, worker: "large", lease: 5)
                == .claimed(epoch: 1, previousWorker: "", previousState: "queued"))
    }

    @Test func anUnreachableServerIsOneClearLine() throws {
        let port = try freeTCPPort()
        let connection = RedisConnection(try RedisURL("redis://127.0.0.1:\(port)"), timeout: 1)
        #expect(throws: RedisError.self) { try connection.command(["PING"]) }
        do { try connection.command(["PING"]) } catch {
            #expect(error.description.hasPrefix("cannot reach Redis at redis://127.0.0.1:\(port): "))
            #expect(!error.description.contains("\n"))
        }
    }
}
