/// What roomtap reads of a WebRTC peer's SDP (RFC 8866, JSEP RFC 8829, BUNDLE RFC 8843, ICE
/// RFC 8839, DTLS-SRTP RFC 5763/8122): every media section with its ICE credentials, candidates,
/// fingerprint, setup role, direction, Opus payload type and SSRCs. Session-level ICE and
/// fingerprint attributes apply to sections without their own. Unknown lines are ignored; a text
/// that is not SDP, or an Opus section without ICE credentials or fingerprint, is refused with one
/// line saying what is missing.
///
/// Thread: a value type, use anywhere.
public struct WebRTCSessionDescription: Sendable, Equatable {
    /// One `m=` section.
    public struct Media: Sendable, Equatable {
        /// `audio`, `video`, `application`, ...
        public var kind: String
        /// The port (0: rejected or disabled).
        public var port: Int
        /// `UDP/TLS/RTP/SAVPF` and the like.
        public var proto: String
        /// The format list as written.
        public var formats: [String]
        /// `a=mid`.
        public var mid: String?
        /// `sendrecv`, `sendonly`, `recvonly`, `inactive` (default sendrecv, RFC 8866 §6.7).
        public var direction = "sendrecv"
        /// Opus's payload type from `a=rtpmap:<pt> opus/48000/2`, if offered.
        public var opusPayloadType: UInt8?
        /// `a=fmtp` of the Opus payload type.
        public var opusParameters: String?
        public var iceUfrag: String?
        public var icePassword: String?
        /// `sha-256 AB:CD:...`.
        public var fingerprint: String?
        /// `actpass`, `active`, `passive`.
        public var setup: String?
        /// `candidate:...` values, in order.
        public var candidates: [String] = []
        /// SSRCs of `a=ssrc` lines, in order, each once.
        public var ssrcs: [UInt32] = []
        /// `a=rtcp-mux`.
        public var rtcpMux = false
        /// The MediaStream id of `a=msid:<stream> <track>` (RFC 8830), else of the first
        /// `a=ssrc:<ssrc> msid:<stream> <track>` (Sora: the sender's `connection_id`).
        public var streamID: String?

        /// Whether the peer sends media in this section.
        public var peerSends: Bool { direction == "sendrecv" || direction == "sendonly" }
    }

    /// `a=ice-lite` at session level.
    public var iceLite = false
    /// `a=group:BUNDLE` mids.
    public var bundle: [String] = []
    /// The sections, in order.
    public var media: [Media] = []

    /// Most bytes and lines taken (a Janus offer with video is ~4 KiB).
    public static let maxLength = 64 * 1024
    static let maxLines = 2000
    package static let maxCandidates = 64

    /// Parses `text`. Throws ``WebRTCError/sdp(_:)`` when it is too long, is not SDP (no `v=0` first),
    /// or has no section.
    public static func parse(_ text: String) throws(WebRTCError) -> WebRTCSessionDescription {
        guard text.utf8.count <= maxLength else {
            throw .sdp("the peer's SDP is longer than \(maxLength / 1024) KiB")
        }
        var lines = text.split(omittingEmptySubsequences: true) { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }
        guard lines.count <= maxLines else { throw .sdp("the peer's SDP has more than \(maxLines) lines") }
        lines = lines.map { $0.trimmingBlanks() }.filter { !$0.isEmpty }
        guard lines.first == "v=0" else { throw .sdp("the peer's answer is not SDP (it does not start with v=0)") }
        var session = Media(kind: "", port: 0, proto: "", formats: [])
        var result = WebRTCSessionDescription()
        var current: Media?
        var rtpmaps: [String: String] = [:]
        var fmtps: [String: String] = [:]
        func close() {
            guard var section = current else { return }
            if let pt = rtpmaps.first(where: { $0.value.lowercased().hasPrefix("opus/48000") })?.key,
                section.formats.contains(pt), let value = UInt8(pt)
            {
                section.opusPayloadType = value
                section.opusParameters = fmtps[pt]
            }
            section.iceUfrag = section.iceUfrag ?? session.iceUfrag
            section.icePassword = section.icePassword ?? session.icePassword
            section.fingerprint = section.fingerprint ?? session.fingerprint
            section.setup = section.setup ?? session.setup
            result.media.append(section)
            current = nil
            rtpmaps = [:]
            fmtps = [:]
        }
        for line in lines {
            guard line.count >= 2, line.dropFirst().first == "=" else { continue }
            let type = line.first!
            let value = line.dropFirst(2)
            if type == "m" {
                close()
                let fields = value.split(separator: " ")
                guard fields.count >= 3, let port = Int(fields[1].split(separator: "/")[0]), (0...65535).contains(port)
                else { throw .sdp("the peer's SDP has a malformed m= line: \(value.prefix(80))") }
                current = Media(
                    kind: String(fields[0]), port: port, proto: String(fields[2]),
                    formats: fields.dropFirst(3).map(String.init))
                continue
            }
            guard type == "a" else { continue }
            let name = value.firstIndex(of: ":").map { value[..<$0] } ?? value
            let argument = value.firstIndex(of: ":").map { String(value[value.index(after: $0)...]) }
            if current == nil {
                switch name {
                case "ice-lite": result.iceLite = true
                case "group":
                    if let argument, argument.hasPrefix("BUNDLE") {
                        result.bundle = argument.split(separator: " ").dropFirst().map(String.init)
                    }
                default: apply(name, argument, to: &session)
                }
                continue
            }
            switch name {
            case "rtpmap", "fmtp":
                guard let argument, let space = argument.firstIndex(of: " ") else { break }
                let pt = String(argument[..<space])
                let rest = String(argument[argument.index(after: space)...])
                if name == "rtpmap" { rtpmaps[pt] = rest } else { fmtps[pt] = rest }
            default:
                apply(name, argument, to: &current!)
            }
        }
        close()
        guard !result.media.isEmpty else { throw .sdp("the peer's SDP has no media section") }
        return result
    }

    private static func apply(_ name: Substring, _ argument: String?, to section: inout Media) {
        switch name {
        case "mid": section.mid = argument
        case "sendrecv", "sendonly", "recvonly", "inactive": section.direction = String(name)
        case "ice-ufrag": section.iceUfrag = argument
        case "ice-pwd": section.icePassword = argument
        case "fingerprint": section.fingerprint = argument
        case "setup": section.setup = argument
        case "rtcp-mux": section.rtcpMux = true
        case "candidate":
            if let argument, section.candidates.count < maxCandidates {
                section.candidates.append("candidate:" + argument)
            }
        case "msid":
            if let argument, let stream = argument.split(separator: " ").first, stream.utf8.count <= 256 {
                section.streamID = String(stream)
            }
        case "ssrc":
            guard let argument else { break }
            if let ssrc = UInt32(argument.prefix { $0 != " " }), !section.ssrcs.contains(ssrc), section.ssrcs.count < 16
            {
                section.ssrcs.append(ssrc)
            }
            if section.streamID == nil, let range = argument.range(of: " msid:") {
                let stream = argument[range.upperBound...].prefix { $0 != " " }
                if !stream.isEmpty, stream.utf8.count <= 256 { section.streamID = String(stream) }
            }
        default: break
        }
    }

    /// The sections a multi-stream receiver takes (a Sora offer: one `m=audio` per publisher, all
    /// in one BUNDLE): every audio section with a port and Opus, each checked as
    /// ``audioSection(receiving:)`` checks its one (ICE credentials, fingerprint, DTLS-SRTP).
    /// Sections with port 0 (a sender that left), without Opus, or of other kinds are not taken.
    /// Empty when no section is (an offer before any publisher has only port-0 or no audio);
    /// throws for a taken section that cannot be received.
    public func receivableAudioSections() throws(WebRTCError) -> [(index: Int, media: Media)] {
        var taken: [(index: Int, media: Media)] = []
        for (index, section) in media.enumerated()
        where section.kind == "audio" && section.port != 0 && section.opusPayloadType != nil {
            guard section.iceUfrag != nil, section.icePassword != nil else {
                throw .sdp(
                    "the peer's SDP has no ICE credentials (a=ice-ufrag, a=ice-pwd) for mid \(section.mid ?? "?")")
            }
            guard let fingerprint = section.fingerprint, fingerprint.contains(" ") else {
                throw .sdp("the peer's SDP has no DTLS fingerprint (a=fingerprint) for mid \(section.mid ?? "?")")
            }
            guard section.proto.uppercased().contains("SAVP") else {
                throw .sdp("the peer's audio is not DTLS-SRTP (m=audio \(section.port) \(section.proto))")
            }
            taken.append((index, section))
        }
        return taken
    }

    /// The section roomtap takes: the first audio section with a port, Opus, and the peer sending
    /// (for `receiving`) or receiving. Throws a line naming what is missing.
    public func audioSection(receiving: Bool = true) throws(WebRTCError) -> (index: Int, media: Media) {
        let candidates = media.enumerated().filter { $0.element.kind == "audio" && $0.element.port != 0 }
        guard !candidates.isEmpty else { throw .sdp("the peer's SDP has no audio section") }
        guard let chosen = candidates.first(where: { $0.element.opusPayloadType != nil }) else {
            throw .sdp("the peer offers no Opus audio (roomtap takes opus/48000/2)")
        }
        let section = chosen.element
        guard section.iceUfrag != nil, section.icePassword != nil else {
            throw .sdp("the peer's SDP has no ICE credentials (a=ice-ufrag, a=ice-pwd)")
        }
        guard let fingerprint = section.fingerprint, fingerprint.contains(" ") else {
            throw .sdp("the peer's SDP has no DTLS fingerprint (a=fingerprint)")
        }
        guard section.proto.uppercased().contains("SAVP") else {
            throw .sdp("the peer's audio is not DTLS-SRTP (m=audio \(section.port) \(section.proto))")
        }
        return (chosen.offset, section)
    }
}

extension Substring {
    fileprivate func trimmingBlanks() -> Substring {
        var s = self
        while let last = s.last, last == " " || last == "\t" { s.removeLast() }
        return s
    }
}
