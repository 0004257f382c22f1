import RoomTapJSON

/// Reads the parts of an SDP session description (RFC 8866) that say where a room's RTP audio arrives
/// and in which codec (``AudioCodec``).
///
/// https://www.rfc-editor.org/rfc/rfc8866. What is read, by line type:
///
/// ```
/// c=IN IP4 <address>[/<ttl>[/<n>]]     §5.7   session level, or per media section (which wins)
/// c=IN IP6 <address>[/<n>]
/// m=audio <port>[/1] <proto> <fmt>...  §5.14  one section; port 0 = disabled, skipped;
///                                              proto RTP/AVP or RTP/AVPF (RFC 3551, RFC 4585)
/// a=rtpmap:<pt> opus/48000[/2]         §6.6   the codec of each payload type (RFC 7587 §7;
/// a=rtpmap:<pt> PCMU/8000 ...                  PCMU, PCMA, G722, L16 of RFC 3551; static types
///                                              0, 8, 9, 10, 11 need no rtpmap)
/// a=fmtp:<pt> <k>=<v>[;<k>=<v>]...     §6.15  sprop-stereo, stereo (channels), useinbandfec
/// a=ssrc:<id> cname:|label:|msid:<v>   RFC 5576 §4.1   one participant per id in a section
/// a=crypto:<tag> <suite> inline:<key>  RFC 4568 §9.1   the section's SRTP key (SDESCrypto); with
///                                              it proto may be RTP/SAVP or RTP/SAVPF (RFC 3711)
/// a=label:<v>  a=mid:<v>  a=msid:<v>   RFC 4574, RFC 9143, RFC 8830   names for the section
/// ```
///
/// Everything else (other types, other attributes, session-level attributes, non-audio sections) is
/// ignored, as §5 asks for unknown attributes. A line that is not `<letter>=<value>` is an error: the
/// text is then not SDP at all (a JSON file given as `--sdp`, say).
///
/// Thread: pure, thread-safe (a value with no shared state).
struct SDPParser {
    /// Where the text came from, for error messages.
    let source: String

    /// An `a=rtpmap` (RFC 8866 §6.6): `<encoding name>/<clock rate>[/<encoding parameters>]`.
    private struct RTPMap {
        var encoding: Substring
        var clockRate: UInt64
        var channels: UInt64?
        var written: Substring

        var codec: AudioCodec? {
            guard clockRate <= UInt64(Int32.max), channels ?? 0 <= 255 else { return nil }
            return AudioCodec.rtpmap(
                encoding: String(encoding), clockRate: Int(clockRate), channels: channels.map { Int($0) })
        }
    }

    /// What `a=ssrc:<id> <attribute>:<value>` lines said about one SSRC (RFC 5576 §6).
    private struct SSRCAttributes {
        var cname: String?
        var label: String?
        var msid: String?
    }

    /// One enabled `m=audio` section.
    private struct MediaSection {
        var line: Int
        var port: UInt16
        var formats: [UInt8]
        var connection: String?
        var rtpmaps: [UInt8: RTPMap] = [:]
        var fmtps: [UInt8: [String: String]] = [:]
        var label: String?
        var mid: String?
        var msid: String?
        var ssrcs: [UInt32] = []
        var ssrcAttributes: [UInt32: SSRCAttributes] = [:]
        /// The profile as written (`RTP/AVP`, `RTP/SAVP`, ...).
        var proto: Substring = "RTP/AVP"
        /// The `a=crypto` key, and the line it was on.
        var srtp: SRTPKeying?
        var cryptoLine: Int?
    }

    /// The most `a=fmtp` parameters kept per payload type (Opus defines eight, RFC 7587 §7).
    static let maximumFormatParameters = 32

    /// Names of the static audio payload types (RFC 3551 §6, table 4), for "offers only ..." messages.
    private static let staticAudioFormats: [UInt8: String] = [
        0: "PCMU/8000", 3: "GSM/8000", 4: "G723/8000", 5: "DVI4/8000", 6: "DVI4/16000", 7: "LPC/8000",
        8: "PCMA/8000", 9: "G722/8000", 10: "L16/44100/2", 11: "L16/44100", 12: "QCELP/8000", 13: "CN/8000",
        14: "MPA/90000", 15: "G728/8000", 16: "DVI4/11025", 17: "DVI4/22050", 18: "G729/8000",
    ]

    /// Parses `text`. See ``RoomDescription/parseSDP(_:source:)``.
    func parse(_ text: String) throws(RoomDescriptionError) -> RoomDescription {
        let size = text.utf8.count
        guard size <= RoomDescription.maximumBytes else {
            throw error(
                .tooLarge, nil,
                "is \(size) bytes, more than the \(RoomDescription.maximumBytes) bytes (1 MiB) roomtap reads; "
                    + "give the SDP of one room")
        }
        var sessionConnection: String?
        var sections: [MediaSection] = []
        var inAudioSection = false
        var mediaLines = 0
        var audioLines = 0
        var ssrcCount = 0

        try SDPLine.forEach(in: text) { (result) throws(RoomDescriptionError) in
            let line: SDPLine
            switch result {
            case .failure(let malformed):
                throw error(
                    .malformed, malformed.number,
                    "\(malformed.text.quotedForMessage) is not an SDP line (<type>=<value>); "
                        + "give an SDP file (RFC 8866)")
            case .success(let parsed):
                line = parsed
            }
            switch line.type {
            case "m":
                mediaLines += 1
                guard mediaLines <= RoomDescription.maximumMediaSections else {
                    throw error(
                        .tooLarge, line.number,
                        "more than \(RoomDescription.maximumMediaSections) m= lines; "
                            + "roomtap reads at most \(RoomDescription.maximumMediaSections) media sections")
                }
                inAudioSection = false
                guard line.value.sdpFields.first?.lowercased() == "audio" else { return }
                audioLines += 1
                if let section = try mediaSection(line) {
                    sections.append(section)
                    inAudioSection = true
                }
            case "c":
                // Before any m= line: the session's; in an enabled audio section: that section's (first
                // wins, §5.7 allows several for layered multicast). In other sections: not ours to check.
                if mediaLines == 0 {
                    if sessionConnection == nil { sessionConnection = try connectionAddress(line) }
                } else if inAudioSection, sections[sections.count - 1].connection == nil {
                    sections[sections.count - 1].connection = try connectionAddress(line)
                }
            case "a" where inAudioSection:
                try attribute(line, in: &sections[sections.count - 1], ssrcCount: &ssrcCount)
            case "a" where mediaLines == 0 && line.attribute.lowercased() == "crypto":
                throw error(
                    .unsupported, line.number,
                    "a=crypto at session level; SDES keys belong to a media section (RFC 4568 §9.1): "
                        + "put the a=crypto line under its m=audio line")
            default:
                break
            }
        }

        guard audioLines > 0 else {
            throw error(.noAudio, nil, "the SDP has no m=audio line; roomtap records audio")
        }
        guard !sections.isEmpty else {
            throw error(
                .noAudio, nil,
                "every m=audio line has port 0 (disabled); roomtap records audio from an m=audio line with a port")
        }
        var participants: [ParticipantDescription] = []
        var claimed: [PortAndSSRC: Int] = [:]
        for section in sections {
            if section.proto.uppercased().contains("SAVP"), section.srtp == nil {
                throw error(
                    .unsupported, section.line,
                    "m=audio on port \(section.port) uses \(section.proto) (SRTP) without an a=crypto line; "
                        + "give the sender's SDES key (a=crypto, RFC 4568) in the section")
            }
            // Opus when offered (a sender offering it with others, a WebRTC SFU, sends it), else the
            // first format roomtap decodes; the payload types of the same codec join it.
            let codecs = section.formats.map { codec(of: $0, in: section) }
            guard
                let preferredIndex = codecs.firstIndex(where: { $0?.isOpus == true })
                    ?? codecs.firstIndex(where: { $0 != nil }),
                let codec = codecs[preferredIndex]
            else {
                throw error(
                    .unsupported, section.line,
                    "m=audio on port \(section.port) offers only \(offered(section)); "
                        + "roomtap records Opus (a=rtpmap:<pt> opus/48000/2), PCMU, PCMA, G722 or L16")
            }
            let preferred = section.formats[preferredIndex]
            let chosen = section.formats.indices.filter { codecs[$0] == codec }.map { section.formats[$0] }
            let channels =
                codec.isOpus
                ? chosen.map { channelCount(section.fmtps[$0] ?? [:], rtpmap: section.rtpmaps[$0]) }.max() ?? 1
                : codec.channels
            let ssrcs: [UInt32?] = section.ssrcs.isEmpty ? [nil] : section.ssrcs.map { $0 }
            for ssrc in ssrcs {
                let key = PortAndSSRC(port: section.port, ssrc: ssrc)
                if let first = claimed[key] {
                    throw error(.duplicate, section.line, duplicateMessage(key, firstLine: first))
                }
                claimed[key] = section.line
                let attributes = ssrc.flatMap { section.ssrcAttributes[$0] } ?? SSRCAttributes()
                let msid = attributes.msid ?? section.msid
                let name =
                    section.label ?? attributes.label ?? msid.flatMap(Self.msidName) ?? attributes.cname
                    ?? section.mid
                participants.append(
                    ParticipantDescription(
                        name: name, port: section.port, address: section.connection ?? sessionConnection,
                        ssrc: ssrc, payloadTypes: chosen, channels: channels, mid: section.mid,
                        label: section.label ?? attributes.label, msid: msid, cname: attributes.cname,
                        formatParameters: section.fmtps[preferred] ?? [:], codec: codec, srtp: section.srtp))
            }
        }
        return RoomDescription(participants: Self.uniquelyNamed(participants))
    }

    // MARK: - Lines

    /// Parses an `m=audio` line (RFC 8866 §5.14): nil when its port is 0 (disabled).
    private func mediaSection(_ line: SDPLine) throws(RoomDescriptionError) -> MediaSection? {
        let fields = line.value.sdpFields
        let expected = "expected m=audio <port> RTP/AVP <payload types>"
        guard fields.count >= 4 else {
            throw error(
                .malformed, line.number, "malformed m= line \(("m=" + line.value).quotedForMessage); \(expected)")
        }
        let portParts = fields[1].split(separator: "/", omittingEmptySubsequences: false)
        guard let port = portParts[0].sdpDecimal(maximum: 65_535) else {
            throw error(
                .invalidValue, line.number,
                "m=audio port \(fields[1].quotedForMessage) is not a port (0-65535); "
                    + "give the UDP port the RTP arrives on")
        }
        if portParts.count > 1, portParts.count > 2 || portParts[1].sdpDecimal(maximum: 65_535) != 1 {
            throw error(
                .invalidValue, line.number,
                "m=audio port \(fields[1].quotedForMessage) is a range of ports; "
                    + "give one m=audio line per port")
        }
        if port == 0 { return nil }
        let proto = fields[2].uppercased()
        if proto.contains("TLS") || proto.contains("DTLS") {
            throw error(
                .unsupported, line.number,
                "m=audio on port \(port) uses \(fields[2].quotedForMessage) (DTLS-SRTP); roomtap takes SRTP "
                    + "keys from a=crypto (SDES, RFC 4568) or the room file: forward RTP/SAVP with a key")
        }
        guard ["RTP/AVP", "RTP/AVPF", "RTP/SAVP", "RTP/SAVPF"].contains(proto) else {
            throw error(
                .unsupported, line.number,
                "m=audio on port \(port) uses transport \(fields[2].quotedForMessage); "
                    + "roomtap receives RTP (RTP/AVP or RTP/AVPF, or RTP/SAVP with a=crypto)")
        }
        var formats: [UInt8] = []
        for format in fields[3...] {
            guard let payloadType = format.sdpDecimal(maximum: 127) else {
                throw error(
                    .malformed, line.number,
                    "malformed m= line: payload type \(format.quotedForMessage) is not a number 0-127; \(expected)")
            }
            if !formats.contains(UInt8(payloadType)) { formats.append(UInt8(payloadType)) }
        }
        return MediaSection(line: line.number, port: UInt16(port), formats: formats, proto: fields[2])
    }

    /// Parses a `c=` line (RFC 8866 §5.7) to the address, without a `/<ttl>` or `/<count>` suffix.
    private func connectionAddress(_ line: SDPLine) throws(RoomDescriptionError) -> String {
        let fields = line.value.sdpFields
        let malformed = error(
            .malformed, line.number,
            "malformed c= line \(("c=" + line.value).quotedForMessage); "
                + "expected c=IN IP4 <address> or c=IN IP6 <address>")
        guard fields.count == 3, fields[0].uppercased() == "IN" else { throw malformed }
        let parts = fields[2].split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= 3, parts.dropFirst().allSatisfy({ $0.sdpDecimal(maximum: 65_535) != nil }) else {
            throw malformed
        }
        let address = parts[0]
        let valid: Bool
        switch fields[1].uppercased() {
        case "IP4": valid = Self.isIPv4Literal(address) || Self.isHostName(address)
        case "IP6": valid = parts.count <= 2 && (Self.isIPv6Literal(address) || Self.isHostName(address))
        default: valid = false
        }
        guard valid else { throw malformed }
        return String(address)
    }

    /// Reads an `a=` line of an enabled audio section.
    private func attribute(
        _ line: SDPLine, in section: inout MediaSection, ssrcCount: inout Int
    ) throws(RoomDescriptionError) {
        let value = line.attributeValue ?? ""
        switch line.attribute.lowercased() {
        case "rtpmap":
            let fields = value.sdpFields
            let parts = fields.count == 2 ? fields[1].split(separator: "/", omittingEmptySubsequences: false) : []
            guard fields.count == 2, let payloadType = fields[0].sdpDecimal(maximum: 127),
                parts.count == 2 || parts.count == 3, !parts[0].isEmpty,
                let clockRate = parts[1].sdpDecimal(maximum: 10_000_000)
            else {
                throw error(
                    .malformed, line.number,
                    "malformed a=rtpmap line \(("a=" + line.value).quotedForMessage); "
                        + "expected a=rtpmap:<payload type> <encoding>/<clock rate>[/<channels>]")
            }
            var channels: UInt64?
            if parts.count == 3 {
                guard let count = parts[2].sdpDecimal(maximum: 255) else {
                    throw error(
                        .malformed, line.number,
                        "malformed a=rtpmap line \(("a=" + line.value).quotedForMessage): "
                            + "channels \(parts[2].quotedForMessage) is not a number")
                }
                channels = count
            }
            let key = UInt8(payloadType)
            if section.rtpmaps[key] == nil {
                section.rtpmaps[key] = RTPMap(
                    encoding: parts[0], clockRate: clockRate, channels: channels, written: fields[1])
            }
        case "fmtp":
            // a=fmtp:<format> <format specific parameters>; for Opus `key=value` pairs separated by `;`
            // (RFC 7587 §7). Pairs without `=` are skipped; the first of a repeated key wins; at most
            // `maximumFormatParameters` per payload type are kept, so hostile text stays linear.
            guard let space = value.firstIndex(where: { $0 == " " || $0 == "\t" }),
                let payloadType = value[..<space].sdpDecimal(maximum: 127)
            else { return }
            var parameters = section.fmtps.removeValue(forKey: UInt8(payloadType)) ?? [:]
            defer { section.fmtps[UInt8(payloadType)] = parameters }
            for pair in value[space...].split(separator: ";") {
                guard parameters.count < Self.maximumFormatParameters else { break }
                guard let equals = pair.firstIndex(of: "=") else { continue }
                let key = pair[..<equals].sdpTrimmed.lowercased()
                guard !key.isEmpty, parameters[key] == nil else { continue }
                parameters[key] = String(pair[pair.index(after: equals)...].sdpTrimmed)
            }
        case "crypto":
            if let first = section.cryptoLine {
                throw error(
                    .unsupported, line.number,
                    "m=audio on port \(section.port) has a second a=crypto line (the first is on line \(first)); "
                        + "roomtap takes the one key the sender uses: keep one a=crypto line per section")
            }
            do {
                section.srtp = try SDESCrypto.parse(value).keying
                section.cryptoLine = line.number
            } catch {
                throw self.error(error.unsupported ? .unsupported : .malformed, line.number, error.message)
            }
        case "label":
            if section.label == nil, !value.isEmpty { section.label = String(value) }
        case "mid":
            if section.mid == nil, !value.isEmpty { section.mid = String(value) }
        case "msid":
            if section.msid == nil, !value.isEmpty { section.msid = String(value) }
        case "ssrc":
            // a=ssrc:<ssrc-id> <attribute>[:<value>] (RFC 5576 §4.1); the value may hold spaces (msid).
            let idEnd = value.firstIndex(where: { $0 == " " || $0 == "\t" }) ?? value.endIndex
            guard let id = value[..<idEnd].sdpDecimal(maximum: UInt64(UInt32.max)) else {
                throw error(
                    .invalidValue, line.number,
                    "a=ssrc id \(value[..<idEnd].quotedForMessage) is not an SSRC (0-4294967295)")
            }
            let ssrc = UInt32(id)
            if section.ssrcAttributes[ssrc] == nil {
                ssrcCount += 1
                guard ssrcCount <= RoomDescription.maximumParticipants else {
                    throw error(
                        .tooLarge, line.number,
                        "more than \(RoomDescription.maximumParticipants) a=ssrc ids; "
                            + "roomtap describes at most \(RoomDescription.maximumParticipants) participants")
                }
                section.ssrcs.append(ssrc)
                section.ssrcAttributes[ssrc] = SSRCAttributes()
            }
            let rest = value[idEnd...].sdpTrimmed
            let colon = rest.firstIndex(of: ":") ?? rest.endIndex
            let attributeValue = colon < rest.endIndex ? String(rest[rest.index(after: colon)...]) : ""
            guard !attributeValue.isEmpty else { return }
            var attributes = section.ssrcAttributes[ssrc] ?? SSRCAttributes()
            switch rest[..<colon].lowercased() {
            case "cname": attributes.cname = attributes.cname ?? attributeValue
            case "label": attributes.label = attributes.label ?? attributeValue
            case "msid": attributes.msid = attributes.msid ?? attributeValue
            default: break
            }
            section.ssrcAttributes[ssrc] = attributes
        default:
            break
        }
    }

    // MARK: - Derived values

    /// Channels for one Opus format: `sprop-stereo`, else `stereo` (RFC 7587 §7.1, both default 0 =
    /// mono); a non-conforming `opus/48000/1` rtpmap also means mono.
    private func channelCount(_ parameters: [String: String], rtpmap: RTPMap?) -> Int {
        if rtpmap?.channels == 1 { return 1 }
        if let stereo = parameters["sprop-stereo"] ?? parameters["stereo"] { return stereo == "1" ? 2 : 1 }
        return 1
    }

    /// The name an msid gives (RFC 8830 §2): its stream id, or its track id when the stream id is `-`.
    private static func msidName(_ msid: String) -> String? {
        let parts = msid.split(separator: " ", omittingEmptySubsequences: true)
        if let stream = parts.first, stream != "-" { return String(stream) }
        return parts.count > 1 ? String(parts[1]) : nil
    }

    /// The codec of payload type `format`: its `a=rtpmap`'s, else the static type's (RFC 3551 §6);
    /// nil when roomtap does not decode it.
    private func codec(of format: UInt8, in section: MediaSection) -> AudioCodec? {
        if let rtpmap = section.rtpmaps[format] { return rtpmap.codec }
        return AudioCodec.staticPayloadType(format)
    }

    /// What a section offers that roomtap does not decode, e.g. `GSM/8000, G729/8000`.
    private func offered(_ section: MediaSection) -> String {
        let names = section.formats.map { format in
            if let rtpmap = section.rtpmaps[format] { return String(rtpmap.written) }
            return Self.staticAudioFormats[format] ?? "payload type \(format) (no a=rtpmap)"
        }
        return names.count > 6 ? names.prefix(6).joined(separator: ", ") + ", ..." : names.joined(separator: ", ")
    }

    private struct PortAndSSRC: Hashable {
        var port: UInt16
        var ssrc: UInt32?
    }

    private func duplicateMessage(_ key: PortAndSSRC, firstLine: Int) -> String {
        if let ssrc = key.ssrc {
            return "a=ssrc \(ssrc) on port \(key.port) is already a participant of the m=audio line \(firstLine); "
                + "list each SSRC of a port once"
        }
        return "m=audio on port \(key.port) repeats the port of the m=audio line \(firstLine) without a=ssrc "
            + "lines to tell the streams apart; give each m=audio line its own port or a=ssrc lines"
    }

    /// Makes names unique: the second `alice` becomes `alice-2`, the third `alice-3`.
    private static func uniquelyNamed(_ participants: [ParticipantDescription]) -> [ParticipantDescription] {
        var taken = Set<String>()
        return participants.map { participant in
            guard let name = participant.name else { return participant }
            var unique = name
            var suffix = 2
            while taken.contains(unique) {
                unique = "\(name)-\(suffix)"
                suffix += 1
            }
            taken.insert(unique)
            var renamed = participant
            renamed.name = unique
            return renamed
        }
    }

    // MARK: - Addresses

    /// A dotted-quad IPv4 address (four decimal parts 0...255).
    static func isIPv4Literal(_ text: Substring) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { $0.utf8.count <= 3 && $0.sdpDecimal(maximum: 255) != nil }
    }

    /// Looks like an IPv6 address (RFC 4291 §2.2): hex digits, `:` (at least two) and a dotted IPv4 tail.
    /// A syntax check, not a full validation; the receiver's bind says the last word.
    static func isIPv6Literal(_ text: Substring) -> Bool {
        let colons = text.utf8.filter { $0 == UInt8(ascii: ":") }.count
        return colons >= 2 && colons <= 7 && text.utf8.count <= 45
            && text.unicodeScalars.allSatisfy { $0.properties.isASCIIHexDigit || $0 == ":" || $0 == "." }
    }

    /// A DNS host name (RFC 1123 §2.1): letters, digits, `-` and `.`, not all digits and dots.
    static func isHostName(_ text: Substring) -> Bool {
        !text.isEmpty && text.utf8.count <= 253
            && text.unicodeScalars.allSatisfy {
                ("a"..."z").contains($0) || ("A"..."Z").contains($0)
                    || ("0"..."9").contains($0) || $0 == "-" || $0 == "."
            }
            && text.unicodeScalars.contains { ("a"..."z").contains($0) || ("A"..."Z").contains($0) }
    }

    private func error(_ reason: RoomDescriptionError.Reason, _ line: Int?, _ message: String) -> RoomDescriptionError {
        RoomDescriptionError(reason, source: source, line: line, message: message)
    }
}

extension Substring {
    /// Without leading and trailing spaces and tabs.
    var sdpTrimmed: Substring {
        var result = self
        while let first = result.first, first == " " || first == "\t" { result = result.dropFirst() }
        while let last = result.last, last == " " || last == "\t" { result = result.dropLast() }
        return result
    }
}
