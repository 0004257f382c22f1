import Foundation
import RoomTapRTP
import RoomTapRTPTestSupport
import RoomTapTestSupport
import Synchronization
import Testing

/// One receive thread for every socket of a receiver (epoll + recvmmsg): counted in
/// /proc/self/task, every socket heard on it, bursts received whole, oversized datagrams cut as
/// before, a socket closed under it left alone, and a stop that wakes it at once.
@Suite("Network: one receive thread for all sockets", .serialized)
struct NetworkRTPReceiverThreadTests {
    /// What the delegate saw: each RTP packet with the port it came in on and the thread it ran on.
    /// Tests wait on this, not on the receiver's statistics: a packet is counted before it is
    /// handed to the delegate.
    final class Recorder: RTPReceiverDelegate, @unchecked Sendable {
        struct Packet: Equatable {
            let port: UInt16
            let ssrc: UInt32
            let sequence: UInt16
            let payload: [UInt8]
        }
        let lock = NSLock()
        var packets: [Packet] = []
        var threads: Set<Int> = []
        let recordsThreads: Bool

        init(recordsThreads: Bool = false) { self.recordsThreads = recordsThreads }

        func receiver(_ receiver: RTPReceiver, didReceive packet: RTPPacket, on address: ListenAddress, arrival: UInt64)
        {
            let p = Packet(
                port: address.port, ssrc: packet.ssrc, sequence: packet.sequenceNumber, payload: Array(packet.payload))
            let thread = recordsThreads ? currentThreadID() : nil
            lock.withLock {
                packets.append(p)
                if let thread { threads.insert(thread) }
            }
        }
        func receiver(
            _ receiver: RTPReceiver, didReceive report: RTCPSenderReport, on address: ListenAddress, arrival: UInt64
        ) {}
        func receiver(_ receiver: RTPReceiver, didReceiveByeFor ssrc: UInt32, on address: ListenAddress) {}

        /// The packets in storage of their own (see `Locked.snapshot`).
        var snapshot: (packets: [Packet], threads: Set<Int>) { lock.withLock { (packets.map { $0 }, threads) } }
    }

    @Test func fiftySocketsShareOneReceiveThreadAndAllAreHeard() throws {
        // Other suites start receivers in parallel: one that starts between the two looks at
        // /proc adds a thread of its own, so a count other than one is measured again (on a new
        // receiver), up to five times. Fifty sockets never count as one thread unless they share it.
        var counts: [Int] = []
        var measured: (sockets: [UDPSocket], recorder: Recorder, receiver: RTPReceiver, started: Set<Int>)?
        while measured == nil && counts.count < 5 {
            let sockets = try (0..<50).map { _ in try UDPSocket(address: ListenAddress(host: "127.0.0.1", port: 0)) }
            let recorder = Recorder(recordsThreads: true)
            let receiver = RTPReceiver(sockets: sockets, delegate: recorder)
            let before = receiveThreads()
            receiver.start()
            receiver.start()  // idempotent
            let started = receiveThreads().subtracting(before)
            counts.append(started.count)
            if started.count == 1 { measured = (sockets, recorder, receiver, started) } else { receiver.stop() }
        }
        let (sockets, recorder, receiver, started) = try #require(
            measured, "one receive thread for 50 sockets; new receive threads per attempt: \(counts)")
        let ports = sockets.map(\.address.port)
        #expect(Set(ports).count == 50 && !ports.contains(0), "each socket has a port of its own")

        for (i, socket) in sockets.enumerated() {
            let packet = RTPPacketBuilder(sequenceNumber: UInt16(i), ssrc: UInt32(1000 + i), payload: [0xF8, UInt8(i)])
            send(packet.bytes(), to: socket.address)
        }
        let heard = waitUntil(timeout: .seconds(10)) { Set(recorder.snapshot.packets.map(\.port)).count == 50 }
        let (packets, threads) = recorder.snapshot
        #expect(heard, "packets on \(Set(packets.map(\.port)).count) of 50 sockets")
        for (i, port) in ports.enumerated() {
            #expect(
                packets.filter { $0.port == port }.map(\.ssrc) == [UInt32(1000 + i)], "socket \(i) hands on its packet")
        }
        #expect(threads.count == 1, "every delegate call on one thread")
        let thread = try #require(threads.first)
        #expect(started == [thread], "the thread that started is the one that delivers")
        #expect(ThreadCensus.name(of: thread) == "roomtap.rx")

        receiver.stop()
        #expect(
            waitUntil(timeout: .seconds(30)) { ThreadCensus.name(of: thread) != "roomtap.rx" },
            "the thread has ended after stop")
        receiver.stop()  // idempotent
        receiver.start()  // no restart after stop
        #expect(ThreadCensus.name(of: thread) != "roomtap.rx")
        #expect(sockets.allSatisfy { $0.isClosed }, "stop closes the sockets")
    }

    @Test func aBurstOf2000DatagramsToOneSocketIsReceivedWhole() throws {
        let socket = try UDPSocket(address: ListenAddress(host: "127.0.0.1", port: 0))
        let recorder = Recorder()
        let receiver = RTPReceiver(sockets: [socket], delegate: recorder)
        receiver.start()
        defer { receiver.stop() }
        let sender = DatagramSocket(socket.address)
        let window = deepReceiveQueue ? 2_000 : 256  // without a deep queue, never more in flight than it holds
        for i in 0..<2_000 {
            if i - receiver.statistics.datagrams >= window {
                _ = waitUntil(timeout: .seconds(10)) { i - receiver.statistics.datagrams < window / 2 }
            }
            sender.send(RTPPacketBuilder(sequenceNumber: UInt16(i), ssrc: 0xB0057, payload: payload(i)).bytes())
        }
        #expect(waitUntil(timeout: .seconds(10)) { recorder.snapshot.packets.count == 2_000 })
        #expect(receiver.statistics.datagrams == 2_000)
        let packets = recorder.snapshot.packets
        #expect(packets.map(\.sequence) == (0..<2_000).map { UInt16($0) }, "every datagram, once, in order")
        #expect(packets.allSatisfy { $0.payload == payload(Int($0.sequence)) }, "payloads intact")
    }

    /// 2000 datagrams queued before `start` come out in full batches: each in its own buffer,
    /// with its own length.
    @Test(.enabled(if: deepReceiveQueue, "needs net.core.rmem_max of 1 MiB or more"))
    func aBacklogQueuedBeforeStartIsReadInBatchesIntact() throws {
        let socket = try UDPSocket(address: ListenAddress(host: "127.0.0.1", port: 0))
        let recorder = Recorder()
        let receiver = RTPReceiver(sockets: [socket], delegate: recorder)
        let sender = DatagramSocket(socket.address)
        for i in 0..<2_000 {
            sender.send(RTPPacketBuilder(sequenceNumber: UInt16(i), ssrc: 0xBAC1, payload: payload(i)).bytes())
        }
        receiver.start()
        defer { receiver.stop() }
        #expect(waitUntil(timeout: .seconds(10)) { recorder.snapshot.packets.count == 2_000 })
        let packets = recorder.snapshot.packets
        #expect(packets.map(\.sequence) == (0..<2_000).map { UInt16($0) })
        #expect(packets.allSatisfy { $0.payload == payload(Int($0.sequence)) })
    }

    /// As with one `recv` per datagram: the first `maxDatagram` bytes of a longer one are parsed
    /// (so an oversized RTP packet is handed on cut short), an empty datagram is not counted, and
    /// the datagram after a long one is whole.
    @Test func oversizedAndEmptyDatagramsAreTreatedAsBefore() throws {
        let socket = try UDPSocket(address: ListenAddress(host: "127.0.0.1", port: 0))
        let recorder = Recorder()
        let receiver = RTPReceiver(sockets: [socket], delegate: recorder)
        receiver.start()
        defer { receiver.stop() }
        let long = (0..<3_000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        let exact = (0..<(RTPReceiver.maxDatagram - 12)).map { UInt8(truncatingIfNeeded: $0 * 5) }
        send(RTPPacketBuilder(sequenceNumber: 1, ssrc: 1, payload: long).bytes(), to: socket.address)
        send([], to: socket.address)
        send(RTPPacketBuilder(sequenceNumber: 2, ssrc: 1, payload: exact).bytes(), to: socket.address)
        send(RTPPacketBuilder(sequenceNumber: 3, ssrc: 1, payload: [0xF8, 1, 2]).bytes(), to: socket.address)
        #expect(waitUntil(timeout: .seconds(10)) { recorder.snapshot.packets.count == 3 })
        let packets = recorder.snapshot.packets
        #expect(packets.map(\.sequence) == [1, 2, 3])
        #expect(packets.first?.payload == Array(long.prefix(RTPReceiver.maxDatagram - 12)), "cut at maxDatagram")
        #expect(packets.dropFirst().first?.payload == exact)
        #expect(packets.last?.payload == [0xF8, 1, 2])
        #expect(receiver.statistics.datagrams == 3, "the empty datagram is not counted")
        #expect(receiver.statistics.invalidTotal == 0)
    }

    /// A socket closed by someone else while the receiver runs is dropped from the wait (no busy
    /// loop on its hang-up); the other sockets go on.
    @Test func aSocketClosedUnderTheReceiverIsLeftAndTheOthersGoOn() throws {
        let sockets = try (0..<2).map { _ in try UDPSocket(address: ListenAddress(host: "127.0.0.1", port: 0)) }
        let recorder = Recorder(recordsThreads: true)
        let receiver = RTPReceiver(sockets: sockets, delegate: recorder)
        receiver.start()
        defer { receiver.stop() }
        send(RTPPacketBuilder(sequenceNumber: 1, ssrc: 1, payload: [0xF8]).bytes(), to: sockets[1].address)
        #expect(waitUntil(timeout: .seconds(10)) { recorder.snapshot.packets.count == 1 })
        let thread = try #require(recorder.snapshot.threads.first)
        sockets[0].close()
        let cpuBefore = cpuNanoseconds(of: thread)
        usleep(200_000)  // a window to measure CPU in, not a wait for a condition
        let cpu = cpuNanoseconds(of: thread) - cpuBefore
        #expect(cpu < 20_000_000, "the receive thread idles after a close (\(cpu) ns of CPU in 200 ms)")
        send(RTPPacketBuilder(sequenceNumber: 2, ssrc: 1, payload: [0xF8]).bytes(), to: sockets[1].address)
        #expect(waitUntil(timeout: .seconds(10)) { recorder.snapshot.packets.count == 2 })
    }

    @Test func stopWakesTheThreadAtOnceAndWorksBeforeStart() throws {
        var counts: [Int] = []  // measured again when a parallel suite's receiver starts meanwhile
        while counts.last != 0 && counts.count < 5 {
            let idle = RTPReceiver(
                sockets: [try UDPSocket(address: ListenAddress(host: "127.0.0.1", port: 0))], delegate: Recorder())
            idle.stop()  // before start: closes the sockets, no thread
            #expect(idle.sockets[0].isClosed)
            let before = receiveThreads()
            idle.start()  // after stop: nothing starts
            counts.append(receiveThreads().subtracting(before).count)
        }
        #expect(counts.last == 0, "start after stop starts no thread; new receive threads per attempt: \(counts)")

        let receiver = RTPReceiver(
            sockets: [try UDPSocket(address: ListenAddress(host: "127.0.0.1", port: 0))], delegate: Recorder())
        receiver.start()
        let begin = DispatchTime.now().uptimeNanoseconds
        receiver.stop()
        let took = DispatchTime.now().uptimeNanoseconds - begin
        // The receive thread's epoll_wait has no timeout: a stop that did not wake it would never
        // return, so a bound for a loaded machine still tells the two apart.
        #expect(took < 10_000_000_000, "stop wakes the wait instead of waiting out a timeout (\(took) ns)")
    }
}

/// A payload of a length and content of its own for packet `i`.
private func payload(_ i: Int) -> [UInt8] {
    [0xF8] + (0..<(10 + i % 150)).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ i) }
}

/// True when the sockets can queue 2000 small datagrams (they ask for 4 MiB; the kernel caps that
/// at net.core.rmem_max, and a 100-byte datagram takes about 800 bytes of it on loopback).
private let deepReceiveQueue: Bool = {
    let text = (try? String(contentsOfFile: "/proc/sys/net/core/rmem_max", encoding: .utf8)) ?? ""
    return (Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0) >= 1 << 20
}()

/// Thread ids (tids) of this process's receive threads.
private func receiveThreads() -> Set<Int> { ThreadCensus.ids(named: "roomtap.rx", prefix: true) }

/// The calling thread's tid (/proc/thread-self links to "<pid>/task/<tid>").
private func currentThreadID() -> Int? {
    (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self"))
        .flatMap { $0.split(separator: "/").last }.flatMap { Int($0) }
}

/// CPU time thread `tid` has run, nanoseconds (first field of its schedstat).
private func cpuNanoseconds(of tid: Int) -> Int {
    let text = (try? String(contentsOfFile: "/proc/self/task/\(tid)/schedstat", encoding: .utf8)) ?? ""
    return Int(text.split(separator: " ").first ?? "") ?? 0
}
