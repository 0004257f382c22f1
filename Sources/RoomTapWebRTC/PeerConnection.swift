import CNice
import Foundation
public import RoomTapRTP
import RoomTapSync
import Synchronization

/// One WebRTC peer connection for audio: ICE (libnice) → DTLS-SRTP (OpenSSL, libsrtp2) → RTP
/// and RTCP, one Opus section, BUNDLE and rtcp-mux, so one ICE component carries everything. It
/// answers a peer's offer (a Janus subscriber) or makes the offer (WHEP), waits until the media
/// path is up, then hands every decrypted RTP packet, sender report and BYE to its handlers and
/// sends an RTCP receiver report per stream every second (the SFU sees a healthy subscriber).
///
/// Datagrams are demultiplexed by their first byte (RFC 7983 §7): 20–63 DTLS, 128–191 RTP/RTCP
/// (STUN never reaches us: libnice answers it). SRTP decrypts in place, in libnice's buffer; the
/// packet handed on is a view of it (no copy before the jitter buffer's own).
///
/// Thread: `init`, the SDP calls, ``waitUntilConnected(timeout:)`` and ``close()`` on a control
/// thread; the handlers run on the ``ICEContext``'s thread and must be set before the SDP calls.
/// ``close()`` is idempotent; no handler runs after it returns.
public final class PeerConnection: @unchecked Sendable {
    /// Where the connection is.
    public enum State: Sendable, Equatable {
        case new, connecting, connected
        case failed(WebRTCError)
        case closed
    }

    /// Each decrypted RTP packet (valid during the call) and its arrival (CLOCK_MONOTONIC ns).
    nonisolated(unsafe) public var onRTP: ((RTPPacket, UInt64) -> Void)?
    /// Each RTCP sender report.
    nonisolated(unsafe) public var onSenderReport: ((RTCPSenderReport, UInt64) -> Void)?
    /// An RTCP BYE, a DTLS close_notify, or ICE lost after the connection was up: the peer is gone.
    nonisolated(unsafe) public var onEnded: ((String) -> Void)?
    /// Set (before the SDP calls) on a connection that carries several senders' streams (Sora):
    /// an RTCP BYE then ends only the SSRCs it names, handed here, never the connection.
    nonisolated(unsafe) public var onStreamBye: ((UInt32) -> Void)?

    private let context: ICEContext
    private let certificate: DTLSCertificate
    private let servers: [ICEServer]
    private let relayOnly: Bool
    private let hosts: [String]
    private var agent: ICEAgent?
    // ICE-thread state:
    private var dtls: DTLSEndpoint?
    private var srtpIn: SRTPContext?
    private var srtpOut: SRTPSender?
    /// The media sender's own SRTP session (its thread is not the ICE thread); set once, when DTLS
    /// is up, before `state` says connected.
    nonisolated(unsafe) private var srtpMedia: SRTPSender?
    private var streams: [ReceptionStatistics] = []
    /// Most streams measured for receiver reports (an RR holds 31 blocks).
    private static let maxStreams = 31
    private var ticks = 0
    private var timer: UnsafeMutablePointer<GSource>?
    private let localSSRC = UInt32.random(in: 1...UInt32.max)
    // Anywhere:
    private let state = Locked<State>(.new)
    private let changed = DispatchSemaphore(value: 0)
    private let createdAt = MonotonicClock.now.nanoseconds
    private let connectedAt = Locked<UInt64?>(nil)
    /// The counters, bumped per packet on the ICE and sending threads without a lock.
    private let cells = CounterCells()
    private let isClosed = Atomic<Bool>(false)

    /// What crossed the connection.
    public struct Counters: Sendable {
        public var rtpPackets = 0
        public var rtcpPackets = 0
        public var dropped = 0
        public var reportsSent = 0
        /// RTP packets sent (a publishing connection).
        public var rtpSent = 0
        /// RTP packets not sent: the connection was not up, SRTP or ICE failed.
        public var rtpUnsent = 0

        /// Two connections' counts together.
        public static func + (a: Counters, b: Counters) -> Counters {
            Counters(
                rtpPackets: a.rtpPackets + b.rtpPackets, rtcpPackets: a.rtcpPackets + b.rtcpPackets,
                dropped: a.dropped + b.dropped, reportsSent: a.reportsSent + b.reportsSent,
                rtpSent: a.rtpSent + b.rtpSent,
                rtpUnsent: a.rtpUnsent + b.rtpUnsent)
        }
    }

    /// A connection on `context` presenting `certificate`, with the STUN/TURN `servers` (numeric
    /// hosts, ``ICEServer/resolved()``); `relayOnly`: relay candidates only (an
    /// `iceTransportPolicy` of `relay`). `hosts`: the local addresses ICE may use (empty: every
    /// interface).
    package init(
        context: ICEContext, certificate: DTLSCertificate, servers: [ICEServer] = [], relayOnly: Bool = false,
        hosts: [String] = []
    ) {
        self.hosts = hosts
        self.context = context
        self.certificate = certificate
        self.servers = servers
        self.relayOnly = relayOnly
    }

    deinit { close() }

    /// The state now.
    public var currentState: State { state.withLock { $0 } }
    /// Counters so far.
    public var counts: Counters {
        Counters(
            rtpPackets: cells.rtpPackets.load(ordering: .relaxed),
            rtcpPackets: cells.rtcpPackets.load(ordering: .relaxed),
            dropped: cells.dropped.load(ordering: .relaxed), reportsSent: cells.reportsSent.load(ordering: .relaxed),
            rtpSent: cells.rtpSent.load(ordering: .relaxed), rtpUnsent: cells.rtpUnsent.load(ordering: .relaxed))
    }
    /// Seconds from `init` until DTLS was up; nil before.
    public var setUpSeconds: Double? { connectedAt.withLock { $0 }.map { Double($0 - createdAt) / 1e9 } }

    // MARK: - SDP

    /// Answers `offer` (receiving its first Opus audio section, rejecting the rest): sets the
    /// peer's ICE credentials and candidates, gathers ours, and returns the answer. The DTLS role
    /// follows the offer's `a=setup` (actpass or passive: we are the client). `sending`: the
    /// section is answered `sendonly` with that SSRC (a Sora sendonly connection) instead of
    /// `recvonly`; `trickle`: the answer carries no candidates (they go by ``localCandidates``).
    public func answer(offer text: String, sending ssrc: UInt32? = nil, trickle: Bool = false) throws(WebRTCError)
        -> String
    {
        let offer = try WebRTCSessionDescription.parse(text)
        let (index, audio) = try offer.audioSection()
        let role: DTLSEndpoint.Role = audio.setup == "active" ? .server : .client
        let agent = try startAgent(controlling: offer.iceLite, remote: audio, role: role)
        let candidates = try agent.gather()
        gatheredCandidates = candidates
        try agent.setRemote(ufrag: audio.iceUfrag!, password: audio.icePassword!, candidates: audio.candidates)
        let credentials = agent.localCredentials
        var local = SDPWriter.Local(
            ufrag: credentials.ufrag, password: credentials.password, fingerprint: certificate.fingerprint,
            candidates: candidates, setup: role == .client ? "active" : "passive",
            direction: ssrc == nil ? "recvonly" : "sendonly", ssrc: ssrc)
        local.trickle = trickle
        return SDPWriter.answer(to: offer, audioIndex: index, local: local, sessionID: UInt64.random(in: 1...1 << 62))
    }

    // MARK: - Multi-stream offers (Sora)

    /// What a multi-stream answer took from the offer.
    public struct MultiStreamAnswer: Sendable {
        /// Our answer (no candidates in it: they go by ``localCandidates``, trickled).
        public var sdp: String
        /// The offer as parsed.
        public var offer: WebRTCSessionDescription
        /// The indices of the offer's sections we receive (audio, Opus, port not 0).
        public var taken: [Int]
    }

    /// Answers an offer or a re-offer that carries one `m=audio` per sender in one BUNDLE (Sora):
    /// every audio section with Opus and a port is received (recvonly), the rest rejected. The
    /// first offer starts ICE (the peer's credentials and candidates) and fixes the DTLS role; a
    /// re-offer keeps both (one with other ICE credentials, an ICE restart, is refused: make a new
    /// connection). The answer carries no candidates (see ``localCandidates``). Control thread.
    public func answerMultiStream(offer text: String) throws(WebRTCError) -> MultiStreamAnswer {
        let offer = try WebRTCSessionDescription.parse(text)
        let taken = try offer.receivableAudioSections()
        guard let transport = taken.first?.media else {
            throw .sdp("the peer's offer has no audio section with Opus to receive (and so no transport)")
        }
        let isFirst = remoteUfrag == nil
        if !isFirst {
            guard transport.iceUfrag == remoteUfrag else {
                throw .sdp("the peer's re-offer restarts ICE (new ice-ufrag); roomtap reconnects instead")
            }
        } else {
            let role: DTLSEndpoint.Role = transport.setup == "active" ? .server : .client
            let agent = try startAgent(controlling: offer.iceLite, remote: transport, role: role)
            gatheredCandidates = try agent.gather()
            try agent.setRemote(
                ufrag: transport.iceUfrag!, password: transport.icePassword!, candidates: transport.candidates)
            remoteUfrag = transport.iceUfrag
            answerSetup = role == .client ? "active" : "passive"
        }
        guard let agent else { throw .sdp("the connection has no ICE agent") }
        // The peer's candidates: those of the first offer went to ICE with its credentials; a
        // re-offer's new ones are added.
        for candidate in taken.flatMap(\.media.candidates) where !knownRemoteCandidates.contains(candidate) {
            knownRemoteCandidates.insert(candidate)
            if !isFirst { _ = agent.addRemoteCandidate(candidate) }
        }
        answerVersion += 1
        let credentials = agent.localCredentials
        var local = SDPWriter.Local(
            ufrag: credentials.ufrag, password: credentials.password, fingerprint: certificate.fingerprint,
            candidates: gatheredCandidates, setup: answerSetup, direction: "recvonly")
        local.trickle = true
        let sdp = SDPWriter.multiStreamAnswer(
            to: offer, taking: Set(taken.map(\.index)), local: local, sessionID: answerSessionID,
            version: answerVersion)
        return MultiStreamAnswer(sdp: sdp, offer: offer, taken: taken.map(\.index))
    }

    /// Our ICE candidates (`candidate:...`), gathered by ``answerMultiStream(offer:)`` or
    /// ``answer(offer:sending:trickle:)``, to trickle.
    public var localCandidates: [String] { gatheredCandidates }

    /// One entry of ``receptionSnapshot()``: an incoming stream as its RTCP receiver report sees it.
    public struct StreamReception: Sendable, Equatable {
        public var ssrc: UInt32
        public var packetsReceived: UInt32
        /// Expected minus received (RFC 3550 A.3).
        public var packetsLost: Int64
        /// Interarrival jitter, seconds.
        public var jitter: Double
    }

    /// Each incoming stream's counts now, read on the ICE thread (empty once it has stopped).
    /// Control thread; waits for the ICE thread.
    public func receptionSnapshot() -> [StreamReception] {
        context.sync { [unowned self] in
            self.streams.map {
                StreamReception(
                    ssrc: $0.ssrc, packetsReceived: $0.received, packetsLost: $0.cumulativeLost,
                    jitter: Double($0.jitter) / 48_000)
            }
        } ?? []
    }

    /// Makes an offer to receive (WHEP) or send (a publisher) one Opus stream; ``accept(answer:)``
    /// takes the reply.
    /// `sending`: the SSRC we send with (announced in `a=ssrc`, as Janus requires), or nil to receive.
    public func makeOffer(sending ssrc: UInt32? = nil) throws(WebRTCError) -> String {
        let agent = ICEAgent(context: context, controlling: true, servers: servers, relayOnly: relayOnly, hosts: hosts)
        self.agent = agent
        wire(agent)
        let candidates = try agent.gather()
        let credentials = agent.localCredentials
        let local = SDPWriter.Local(
            ufrag: credentials.ufrag, password: credentials.password, fingerprint: certificate.fingerprint,
            candidates: candidates, setup: "actpass", direction: ssrc == nil ? "recvonly" : "sendonly", ssrc: ssrc)
        return SDPWriter.offer(local: local, sessionID: UInt64.random(in: 1...1 << 62))
    }

    /// The answer to ``makeOffer()``: the peer's ICE and DTLS parameters (`a=setup:active` makes
    /// us the DTLS server, `passive` the client).
    public func accept(answer text: String) throws(WebRTCError) {
        guard let agent else { throw .sdp("no offer was made") }
        let answer = try WebRTCSessionDescription.parse(text)
        let (_, audio) = try answer.audioSection()
        guard audio.setup == "active" || audio.setup == "passive" else {
            throw .sdp("the peer's answer has a=setup:\(audio.setup ?? "(none)"); an answer must say active or passive")
        }
        try makeDTLS(role: audio.setup == "active" ? .server : .client, fingerprint: audio.fingerprint!)
        try agent.setRemote(ufrag: audio.iceUfrag!, password: audio.icePassword!, candidates: audio.candidates)
    }

    /// One trickled candidate of the peer (`candidate:...`).
    public func addRemoteCandidate(_ candidate: String) { agent?.addRemoteCandidate(candidate) }

    /// Waits until DTLS is up (or failed, or `timeout` seconds passed: then ICE or DTLS is named as
    /// the part that did not finish). Throws the failure.
    public func waitUntilConnected(timeout: Double) throws(WebRTCError) {
        let deadline = MonotonicClock.now + .seconds(timeout)
        while true {
            switch currentState {
            case .connected: return
            case .failed(let error): throw error
            case .closed: throw .ice("the connection was closed before it was up")
            case .new, .connecting: break
            }
            if changed.wait(timeout: deadline.dispatchTime) == .timedOut {
                let iceUp = context.sync { self.dtls?.isConnected == false && self.iceConnected } ?? false
                throw iceUp
                    ? .dtls("the DTLS handshake did not finish within \(Int(timeout)) s")
                    : .ice(
                        "ICE found no working candidate pair within \(Int(timeout)) s (is the server's media address reachable?)"
                    )
            }
        }
    }

    /// Sends close_notify, stops the timers, closes ICE. Idempotent.
    public func close() {
        guard !isClosed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        state.withLock { current in
            if case .failed = current {} else { current = .closed }
        }
        if agent != nil {
            // Nothing here captures self: close also runs from deinit.
            let parts = UnsafeSendable((dtls, timer))
            timer = nil
            context.sync {
                let (dtls, timer) = parts.value
                dtls?.shutdown()
                if let timer {
                    g_source_destroy(timer)
                    g_source_unref(timer)
                }
            }
        }
        agent?.close()
        changed.signal()
    }

    // MARK: - Sending

    /// Protects the RTP packet of `length` bytes at the start of `buffer` (which has room for
    /// ``SRTPSender/overhead`` more bytes) in place and sends it. False before the connection is up
    /// or when it failed. Thread: one media-sending thread (not the ICE thread); allocates nothing.
    public func sendRTP(_ buffer: UnsafeMutableRawBufferPointer, length: Int) -> Bool {
        guard case .connected = currentState, let srtpMedia, let agent, let base = buffer.baseAddress,
            length + SRTPSender.overhead <= buffer.count,
            let protected = srtpMedia.protectRTP(base, length: length),
            agent.send(UnsafeRawBufferPointer(start: base, count: protected))
        else {
            cells.rtpUnsent.add(1, ordering: .relaxed)
            return false
        }
        cells.rtpSent.add(1, ordering: .relaxed)
        return true
    }

    // MARK: - Set-up

    private var iceConnected = false
    // Multi-stream negotiation (control thread):
    private var remoteUfrag: String?
    private var gatheredCandidates: [String] = []
    private var knownRemoteCandidates: Set<String> = []
    private var answerSetup = "active"
    private var answerVersion: UInt64 = 1
    private let answerSessionID = UInt64.random(in: 1...1 << 62)

    private func startAgent(
        controlling: Bool, remote: WebRTCSessionDescription.Media, role: DTLSEndpoint.Role
    ) throws(WebRTCError) -> ICEAgent {
        let agent = ICEAgent(
            context: context, controlling: controlling, servers: servers, relayOnly: relayOnly, hosts: hosts)
        self.agent = agent
        try makeDTLS(role: role, fingerprint: remote.fingerprint!)
        wire(agent)
        return agent
    }

    private func makeDTLS(role: DTLSEndpoint.Role, fingerprint: String) throws(WebRTCError) {
        dtls = try DTLSEndpoint(certificate: certificate, role: role, remoteFingerprint: fingerprint) {
            [unowned self] datagram in
            self.agent?.send(datagram)
        }
    }

    private func wire(_ agent: ICEAgent) {
        state.withLock { $0 = .connecting }
        agent.onState = { [unowned self] state in self.iceStateChanged(state) }
        agent.onReceive = { [unowned self] datagram, arrival in self.receive(datagram, arrival: arrival) }
        let me = Unmanaged.passUnretained(self).toOpaque()
        context.sync {
            self.timer =
                (roomtap_g_timer(
                    self.context.context, 100,
                    { data in
                        Unmanaged<PeerConnection>.fromOpaque(data!).takeUnretainedValue().tick()
                        return 1
                    }, me))
        }
    }

    // MARK: - The ICE thread

    private func iceStateChanged(_ iceState: ICEAgent.State) {
        switch iceState {
        case .connected, .ready:
            guard !iceConnected else { return }
            iceConnected = true
            if let event = dtls?.start() { handle(event) }
        case .failed:
            if case .connected = currentState {
                end("ICE lost the connection (consent expired)")
            } else {
                fail(.ice("ICE failed: no candidate pair between roomtap and the server worked"))
            }
        default:
            break
        }
    }

    private func receive(_ datagram: UnsafeMutableRawBufferPointer, arrival: UInt64) {
        let first = datagram[0]
        if (20...63).contains(first) {
            if let event = dtls?.receive(UnsafeRawBufferPointer(datagram)) { handle(event) }
            return
        }
        guard (128...191).contains(first), let srtpIn, let base = datagram.baseAddress else {
            cells.dropped.add(1, ordering: .relaxed)
            return
        }
        if RTPDemux.isRTCP(UnsafeRawBufferPointer(datagram)) {
            guard let length = srtpIn.unprotectRTCP(base, length: datagram.count) else {
                cells.dropped.add(1, ordering: .relaxed)
                return
            }
            cells.rtcpPackets.add(1, ordering: .relaxed)
            handleRTCP(UnsafeRawBufferPointer(start: base, count: length), arrival: arrival)
            return
        }
        guard let length = srtpIn.unprotectRTP(base, length: datagram.count),
            case .packet(let packet) = RTPPacket.parse(UnsafeRawBufferPointer(start: base, count: length))
        else {
            cells.dropped.add(1, ordering: .relaxed)
            return
        }
        cells.rtpPackets.add(1, ordering: .relaxed)
        if let index = streams.firstIndex(where: { $0.ssrc == packet.ssrc }) {
            streams[index].note(sequence: packet.sequenceNumber, timestamp: packet.timestamp, arrival: arrival)
        } else if streams.count < Self.maxStreams {
            streams.append(ReceptionStatistics(ssrc: packet.ssrc))
            streams[streams.count - 1].note(
                sequence: packet.sequenceNumber, timestamp: packet.timestamp, arrival: arrival)
        }
        onRTP?(packet, arrival)
    }

    private func handleRTCP(_ datagram: UnsafeRawBufferPointer, arrival: UInt64) {
        var iterator = RTCPCompoundPacket(datagram).makeIterator()
        while let packet = iterator.next() {
            switch packet.packetType {
            case RTCPPacket.senderReport:
                guard let report = RTCPSenderReport.parse(packet) else { continue }
                if let index = streams.firstIndex(where: { $0.ssrc == report.ssrc }) {
                    streams[index].note(senderReport: report, arrival: arrival)
                }
                onSenderReport?(report, arrival)
            case RTCPPacket.bye:
                if let onStreamBye {
                    guard let bye = RTCPBye.parse(packet) else { continue }
                    for index in 0..<bye.ssrcCount { if let ssrc = bye.ssrc(at: index) { onStreamBye(ssrc) } }
                } else {
                    end("the peer sent RTCP BYE")
                }
            default:
                break
            }
        }
    }

    private func handle(_ event: DTLSEndpoint.Event) {
        switch event {
        case .connected(let keys):
            do {
                srtpIn = try SRTPContext(streams: [.init(ssrc: nil, keying: keys.remote)])
                srtpOut = try SRTPSender(keying: keys.local)
                srtpMedia = try SRTPSender(keying: keys.local)
            } catch {
                fail(.dtls("libsrtp2 refused the keys DTLS negotiated (\(keys.suite.name))"))
                return
            }
            connectedAt.withLock { $0 = MonotonicClock.now.nanoseconds }
            state.withLock { $0 = .connected }
            changed.signal()
        case .failed(let message):
            fail(.dtls(message))
        case .closed:
            end("the peer closed DTLS")
        }
    }

    private func tick() {
        if let event = dtls?.handleTimeout() { handle(event) }
        ticks += 1
        if ticks % 10 == 0 { sendReceiverReport() }
    }

    /// RTCP RR (RFC 3550 §6.4.2) with a block per stream, and SDES CNAME (§6.5, a compound packet
    /// must carry one), protected as SRTCP.
    private func sendReceiverReport() {
        guard let srtpOut, !streams.isEmpty, let agent else { return }
        var packet: [UInt8] = []
        packet.reserveCapacity(512)
        let now = MonotonicClock.now.nanoseconds
        let count = min(streams.count, 31)
        packet += [0x80 | UInt8(count), RTCPPacket.receiverReport, 0, UInt8(1 + 6 * count)]
        append(localSSRC, to: &packet)
        for index in 0..<count { streams[index].writeReportBlock(to: &packet, now: now) }
        let cname = Array("roomtap".utf8)
        var chunk: [UInt8] = []
        append(localSSRC, to: &chunk)
        chunk += [1, UInt8(cname.count)] + cname + [0]
        while chunk.count % 4 != 0 { chunk.append(0) }
        packet += [0x81, RTCPPacket.sourceDescription, 0, UInt8(chunk.count / 4)]
        packet += chunk
        let length = packet.count
        packet += [UInt8](repeating: 0, count: SRTPSender.overhead)
        packet.withUnsafeMutableBytes { buffer in
            guard let protected = srtpOut.protectRTCP(buffer.baseAddress!, length: length) else { return }
            if agent.send(UnsafeRawBufferPointer(rebasing: buffer[..<protected])) {
                cells.reportsSent.add(1, ordering: .relaxed)
            }
        }
    }

    private func fail(_ error: WebRTCError) {
        let first = state.withLock { (current: inout State) -> Bool in
            switch current {
            case .failed, .closed: return false
            default:
                current = .failed(error)
                return true
            }
        }
        if first { changed.signal() }
    }

    private func end(_ reason: String) {
        let wasConnected = state.withLock { (current: inout State) -> Bool in
            guard case .connected = current else { return false }
            current = .failed(.ice(reason))
            return true
        }
        if wasConnected { onEnded?(reason) } else { fail(.ice(reason)) }
    }
}

/// ``PeerConnection/Counters`` as atomics.
private final class CounterCells: Sendable {
    let rtpPackets = Atomic<Int>(0)
    let rtcpPackets = Atomic<Int>(0)
    let dropped = Atomic<Int>(0)
    let reportsSent = Atomic<Int>(0)
    let rtpSent = Atomic<Int>(0)
    let rtpUnsent = Atomic<Int>(0)
}

extension ICEContext {
    /// Runs `block` on the loop's thread and waits for it; its result (nil, not run, once the loop
    /// has stopped). Not from the loop's thread.
    @discardableResult
    func sync<T: Sendable>(_ block: @escaping () -> T) -> T? {
        guard !isStopped else { return nil }
        let result = Locked<T?>(nil)
        let done = DispatchSemaphore(value: 0)
        let box = UnsafeSendable(block)
        run {
            let value = box.value()
            result.withLock { $0 = value }
            done.signal()
        }
        done.wait()
        return result.withLock { $0 }
    }
}

extension PeerConnection: RTPPacketTransport {
    /// ``sendRTP(_:length:)``: an ``RTPOpusSender`` through this connection.
    public func send(_ buffer: UnsafeMutableRawBufferPointer, length: Int) -> Bool { sendRTP(buffer, length: length) }
}
