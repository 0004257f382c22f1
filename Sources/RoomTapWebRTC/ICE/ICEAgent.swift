import CNice
import Foundation
import RoomTapRTP
import RoomTapSync

/// One ICE agent (RFC 8445, https://www.rfc-editor.org/rfc/rfc8445) through libnice: one stream
/// with one component, as BUNDLE and rtcp-mux need (RFC 8843, RFC 5761), RFC 5245 compatibility,
/// consent freshness (RFC 7675) on, host candidates plus server-reflexive ones from a STUN server
/// and relay candidates from every TURN server given (``ICEServer``; with `relayOnly`, relay
/// candidates only: libnice's `force-relay`). libnice does every check, keepalive and nomination;
/// this only wires it up.
///
/// Thread: `init`, ``gather(timeout:)``, ``setRemote(ufrag:password:candidates:)``,
/// ``addRemoteCandidate(_:)`` and ``close()`` on a control thread; ``send(_:)`` on any thread
/// (libnice locks its agent); the handlers run on the ``ICEContext``'s thread. ``close()`` is
/// idempotent; after it no handler runs.
final class ICEAgent: @unchecked Sendable {
    /// libnice's component states (NiceComponentState).
    enum State: UInt32, Sendable {
        case disconnected = 0
        case gathering, connecting, connected, ready, failed
    }

    /// Called on the ICE thread with each datagram that is not STUN (libnice answers those): its
    /// bytes (writable: SRTP decrypts in place; valid only during the call) and its arrival
    /// (CLOCK_MONOTONIC ns).
    typealias ReceiveHandler = (UnsafeMutableRawBufferPointer, UInt64) -> Void

    private let context: ICEContext
    private let agent: OpaquePointer
    private let streamID: UInt32
    private let gathered = DispatchSemaphore(value: 0)
    private let closed = Locked(false)
    private var signalHandlers: [UInt] = []
    /// Set before ``gather(timeout:)``; read on the ICE thread.
    nonisolated(unsafe) var onReceive: ReceiveHandler?
    /// Set before ``gather(timeout:)``; called on the ICE thread with each component state.
    nonisolated(unsafe) var onState: ((State) -> Void)?

    /// An agent on `context`, controlling or not (the offerer controls, RFC 8445 §6.1.1; libnice
    /// resolves a role conflict by itself).
    /// `hosts`: the only local addresses to gather host candidates on (numeric; empty: every
    /// interface libnice finds, loopback only when there is nothing else).
    /// `servers`: numeric hosts (``ICEServer/resolved()``); libnice takes one STUN server (the
    /// first) and every TURN server, each a relay of the one component.
    init(
        context: ICEContext, controlling: Bool, servers: [ICEServer] = [], relayOnly: Bool = false, hosts: [String] = []
    ) {
        self.context = context
        let options = NICE_AGENT_OPTION_CONSENT_FRESHNESS.rawValue | NICE_AGENT_OPTION_REGULAR_NOMINATION.rawValue
        let agent = nice_agent_new_full(
            context.context, NICE_COMPATIBILITY_RFC5245, NiceAgentOption(rawValue: options))!
        self.agent = agent
        roomtap_nice_set_bool(agent, "controlling-mode", controlling ? 1 : 0)
        roomtap_nice_set_bool(agent, "ice-tcp", 0)
        roomtap_nice_set_bool(agent, "upnp", 0)
        if let stun = servers.first(where: { $0.kind == .stun }) {
            roomtap_nice_set_string(agent, "stun-server", stun.host)
            roomtap_nice_set_uint(agent, "stun-server-port", UInt32(stun.port))
        }
        roomtap_nice_set_bool(agent, "force-relay", relayOnly ? 1 : 0)
        for host in hosts {
            var address = NiceAddress()
            nice_address_init(&address)
            if nice_address_set_from_string(&address, host) != 0 { nice_agent_add_local_address(agent, &address) }
        }
        streamID = nice_agent_add_stream(agent, 1)
        for turn in servers where turn.isTURN {
            let type: NiceRelayType =
                switch turn.kind {
                case .turnTCP: NICE_RELAY_TYPE_TURN_TCP
                case .turnTLS: NICE_RELAY_TYPE_TURN_TLS
                default: NICE_RELAY_TYPE_TURN_UDP
                }
            nice_agent_set_relay_info(
                agent, streamID, 1, turn.host, UInt32(turn.port), turn.username, turn.credential, type)
        }
    }

    private var ptr: OpaquePointer { agent }

    deinit { roomtap_nice_unref(ptr) }

    /// The local ICE credentials (ufrag, password) for the SDP.
    var localCredentials: (ufrag: String, password: String) {
        var ufrag: UnsafeMutablePointer<gchar>?
        var password: UnsafeMutablePointer<gchar>?
        nice_agent_get_local_credentials(ptr, streamID, &ufrag, &password)
        defer {
            g_free(ufrag)
            g_free(password)
        }
        return (ufrag.map { String(cString: $0) } ?? "", password.map { String(cString: $0) } ?? "")
    }

    /// Gathers the local candidates (waits at most `timeout` seconds for libnice to finish) and
    /// returns them as SDP attribute values (`candidate:...`, no `a=`). Throws when libnice cannot
    /// gather or finds no candidate at all.
    func gather(timeout: Double = 10) throws(WebRTCError) -> [String] {
        let me = Unmanaged.passUnretained(self).toOpaque()
        signalHandlers.append(
            roomtap_nice_on_gathering_done(
                ptr, { _, _, data in Unmanaged<ICEAgent>.fromOpaque(data!).takeUnretainedValue().gathered.signal() },
                me))
        signalHandlers.append(
            roomtap_nice_on_state(
                ptr,
                { _, _, _, state, data in
                    let agent = Unmanaged<ICEAgent>.fromOpaque(data!).takeUnretainedValue()
                    if let state = State(rawValue: state) { agent.onState?(state) }
                }, me))
        nice_agent_attach_recv(
            ptr, streamID, 1, context.context,
            { _, _, _, length, bytes, data in
                let agent = Unmanaged<ICEAgent>.fromOpaque(data!).takeUnretainedValue()
                guard let bytes, length > 0 else { return }
                agent.onReceive?(
                    UnsafeMutableRawBufferPointer(start: bytes, count: Int(length)), MonotonicClock.now.nanoseconds)
            }, me)
        guard nice_agent_gather_candidates(ptr, streamID) != 0 else {
            throw WebRTCError.ice("libnice could not gather local candidates (no usable network interface?)")
        }
        guard gathered.wait(timeout: .now() + timeout) == .success else {
            throw WebRTCError.ice("ICE candidate gathering did not finish within \(Int(timeout)) s")
        }
        let list = nice_agent_get_local_candidates(ptr, streamID, 1)
        defer { roomtap_nice_free_candidates(list) }
        var lines: [String] = []
        var node = list
        while let current = node {
            if let candidate = current.pointee.data?.assumingMemoryBound(to: NiceCandidate.self),
                let sdp = nice_agent_generate_local_candidate_sdp(ptr, candidate)
            {
                var line = String(cString: sdp)
                g_free(sdp)
                if line.hasPrefix("a=") { line.removeFirst(2) }
                lines.append(line)
            }
            node = current.pointee.next
        }
        guard !lines.isEmpty else { throw WebRTCError.ice("ICE found no local candidate (no network interface is up)") }
        return lines
    }

    /// The remote peer's credentials and candidates (SDP attribute values `candidate:...`). Unparsable
    /// candidates are skipped (a peer may offer kinds libnice does not take, e.g. TCP); throws when
    /// libnice refuses the credentials.
    func setRemote(ufrag: String, password: String, candidates: [String]) throws(WebRTCError) {
        guard nice_agent_set_remote_credentials(ptr, streamID, ufrag, password) != 0 else {
            throw WebRTCError.ice("libnice refused the remote ICE credentials")
        }
        for candidate in candidates { addRemoteCandidate(candidate) }
    }

    /// One trickled remote candidate (`candidate:...`); false when libnice cannot parse it.
    @discardableResult
    func addRemoteCandidate(_ candidate: String) -> Bool {
        guard let parsed = nice_agent_parse_remote_candidate_sdp(ptr, streamID, "a=" + candidate) else { return false }
        defer { nice_candidate_free(parsed) }
        let list = g_slist_append(nil, parsed)
        defer { g_slist_free(list) }
        return nice_agent_set_remote_candidates(ptr, streamID, 1, list) > 0
    }

    /// Sends one datagram on the selected pair; false before ICE connected or when libnice fails.
    @discardableResult
    func send(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress, !closed.withLock({ $0 }) else { return false }
        return nice_agent_send(ptr, streamID, 1, UInt32(bytes.count), base.assumingMemoryBound(to: gchar.self)) > 0
    }

    /// Detaches the handlers and removes the stream, on the ICE thread (so no callback is running
    /// or comes after this returns). Idempotent.
    func close() {
        guard
            closed.withLock({ (done: inout Bool) -> Bool in
                defer { done = true }
                return !done
            })
        else { return }
        guard !context.isStopped else { return }
        let finished = DispatchSemaphore(value: 0)
        let box = UnsafeSendable(self)
        context.run {
            let agent = box.value
            nice_agent_attach_recv(agent.ptr, agent.streamID, 1, agent.context.context, nil, nil)
            for handler in agent.signalHandlers { roomtap_nice_disconnect(agent.ptr, gulong(handler)) }
            nice_agent_remove_stream(agent.ptr, agent.streamID)
            agent.onReceive = nil
            agent.onState = nil
            finished.signal()
        }
        finished.wait()
    }
}

/// A value handed to another thread whose confinement the code states (here: the ICE thread).
struct UnsafeSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
