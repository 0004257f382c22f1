/// The SDP roomtap sends: an answer to a peer's offer (Janus's subscriber offer) or an offer of its
/// own (WHEP), for one Opus audio section with BUNDLE and rtcp-mux; every other section of an offer
/// rejected (port 0, RFC 8829 §5.3.1). Candidates are complete (gathered before the SDP is made),
/// so the SDP ends with `a=end-of-candidates` and no trickle is needed.
///
/// Thread: pure functions.
package enum SDPWriter {
    /// What the local side puts in its SDP.
    package struct Local {
        package var ufrag: String
        package var password: String
        package var fingerprint: String
        package var candidates: [String]
        /// `active`, `passive` or `actpass`.
        package var setup: String
        /// `recvonly` or `sendonly`.
        package var direction: String
        /// Our SSRC when we send.
        package var ssrc: UInt32?
        package var cname = "roomtap"
        /// Candidates go separately (trickle ICE, Sora's `candidate` messages): the SDP carries none
        /// and no `a=end-of-candidates`.
        package var trickle = false

        package init(
            ufrag: String, password: String, fingerprint: String, candidates: [String], setup: String,
            direction: String, ssrc: UInt32? = nil
        ) {
            self.ufrag = ufrag
            self.password = password
            self.fingerprint = fingerprint
            self.candidates = candidates
            self.setup = setup
            self.direction = direction
            self.ssrc = ssrc
        }
    }

    /// The answer to `offer`, taking its section `audioIndex` (with Opus) and rejecting the others.
    package static func answer(to offer: WebRTCSessionDescription, audioIndex: Int, local: Local, sessionID: UInt64)
        -> String
    {
        let audio = offer.media[audioIndex]
        let mid = audio.mid ?? "0"
        var lines = header(sessionID: sessionID)
        if audio.mid != nil { lines.append("a=group:BUNDLE \(mid)") }
        lines.append("a=msid-semantic: WMS")
        for (index, section) in offer.media.enumerated() {
            if index == audioIndex {
                lines += audioSection(
                    payloadType: audio.opusPayloadType ?? 111, parameters: audio.opusParameters,
                    mid: mid, local: local)
            } else {
                lines.append("m=\(section.kind) 0 \(section.proto) \(section.formats.joined(separator: " "))")
                lines.append("c=IN IP4 0.0.0.0")
                if let mid = section.mid { lines.append("a=mid:\(mid)") }
                lines.append("a=inactive")
            }
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    /// The answer to a multi-stream offer (Sora: an `m=audio` per publisher in one BUNDLE): every
    /// section in `taken` (audio, Opus) answered `recvonly` (or `inactive` where the peer does not
    /// send), all in our BUNDLE group; every other section rejected with port 0. `version` is the
    /// `o=` line's session version, raised with each re-answer (RFC 3264 §8).
    package static func multiStreamAnswer(
        to offer: WebRTCSessionDescription, taking taken: Set<Int>, local: Local, sessionID: UInt64, version: UInt64
    ) -> String {
        var lines = header(sessionID: sessionID, version: version)
        let mids = offer.media.indices.filter { taken.contains($0) }.map { offer.media[$0].mid ?? String($0) }
        if !mids.isEmpty { lines.append("a=group:BUNDLE " + mids.joined(separator: " ")) }
        lines.append("a=msid-semantic: WMS")
        for (index, section) in offer.media.enumerated() {
            if taken.contains(index) {
                var sectionLocal = local
                sectionLocal.direction = section.peerSends ? "recvonly" : "inactive"
                lines += audioSection(
                    payloadType: section.opusPayloadType ?? 111, parameters: section.opusParameters,
                    mid: section.mid ?? String(index), local: sectionLocal)
            } else {
                lines.append("m=\(section.kind) 0 \(section.proto) \(section.formats.joined(separator: " "))")
                lines.append("c=IN IP4 0.0.0.0")
                if let mid = section.mid { lines.append("a=mid:\(mid)") }
                lines.append("a=inactive")
            }
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    /// An offer of one Opus section (payload type 111, mid `0`), setup `actpass`.
    package static func offer(local: Local, sessionID: UInt64) -> String {
        var lines = header(sessionID: sessionID)
        lines.append("a=group:BUNDLE 0")
        lines.append("a=msid-semantic: WMS")
        lines += audioSection(payloadType: 111, parameters: "minptime=10;useinbandfec=1", mid: "0", local: local)
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    private static func header(sessionID: UInt64, version: UInt64 = 2) -> [String] {
        ["v=0", "o=roomtap \(sessionID) \(version) IN IP4 127.0.0.1", "s=-", "t=0 0"]
    }

    private static func audioSection(payloadType: UInt8, parameters: String?, mid: String, local: Local) -> [String] {
        var lines = [
            "m=audio 9 UDP/TLS/RTP/SAVPF \(payloadType)",
            "c=IN IP4 0.0.0.0",
            "a=rtcp:9 IN IP4 0.0.0.0",
            "a=ice-ufrag:\(local.ufrag)",
            "a=ice-pwd:\(local.password)",
            "a=fingerprint:\(local.fingerprint)",
            "a=setup:\(local.setup)",
            "a=mid:\(mid)",
            "a=\(local.direction)",
            "a=rtcp-mux",
            "a=rtpmap:\(payloadType) opus/48000/2",
        ]
        if let parameters { lines.append("a=fmtp:\(payloadType) \(parameters)") }
        if let ssrc = local.ssrc {
            lines.append("a=ssrc:\(ssrc) cname:\(local.cname)")
            lines.append("a=ssrc:\(ssrc) msid:roomtap agent")
        }
        if !local.trickle {
            lines += local.candidates.map { "a=" + $0 }
            lines.append("a=end-of-candidates")
        }
        return lines
    }
}
