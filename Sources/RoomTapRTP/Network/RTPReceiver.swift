import Foundation
import Synchronization

/// What an ``RTPReceiver`` hands on. Called on the receive thread of the socket the datagram came
/// in on: keep it short (parse, route, copy into a jitter buffer); never decode or write files.
public protocol RTPReceiverDelegate: AnyObject, Sendable {
    /// A valid RTP packet (RFC 3550 §5.1). `arrival` is CLOCK_MONOTONIC in nanoseconds. The packet's
    /// bytes are valid only during the call.
    func receiver(_ receiver: RTPReceiver, didReceive packet: RTPPacket, on address: ListenAddress, arrival: UInt64)
    /// An RTCP sender report (RFC 3550 §6.4.1): maps a sender's RTP time to its wall clock.
    func receiver(
        _ receiver: RTPReceiver, didReceive report: RTCPSenderReport, on address: ListenAddress, arrival: UInt64)
    /// An RTCP BYE (RFC 3550 §6.6) for `ssrc`: that participant has left.
    func receiver(_ receiver: RTPReceiver, didReceiveByeFor ssrc: UInt32, on address: ListenAddress)
}

/// Receives RTP and RTCP (multiplexed on one port, RFC 5761 §4) on one or more UDP sockets, one
/// thread per socket, and hands parsed packets to its delegate. It only parses and routes: it
/// never decodes or writes ("the clock pulls, the network pushes").
///
/// Thread: `start` and `stop` from a control thread; the delegate is called on the receive threads;
/// the counters are atomics readable anywhere. One receive buffer per socket, allocated at start.
public final class RTPReceiver: Sendable {
    /// Largest datagram read (larger ones are truncated and then fail to parse).
    public static let maxDatagram = 2048

    /// Counters of everything received, by kind; drops by reason. Readable from any thread.
    public final class Statistics: Sendable {
        fileprivate let datagramCount = Atomic<Int>(0)
        fileprivate let rtpCount = Atomic<Int>(0)
        fileprivate let rtcpCount = Atomic<Int>(0)
        fileprivate let rtcpInvalidCount = Atomic<Int>(0)
        fileprivate let invalidCounts = Mutex<[Int]>(Array(repeating: 0, count: RTPParseError.allCases.count))

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

    /// The sockets listened on.
    public let sockets: [UDPSocket]
    /// Counters.
    public let statistics = Statistics()
    private let delegate: any RTPReceiverDelegate
    private let threadsDone = DispatchGroup()
    private let started = Atomic<Bool>(false)

    /// A receiver over bound sockets. Nothing is read before `start`.
    public init(sockets: [UDPSocket], delegate: any RTPReceiverDelegate) {
        self.sockets = sockets
        self.delegate = delegate
    }

    /// Starts one receive thread per socket. Idempotent.
    public func start() {
        guard !started.exchange(true, ordering: .acquiringAndReleasing) else { return }
        for socket in sockets {
            threadsDone.enter()
            let thread = Thread { [self] in
                receiveLoop(socket)
                threadsDone.leave()
            }
            thread.name = "roomtap.rx \(socket.address)"
            thread.start()
        }
    }

    /// Closes the sockets and waits for the receive threads to end. Idempotent.
    public func stop() {
        for socket in sockets { socket.close() }
        threadsDone.wait()
    }

    private func receiveLoop(_ socket: UDPSocket) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.maxDatagram, alignment: 8)
        defer { buffer.deallocate() }
        while let length = socket.receive(into: buffer, timeoutMilliseconds: 100) {
            guard length > 0 else { continue }
            statistics.datagramCount.add(1, ordering: .relaxed)
            let datagram = UnsafeRawBufferPointer(rebasing: buffer[0..<length])
            let arrival = monotonicNanoseconds()
            if RTPDemux.isRTCP(datagram) {
                handleRTCP(datagram, on: socket.address, arrival: arrival)
                continue
            }
            switch RTPPacket.parse(datagram) {
            case .packet(let packet):
                statistics.rtpCount.add(1, ordering: .relaxed)
                delegate.receiver(self, didReceive: packet, on: socket.address, arrival: arrival)
            case .invalid(let reason):
                statistics.countInvalid(reason)
            }
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

/// CLOCK_MONOTONIC, in nanoseconds.
public func monotonicNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}
