import Foundation
import RoomTapAll
import RoomTapRTPTestSupport
import RoomTapSync
import RoomTapTestSupport
import Synchronization
import Testing

/// Hundreds of create/use/destroy cycles of every class of ours that owns a lock, next to atomics,
/// under contention: the shape that freed invalid pointers in release builds while locks were
/// `Synchronization.Mutex` stored inline in their owners (QueuedSink, then RealtimeAgent; see
/// docs/ARCHITECTURE.md, "Locks"). Meaningful in release (`make test`), and under the sanitizers
/// (`make sanitize`), which see every byte.
@Suite("Lock owners survive create/use/destroy cycles")
struct LockOwnerLifecycleTests {
    /// A short room (tracks, a mix, dedicated and pooled queued sinks, routing changes while it
    /// runs, on two render threads) made and dropped 300 times.
    @Test func roomsTracksMixersAndQueuedSinks() throws {
        let pool = SinkWorkerPool(workerCount: 2, threadName: "roomtap.tcycles")
        var frames = 0
        for cycle in 0..<300 {
            let room = Room(clock: VirtualClock(), renderThreads: 2, parallelThreshold: 2)
            let tracks = (0..<3).map { k in
                room.addTrack(name: "t\(k)", source: SineSource(frequency: 440 + Double(k), length: 4_800))
            }
            let mix = room.addMix(name: "mix", inputs: Array(tracks.prefix(2)))
            let consumers = (0..<3).map { _ in RecordingConsumer() }
            let sinks = [
                QueuedSink(consumer: consumers[0], channels: 1, capacity: 8, policy: .wait),
                QueuedSink(consumer: consumers[1], channels: 1, capacity: 8, policy: .wait, pool: pool),
                QueuedSink(consumer: consumers[2], channels: 1, capacity: 8, policy: .wait, pool: pool),
            ]
            tracks[0].addSink(sinks[0])
            tracks[1].addSink(sinks[1])
            mix.addSink(sinks[2])
            let changer = Thread {
                (mix.source as? Mixer)?.addInput(tracks[2])
                tracks[2].addSink(CollectingSink())
                room.solo([tracks[cycle % 3]])
            }
            changer.start()
            room.run()
            for sink in sinks { try sink.close() }
            frames += consumers[0].samples.count / 480
            #expect(consumers[0].samples.count == 4_800, "cycle \(cycle): every frame reached the sink")
            _ = sinks.map { $0.failure }
        }
        #expect(frames == 300 * 10)
    }

    /// `Latch`: every waiter sees it open (four threads waiting, one opening, 200 times); one
    /// that was never opened times out false; opening twice is harmless.
    @Test func latchesOpenForEveryWaiterAndTimeOutClosed() {
        let closed = Latch()
        #expect(!closed.wait(timeoutMilliseconds: 0) && !closed.wait(timeoutMilliseconds: 20) && !closed.isOpened)
        for _ in 0..<200 {
            let latch = Latch()
            let opened = Atomic<Int>(0)
            let done = DispatchGroup()
            for _ in 0..<4 {
                done.enter()
                Thread {
                    if latch.wait(timeoutMilliseconds: 30_000) { opened.add(1, ordering: .relaxed) }
                    done.leave()
                }.start()
            }
            Thread {
                latch.open()
                latch.open()
            }.start()
            #expect(done.wait(timeout: .now() + 60) == .success)
            #expect(opened.load(ordering: .relaxed) == 4 && latch.isOpened && latch.wait(timeoutMilliseconds: 0))
        }
    }

    /// The receive thread's owner (its phase and invalid-datagram counts are locked) started,
    /// fed and stopped 100 times; sender clock syncs made and dropped 1000 times.
    @Test func receiversAndSenderClockSyncs() throws {
        for _ in 0..<100 {
            let socket = try UDPSocket(address: ListenAddress(host: "127.0.0.1", port: 0))
            let sender = DatagramSocket(socket.address)
            let receiver = RTPReceiver(sockets: [socket], delegate: NoDelegate())
            receiver.start()
            for i in 0..<4 {
                sender.send(RTPPacketBuilder(sequenceNumber: UInt16(i), timestamp: 0, ssrc: 1, payload: [0xF8]).bytes())
                sender.send([0x40, 111, 0, 1])  // invalid: counted under the lock
            }
            receiver.stop()
        }
        for _ in 0..<1000 { _ = SenderClockSync() }
    }

    /// Control servers listening, answering one client and stopped, 100 times; WebSocket clients
    /// made and closed without a connection 300 times.
    @Test func controlServersAndWebSocketClients() throws {
        let directory = try TemporaryDirectory()
        for k in 0..<100 {
            let path = directory.path + "/c\(k % 4).sock"
            let server = try ControlServer(path: path, handler: EchoHandler())
            let client = try ControlClient(path: path)
            var answered = false
            do { _ = try client.request("no-such-command") } catch {
                if case .failure = error { answered = true }
            }
            #expect(answered, "the server answered")
            server.stop()
        }
        for _ in 0..<300 {
            let client = WebSocketClient(configuration: WebSocketConfiguration(url: "ws://127.0.0.1:9/")) { _ in }
            client.close()
        }
    }

    /// `Locked` itself: 1000 locks each taken by four threads, with trylocks, then freed.
    @Test func lockedUnderContention() {
        for _ in 0..<1000 {
            let lock = Locked<[Int]>([])
            let flag = Atomic<Int>(0)
            DispatchQueue.concurrentPerform(iterations: 4) { t in
                for i in 0..<25 {
                    lock.withLock { $0.append(t * 100 + i) }
                    _ = lock.withLockIfAvailable { $0.count }
                    flag.add(1, ordering: .relaxed)
                }
            }
            #expect(lock.withLock { $0.count } == 100 && flag.load(ordering: .relaxed) == 100)
        }
    }

    final class NoDelegate: RTPReceiverDelegate, Sendable {
        func receiver(
            _ receiver: RTPReceiver, didReceive packet: RTPPacket, on address: ListenAddress, arrival: UInt64
        ) {}
        func receiver(
            _ receiver: RTPReceiver, didReceive report: RTCPSenderReport, on address: ListenAddress, arrival: UInt64
        ) {}
        func receiver(_ receiver: RTPReceiver, didReceiveByeFor ssrc: UInt32, on address: ListenAddress) {}
    }

    final class EchoHandler: ControlHandler, Sendable {
        func handle(_ request: ControlRequest) -> ControlResponse { .unknownCommand(request) }
    }
}
