/// One speaker of a room as a description names it: where their RTP audio arrives, in which codec,
/// and what to call them.
///
/// Made by ``RoomDescription/parseSDP(_:source:)`` (one per `m=audio` section, or one per `a=ssrc` of
/// the section when it lists several) and by ``RoomDescription/parseJSON(_:source:)`` (one per entry
/// of `participants`). The receiver binds ``port`` (on ``address`` when given) and routes to this
/// participant the packets whose SSRC is ``ssrc`` (any SSRC no other participant of the port claims
/// when nil) and whose payload type is accepted by ``acceptsPayloadType(_:)``.
///
/// Thread: a value type, use anywhere.
public struct ParticipantDescription: Sendable, Equatable {
    /// The track name, or nil when the description gives none (the receiver then names the track
    /// `ssrc-<hex>` or `port-<n>`). From SDP, the first of: `a=label`, `a=ssrc:<n> label:`, the
    /// msid's stream id, `a=ssrc:<n> cname:`, `a=mid`; made unique within the room by a `-2`, `-3`…
    /// suffix. Not sanitised: whoever makes a file name of it must.
    public var name: String?
    /// The UDP port the RTP arrives on (1...65535).
    public var port: UInt16
    /// The address to listen on (an IPv4 or IPv6 literal, a multicast group, or a host name as the SDP
    /// wrote it), without any TTL suffix; nil = the receiver's default.
    public var address: String?
    /// The RTP SSRC (RFC 3550 §5.1) of this participant's stream; nil = whatever arrives on the port
    /// and is not claimed by another participant.
    public var ssrc: UInt32?
    /// The RTP payload types carrying this participant's audio in ``codec``, in order of preference
    /// (the `m=` line's order); empty = any dynamic payload type (96...127). A packet of another
    /// type is counted and dropped, never guessed at.
    public var payloadTypes: [UInt8]
    /// Channels to decode to: 1 or 2. For the PBX codecs the stream's own (L16 may be stereo). Opus in SDP is always `opus/48000/2` (RFC 7587 §7), so the
    /// count comes from the `sprop-stereo` fmtp parameter (else `stereo`), both defaulting to mono;
    /// see ``RoomDescription`` for the rule.
    public var channels: Int
    /// The `a=mid` of the media section (RFC 9143 / RFC 5888), if any.
    public var mid: String?
    /// The `a=label` of the media section (RFC 4574), or else the `a=ssrc:<n> label:` value, if any.
    public var label: String?
    /// The msid (RFC 8830): `"<stream id> <track id>"` from `a=ssrc:<n> msid:` or the section's `a=msid`.
    public var msid: String?
    /// The RTCP canonical name (RFC 3550 §6.5.1) from `a=ssrc:<n> cname:` (RFC 5576 §6.1), if any.
    public var cname: String?
    /// The `a=fmtp` parameters of the preferred Opus payload type, names lowercased (e.g.
    /// `["sprop-stereo": "1", "useinbandfec": "1"]`); empty when none.
    public var formatParameters: [String: String]
    /// The codec of ``payloadTypes``: from the SDP's `a=rtpmap` (or a static payload type), or the
    /// room file's `codec`; Opus when neither says.
    public var codec: AudioCodec
    /// The SRTP keying of this participant's stream (SDP `a=crypto`, RFC 4568; the room file's
    /// `srtp`); nil = plain RTP. Every participant of a port has one, or none does (the parsers
    /// check). Never printed: see ``SRTPKeying``.
    public var srtp: SRTPKeying?

    /// Creates a participant description.
    public init(
        name: String? = nil, port: UInt16, address: String? = nil, ssrc: UInt32? = nil,
        payloadTypes: [UInt8] = [], channels: Int = 1, mid: String? = nil, label: String? = nil,
        msid: String? = nil, cname: String? = nil, formatParameters: [String: String] = [:],
        codec: AudioCodec = .opus,
        srtp: SRTPKeying? = nil
    ) {
        self.codec = codec
        self.name = name
        self.port = port
        self.address = address
        self.ssrc = ssrc
        self.payloadTypes = payloadTypes
        self.channels = channels
        self.mid = mid
        self.label = label
        self.msid = msid
        self.cname = cname
        self.formatParameters = formatParameters
        self.srtp = srtp
    }

    /// The name of this participant's track: ``name``, else `port-<port>`.
    public var trackName: String { name ?? "port-\(port)" }

    /// The preferred payload type, or nil when any dynamic payload type is accepted.
    public var payloadType: UInt8? { payloadTypes.first }

    /// Whether a packet with this RTP payload type belongs to this participant's stream: one of
    /// ``payloadTypes``, or any dynamic type (96...127, RFC 3551 §6) when that list is empty.
    public func acceptsPayloadType(_ payloadType: UInt8) -> Bool {
        payloadTypes.isEmpty ? (96...127).contains(payloadType) : payloadTypes.contains(payloadType)
    }
}
