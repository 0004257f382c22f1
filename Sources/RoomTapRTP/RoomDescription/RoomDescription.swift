public import Foundation

/// What a live room is made of: the participants whose Opus RTP roomtap receives, and the ports to bind.
///
/// Read from an SDP file (``parseSDP(_:source:)``, RFC 8866, e.g. what `ffmpeg -f rtp -sdp_file`
/// writes) or a JSON room file (``parseJSON(_:source:)``, schema in `docs/ROOM-FILE.md`). A room need
/// not be described at all: the receiver turns an unknown SSRC into a track of its own.
///
/// Channels. Opus is always `opus/48000/2` in SDP whatever the audio is (RFC 7587 §7,
/// https://www.rfc-editor.org/rfc/rfc7587#section-7), so the rtpmap channel count says nothing. A
/// participant is decoded to 2 channels when its Opus format says `sprop-stereo=1` (the sender is
/// likely to send stereo), or says `stereo=1` and no `sprop-stereo`; otherwise to 1 (both parameters
/// default to 0, mono, RFC 7587 §7.1). With several Opus payload types the largest count wins. A
/// stereo packet decoded to mono is downmixed by libopus, not lost.
///
/// Thread: a value type, use anywhere; parsing is pure and thread-safe.
public struct RoomDescription: Sendable, Equatable {
    /// The participants, in the order the description lists them; unique names, unique (port, SSRC).
    public var participants: [ParticipantDescription]
    /// Who may send (the room file's `allow`): datagrams from elsewhere are dropped and counted
    /// before parsing. Empty = the description says nothing (anyone, unless `--allow` says).
    public var allow: [SourcePrefix]
    /// Track names by Sora connection id (the room file's `sora`; `--sora-audio-streaming`).
    public var soraNames: [String: String]

    /// Creates a description of these participants (not validated; the parsers validate).
    public init(participants: [ParticipantDescription], allow: [SourcePrefix] = []) {
        self.init(participants: participants, allow: allow, soraNames: [:])
    }

    /// Creates a description with Sora connections named too (not validated).
    public init(participants: [ParticipantDescription], allow: [SourcePrefix], soraNames: [String: String]) {
        self.participants = participants
        self.allow = allow
        self.soraNames = soraNames
    }

    /// The distinct ports to bind, in the order participants first use them.
    public var ports: [UInt16] {
        var seen = Set<UInt16>()
        return participants.compactMap { seen.insert($0.port).inserted ? $0.port : nil }
    }

    /// The largest SDP text or JSON room file read: 1 MiB. Larger input is refused, not truncated.
    public static let maximumBytes = 1 << 20
    /// The most `m=` lines (of any media) an SDP may have: 256.
    public static let maximumMediaSections = 256
    /// The most participants a description may name: 1024 (the receiver bounds live tracks further).
    public static let maximumParticipants = 1024

    /// Reads an SDP session description (RFC 8866, https://www.rfc-editor.org/rfc/rfc8866).
    ///
    /// Every `m=audio` section with a non-zero port (RFC 8866 §5.14) and profile `RTP/AVP` or
    /// `RTP/AVPF` becomes one participant, or one per `a=ssrc` id (RFC 5576) it lists; the Opus
    /// payload types are those whose `a=rtpmap` encoding is `opus/48000` (any case, §6.6); the
    /// address is the section's `c=` or else the session's (§5.7), TTL suffix dropped. Lines may end
    /// in CRLF or LF; unknown types and attributes are ignored (§5); other sections (video,
    /// application) are ignored.
    ///
    /// - Parameters:
    ///   - text: the SDP, at most ``maximumBytes`` of UTF-8.
    ///   - source: where it came from (a file path), for error messages.
    /// - Throws: ``RoomDescriptionError`` when the text is too large or not SDP, has no usable
    ///   `m=audio` section, a section offers no Opus or uses SRTP or a non-RTP transport, or two
    ///   participants share a port and SSRC.
    public static func parseSDP(_ text: String, source: String) throws(RoomDescriptionError) -> RoomDescription {
        try SDPParser(source: source).parse(text).checkedSRTPPorts(source: source)
    }

    /// Reads a JSON room file (RFC 8259); schema in `docs/ROOM-FILE.md`.
    ///
    /// Strict: unknown keys, repeated keys, values of the wrong type or out of range, repeated names
    /// and repeated (port, SSRC) pairs are errors naming the JSON path, e.g.
    /// `room.json:9: participants[1].port: 70000 is not a port (1-65535)`.
    ///
    /// - Parameters:
    ///   - data: the file's bytes, at most ``maximumBytes`` of UTF-8.
    ///   - source: where it came from (a file path), for error messages.
    /// - Throws: ``RoomDescriptionError``.
    public static func parseJSON(_ data: Data, source: String) throws(RoomDescriptionError) -> RoomDescription {
        try RoomFileParser(source: source).parse(data).checkedSRTPPorts(source: source)
    }
}
