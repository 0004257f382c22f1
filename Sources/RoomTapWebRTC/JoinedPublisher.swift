public import Foundation
public import RoomTapRTP
import RoomTapSync

/// One remote publisher of a joined room and the track it feeds: its name (sanitized, unique in
/// the room), the publisher's id at the server, the peer connection that brings its audio now (a
/// publisher who reconnects gets a new one, feeding the same track) and, once the room runs, its
/// ``JoinedStream``. Packets that arrive before the room has the track are dropped.
///
/// Thread: the connection's handlers on the ICE thread; the rest on the join's control thread;
/// the fields are locked.
public final class JoinedPublisher: Sendable {
    /// The track name.
    public let name: String
    private let state = Locked(State())

    private struct State {
        var publisherID = ""
        var stream: JoinedStream?
        var connection: PeerConnection?
        var setUpSeconds: [Double] = []
        var connections = 0
        var present = true
        /// The counts of connections already replaced or closed.
        var earlier = PeerConnection.Counters()
        /// RTP packets routed to it from a connection it shares with other publishers (Sora).
        var sharedPackets = 0
        var clientID: String?
        /// Wall-clock spans it was in the room (the last open while present).
        var spans: [PresenceSpan] = []
    }

    /// A span of wall-clock time a publisher was in the room.
    public struct PresenceSpan: Sendable, Equatable {
        public var joined: Date
        /// nil: still there.
        public var left: Date?
    }

    init(name: String, publisherID: String) {
        self.name = name
        state.withLock { $0.publisherID = publisherID }
    }

    /// The publisher's id at the server (Janus feed id, WHEP URL).
    public var publisherID: String { state.withLock { $0.publisherID } }
    /// Seconds each connection took from its request to DTLS up.
    public var setUpSeconds: [Double] { state.withLock { $0.setUpSeconds } }
    /// Connections made so far (more than one: it reconnected).
    public var connections: Int { state.withLock { $0.connections } }
    /// The connection now, if any.
    public var connection: PeerConnection? { state.withLock { $0.connection } }
    /// What every connection of the publisher carried, together.
    public var counts: PeerConnection.Counters {
        let (earlier, connection, shared) = state.withLock { ($0.earlier, $0.connection, $0.sharedPackets) }
        guard let now = connection?.counts else {
            var total = earlier
            total.rtpPackets += shared
            return total
        }
        var total = earlier + now
        total.rtpPackets += state.withLock { $0.sharedPackets }
        return total
    }
    /// The server's client id (Sora `client_id`), when it has one.
    public var clientID: String? { state.withLock { $0.clientID } }
    /// When it was in the room (wall clock); a gap between two spans is a gap in its track.
    public var presence: [PresenceSpan] { state.withLock { $0.spans } }
    /// Whether the publisher is in the room now.
    public var isPresent: Bool { state.withLock { $0.present } }
    /// The track's stream once the room runs.
    public var stream: JoinedStream? { state.withLock { $0.stream } }

    /// Gives the publisher its track (the room is running).
    func attach(_ stream: JoinedStream) { state.withLock { $0.stream = stream } }

    /// Feeds the track from `connection` (replacing and closing an earlier one).
    func use(_ connection: PeerConnection, publisherID: String, setUpSeconds: Double) {
        let earlier = state.withLock { s -> PeerConnection? in
            defer {
                if let old = s.connection, old !== connection { s.earlier = s.earlier + old.counts }
                s.connection = connection
                s.publisherID = publisherID
                s.setUpSeconds.append(setUpSeconds)
                s.connections += 1
                if !s.present || s.spans.isEmpty { s.spans.append(PresenceSpan(joined: Date(), left: nil)) }
                s.present = true
            }
            return s.connection
        }
        if let earlier, earlier !== connection { earlier.close() }
    }

    /// The publisher is (again) in the room, its audio arriving over a connection shared with
    /// other publishers (Sora: one `m=audio` of the recorder's connection per publisher), as
    /// `publisherID` (a new `connection_id` when it came back). Join thread.
    func present(publisherID: String, clientID: String?) {
        state.withLock { s in
            s.publisherID = publisherID
            if let clientID { s.clientID = clientID }
            s.connections += 1
            if !s.present || s.spans.isEmpty { s.spans.append(PresenceSpan(joined: Date(), left: nil)) }
            s.present = true
        }
    }

    /// One packet of the publisher from a shared connection. ICE thread; allocates nothing.
    func deliverShared(_ packet: RTPPacket, arrival: UInt64) {
        let stream = state.withLock { s -> JoinedStream? in
            s.sharedPackets += 1
            return s.stream
        }
        stream?.receive(packet, arrival: arrival)
    }

    /// Routes `connection`'s packets to the track (set before it connects).
    func route(_ connection: PeerConnection) {
        connection.onRTP = { [weak self] packet, arrival in self?.stream?.receive(packet, arrival: arrival) }
        connection.onSenderReport = { [weak self] report, _ in self?.stream?.noteSenderReport(report) }
    }

    /// The publisher left: its connection closes, its track goes silent. Idempotent.
    func left() {
        let connection = state.withLock { s -> PeerConnection? in
            defer {
                if let old = s.connection { s.earlier = s.earlier + old.counts }
                s.connection = nil
                if s.present, !s.spans.isEmpty, s.spans[s.spans.count - 1].left == nil {
                    s.spans[s.spans.count - 1].left = Date()
                }
                s.present = false
            }
            return s.connection
        }
        connection?.close()
        stream?.leave()
    }
}

/// Track names from what servers call publishers: letters, digits, `.`, `_`, `-` kept, anything
/// else `-`, at most 64 characters, never empty or a dot name; a name already taken gets `-2`,
/// `-3`, ...
package enum TrackNaming {
    package static func sanitize(_ display: String, fallback: String) -> String {
        var name = String(
            display.unicodeScalars.map { scalar -> Character in
                scalar.isASCII && (CharacterSetASCII.isNameCharacter(scalar)) ? Character(scalar) : "-"
            }
        ).prefix(64)
        while name.hasPrefix(".") { name = name.dropFirst() }
        let trimmed = String(name)
        return trimmed.isEmpty || trimmed.allSatisfy({ $0 == "-" }) ? fallback : trimmed
    }

    package static func unique(_ name: String, taken: Set<String>) -> String {
        guard taken.contains(name) else { return name }
        var n = 2
        while taken.contains("\(name)-\(n)") { n += 1 }
        return "\(name)-\(n)"
    }
}

private enum CharacterSetASCII {
    static func isNameCharacter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, 0x2E, 0x5F, 0x2D: true
        default: false
        }
    }
}
