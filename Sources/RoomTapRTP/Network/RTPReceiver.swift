import CLinuxNet
import Foundation
import RoomTapCore
import RoomTapSync
import Synchronization

/// What an ``RTPReceiver`` hands on. Called on the receiver's one receive thread
/// (`roomtap.rx`), for every socket in turn: keep it short (parse, route, copy into a jitter
/// buffer); never decode or write files. Calls never overlap, and one socket's datagrams come in
/// the order the kernel queued them.
public protocol RTPReceiverDelegate: AnyObject, Sendable {
    /// A valid RTP packet (RFC 3550 §5.1). `arrival` is CLOCK_MONOTONIC in nanoseconds: when the
    /// kernel received the datagram (see ``RTPReceiver``). The packet's bytes are valid only
    /// during the call.
    func receiver(_ receiver: RTPReceiver, didReceive packet: RTPPacket, on address: ListenAddress, arrival: UInt64)
    /// An RTCP sender report (RFC 3550 §6.4.1): maps a sender's RTP time to its wall clock.
    /// `arrival` as for RTP packets.
    func receiver(
        _ receiver: RTPReceiver, didReceive report: RTCPSenderReport, on address: ListenAddress, arrival: UInt64)
    /// An RTCP BYE (RFC 3550 §6.6) for `ssrc`: that participant has left.
    func receiver(_ receiver: RTPReceiver, didReceiveByeFor ssrc: UInt32, on address: ListenAddress)
}

/// Receives RTP and RTCP (multiplexed on one port, RFC 5761 §4) on one or more UDP sockets, all on
/// one thread, and hands parsed packets to its delegate. It only parses and routes: it never
/// decodes or writes ("the clock pulls, the network pushes").
///
/// The receive thread (`roomtap.rx`, one per receiver whatever the number of sockets) waits in
/// `epoll_wait` (level-triggered) on every socket and on an eventfd that `stop` writes. A readable
/// socket is read with `recvmmsg(MSG_DONTWAIT)`, up to ``batchSize`` datagrams a call, until a
/// call returns fewer (the socket is empty) or after ``batchesPerWake`` calls (so a flooded port
/// cannot starve the others; epoll reports it again). Arrival times are the kernel's receive
/// time of each datagram (SO_TIMESTAMPNS, mapped from CLOCK_REALTIME to CLOCK_MONOTONIC at the
/// read), so a receive thread that ran late (a busy machine, a batch behind another port's) does
/// not make packets look late: the record anchors streams on their least-delayed packets, and
/// scheduling noise would otherwise be measured as network delay. Without a kernel timestamp the
/// read's own time is used. A datagram longer than ``maxDatagram`` is
/// cut to its first ``maxDatagram`` bytes (and then parsed as such, as `recv` into a buffer that
/// size would); an empty one is neither counted nor handed on. A socket closed by someone else
/// while the receiver runs is dropped from the wait; the others go on.
///
/// Thread: `start` and `stop` from a control thread; the delegate is called on the receive thread;
/// the counters are atomics readable anywhere. Nothing is allocated per datagram: the batch's
/// buffers (``batchSize`` × ``maxDatagram`` bytes and their headers), the epoll instance and the
/// eventfd are made at init. Linux only.
///
/// Who may send, and SRTP. A socket may have a ``ReceiveGuard``: a datagram from a source it does
/// not allow, or one that fails SRTP/SRTCP authentication or replay protection, is counted there
/// and dropped before it is parsed (still counted in ``Statistics/datagrams``); an SRTP packet is
/// decrypted in place, in the batch buffer, and handed on as the plain packet it carried.
public final class RTPReceiver: Sendable {
    /// Largest datagram read, in bytes. A longer one is cut to this many and parsed as such.
    public static let maxDatagram = 2048
    /// Datagrams read by one `recvmmsg` call.
    public static let batchSize = 32
    /// `recvmmsg` calls on one readable socket before the receive thread turns to the others.
    public static let batchesPerWake = 8

    /// Counters of everything received, by kind; drops by reason. Readable from any thread.
    public final class Statistics: Sendable {
        fileprivate let datagramCount = Atomic<Int>(0)
        fileprivate let rtpCount = Atomic<Int>(0)
        fileprivate let rtcpCount = Atomic<Int>(0)
        fileprivate let rtcpInvalidCount = Atomic<Int>(0)
        fileprivate let invalidCounts = Locked<[Int]>(Array(repeating: 0, count: RTPParseError.allCases.count))

        /// Datagrams read.
        public var datagrams: Int { datagramCount.load(ordering: .relaxed) }
        /// Valid RTP packets handed on.
        public var rtpPackets: Int { rtpCount.load(ordering: .relaxed) }
        /// RTCP datagrams seen.
        public var rtcpPackets: Int { rtcpCount.load(ordering: .relaxed) }
        /// RTCP datagrams that failed to parse (in part).
        public var rtcpInvalid: Int { rtcpInvalidCount.load(ordering: .relaxed) }
        /// Invalid RTP datagrams dropped for `reason`.
        public func invalid(_ reason: RTPParseError) -> Int { invalidCounts.withLock { $0[Int(reason.rawValue)] } }
        /// Invalid RTP datagrams dropped, all reasons.
        public var invalidTotal: Int { invalidCounts.withLock { $0.reduce(0, +) } }

        fileprivate func countInvalid(_ reason: RTPParseError) {
            invalidCounts.withLock { $0[Int(reason.rawValue)] += 1 }
        }
    }

    /// Where the receive thread is: not started, running (its thread), or stopped for good.
    private enum Phase {
        case idle
        case running(RoomThread)
        case stopped
    }

    /// The sockets listened on.
    public let sockets: [UDPSocket]
    /// Each socket's guard (same order as ``sockets``), nil where everything is let through.
    public let guards: [ReceiveGuard?]
    /// Counters.
    public let statistics = Statistics()
    private let delegate: any RTPReceiverDelegate
    /// The epoll instance over every socket (data: the socket's index) and the wake eventfd.
    private let epollFD: Int32
    /// Written by `stop` to wake the receive thread (data: ``wakeToken``).
    private let wakeFD: Int32
    /// The receive thread's buffers; touched by the receive thread only.
    private let buffers: ReceiveBuffers
    private let phase = Locked<Phase>(.idle)
    /// The room clock's SCHED_FIFO priority, if any: the receive thread runs one below it.
    private let realtimePriority: Int32?

    private static let wakeToken = UInt64.max

    /// A receiver over bound sockets: makes the epoll instance, the eventfd and the batch buffers.
    /// Nothing is read before `start`. Traps when the process has no descriptor or memory left
    /// for them. `guards` pairs with `sockets` by index (missing entries: no guard). With
    /// `realtimePriority` (the room clock's) the receive thread runs under SCHED_FIFO one below
    /// it, so a flood of packets never delays a tick: a packet handed to its jitter buffer late by
    /// a busy machine is a packet concealed.
    public init(
        sockets: [UDPSocket], guards: [ReceiveGuard?] = [], delegate: any RTPReceiverDelegate,
        realtimePriority: Int32? = nil
    ) {
        self.sockets = sockets
        self.realtimePriority = realtimePriority
        self.guards = sockets.indices.map { $0 < guards.count ? guards[$0] : nil }
        self.delegate = delegate
        buffers = ReceiveBuffers()
        epollFD = roomtap_epoll_create()
        guard epollFD >= 0 else { fatalError("RTPReceiver: epoll_create1 failed: \(String(cString: strerror(errno)))") }
        wakeFD = roomtap_eventfd_create()
        guard wakeFD >= 0 else { fatalError("RTPReceiver: eventfd failed: \(String(cString: strerror(errno)))") }
        roomtap_epoll_add(epollFD, wakeFD, Self.wakeToken)
        for (index, socket) in sockets.enumerated() {
            _ = roomtap_socket_enable_timestamps(socket.fd)
            roomtap_epoll_add(epollFD, socket.fd, UInt64(index))
        }
    }

    deinit {
        close(epollFD)
        close(wakeFD)
    }

    /// Starts the receive thread (`roomtap.rx`), named before this returns; under SCHED_FIFO one
    /// below the init's `realtimePriority` when that is given (and permitted). Idempotent; does
    /// nothing after `stop`.
    public func start() {
        phase.withLock { phase in
            guard case .idle = phase else { return }
            let priority = realtimePriority.map { max(1, $0 - 1) }
            let thread = RoomThread.start("roomtap.rx", policy: .realtime(orNormal: priority)) { [self] in
                receiveLoop()
            }
            phase = .running(thread)
        }
    }

    /// Wakes the receive thread, joins it (after this returns no delegate call is running or comes),
    /// then closes the sockets. Idempotent; also closes the sockets of a receiver never started.
    /// Not from the delegate (the receive thread cannot join itself).
    public func stop() {
        phase.withLock { phase in
            if case .running(let thread) = phase {
                roomtap_eventfd_signal(wakeFD)
                thread.join()
            }
            phase = .stopped
        }
        for socket in sockets { socket.close() }
    }

    private func unwatch(_ index: Int) {
        roomtap_epoll_remove(epollFD, sockets[index].fd)
    }

    /// The receive thread: waits on every socket, reads what is ready, until `stop` writes the
    /// eventfd.
    private func receiveLoop() {
        let tokens = buffers.tokens
        let hangups = buffers.hangups
        while true {
            let ready = roomtap_epoll_wait(epollFD, tokens, hangups, Int32(ReceiveBuffers.events), -1)
            if ready < 0 {
                if errno == EINTR { continue }
                return
            }
            for i in 0..<Int(ready) {
                let token = tokens[i]
                if token == Self.wakeToken { return }
                let index = Int(token)
                if hangups[i] != 0 {
                    unwatch(index)  // shut down by `UDPSocket.close`: nothing more to read there
                    continue
                }
                drain(index)
            }
        }
    }

    /// Reads socket `index` in batches until it is empty or ``batchesPerWake`` batches were read.
    private func drain(_ index: Int) {
        let socket = sockets[index]
        let address = socket.address
        let guardian = guards[index]
        let batch = buffers.batch
        var calls = 0
        while calls < Self.batchesPerWake {
            let count = roomtap_recv_batch_read(batch, socket.fd)
            if count < 0 {
                if errno == EINTR { continue }
                if errno != EAGAIN && errno != EWOULDBLOCK && socket.isClosed { unwatch(index) }
                return
            }
            calls += 1
            var received = 0
            defer { socket.noteReceived(received) }
            for k in 0..<UInt32(count) {
                var length: UInt32 = 0
                let bytes = roomtap_recv_batch_datagram(batch, k, &length)
                guard length > 0 else { continue }
                received += 1
                let arrival = roomtap_recv_batch_arrival(batch, k)
                statistics.datagramCount.add(1, ordering: .relaxed)
                var plainLength = Int(length)
                if let guardian {
                    var source = ReceiveGuard.Source(family: 0, high: 0, low: 0)
                    source.family = roomtap_recv_batch_source(batch, k, &source.high, &source.low)
                    // The batch's buffer is the receiver's own: SRTP decrypts there, in place.
                    let buffer = UnsafeMutableRawPointer(mutating: bytes!)
                    guard let admitted = guardian.admit(buffer, length: plainLength, source: source) else { continue }
                    plainLength = admitted
                }
                handle(UnsafeRawBufferPointer(start: bytes, count: plainLength), on: address, arrival)
            }
            if count < Self.batchSize { return }
        }
    }

    /// One datagram (counted and admitted by the loop): RTCP or RTP (RFC 5761 demux).
    private func handle(_ datagram: UnsafeRawBufferPointer, on address: ListenAddress, _ arrival: UInt64) {
        if RTPDemux.isRTCP(datagram) {
            handleRTCP(datagram, on: address, arrival: arrival)
            return
        }
        switch RTPPacket.parse(datagram) {
        case .packet(let packet):
            statistics.rtpCount.add(1, ordering: .relaxed)
            delegate.receiver(self, didReceive: packet, on: address, arrival: arrival)
        case .invalid(let reason):
            statistics.countInvalid(reason)
        }
    }

    private func handleRTCP(_ datagram: UnsafeRawBufferPointer, on address: ListenAddress, arrival: UInt64) {
        statistics.rtcpCount.add(1, ordering: .relaxed)
        var iterator = RTCPCompoundPacket(datagram).makeIterator()
        while let packet = iterator.next() {
            switch packet.packetType {
            case RTCPPacket.senderReport:
                if let report = RTCPSenderReport.parse(packet) {
                    delegate.receiver(self, didReceive: report, on: address, arrival: arrival)
                }
            case RTCPPacket.bye:
                if let bye = RTCPBye.parse(packet) {
                    for i in 0..<bye.ssrcCount {
                        if let ssrc = bye.ssrc(at: i) { delegate.receiver(self, didReceiveByeFor: ssrc, on: address) }
                    }
                }
            default:
                break
            }
        }
        if iterator.error != nil { statistics.rtcpInvalidCount.add(1, ordering: .relaxed) }
    }
}

/// The receive thread's preallocated memory: the `recvmmsg` batch (``RTPReceiver/batchSize``
/// buffers of ``RTPReceiver/maxDatagram`` bytes and their headers, set up once) and the arrays
/// `epoll_wait` reports into.
///
/// Thread: made on the control thread at init, then used by the receive thread alone.
private final class ReceiveBuffers: @unchecked Sendable {
    /// Events taken from one `epoll_wait` (more ready sockets are reported by the next one).
    static let events = 64
    let batch: OpaquePointer
    let tokens = UnsafeMutablePointer<UInt64>.allocate(capacity: events)
    let hangups = UnsafeMutablePointer<UInt8>.allocate(capacity: events)

    init() {
        guard let batch = roomtap_recv_batch_create(UInt32(RTPReceiver.batchSize), UInt32(RTPReceiver.maxDatagram))
        else { fatalError("RTPReceiver: out of memory for the receive buffers") }
        self.batch = batch
    }

    deinit {
        roomtap_recv_batch_destroy(batch)
        tokens.deallocate()
        hangups.deallocate()
    }
}
