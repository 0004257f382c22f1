import RoomTapJSON
import RoomTapStorage
import RoomTapWebRTC

/// The fuzz entry of what a WebRTC join reads from outside: the peer's SDP (parsed, its audio
/// section chosen, answered, and the answer read back), a Janus long-poll message (as an event,
/// its feed ids), a WHEP reply (status and Link header), and a Sora signaling message (its parse,
/// an offer's ICE servers, and an offer's or re-offer's multi-stream answer). Traps when an invariant fails: an answer
/// roomtap wrote must parse and keep the chosen audio section's payload type; a multi-stream answer
/// must have one section per offered section, in order.
///
/// Thread: any; pure.
package enum WebRTCFuzz {
    private static func exerciseMultiStream(_ text: String) {
        guard let offer = try? WebRTCSessionDescription.parse(text), let taken = try? offer.receivableAudioSections()
        else { return }
        var local = SDPWriter.Local(
            ufrag: "fuzz", password: "0123456789012345678901", fingerprint: "sha-256 AA:BB", candidates: [],
            setup: "active", direction: "recvonly")
        local.trickle = true
        let answer = SDPWriter.multiStreamAnswer(
            to: offer, taking: Set(taken.map(\.index)), local: local, sessionID: 1, version: 2)
        guard let back = try? WebRTCSessionDescription.parse(answer), back.media.count == offer.media.count else {
            fatalError("WebRTCFuzz: roomtap's own multi-stream answer does not read back")
        }
    }

    /// An ICE server's URL (as logs and room.json show it) reads back as the same server.
    private static func checkReadBack(_ server: ICEServer) {
        guard ICEServer(url: server.description, username: server.username, credential: server.credential) == server
        else { fatalError("WebRTCFuzz: ICE server \(server) does not read back from its own URL") }
    }

    package static func exercise(_ bytes: UnsafeRawBufferPointer) {
        let text = String(decoding: bytes, as: UTF8.self)
        if let offer = try? WebRTCSessionDescription.parse(text), let (index, audio) = try? offer.audioSection() {
            let local = SDPWriter.Local(
                ufrag: "fuzz", password: "0123456789012345678901", fingerprint: "sha-256 AA:BB",
                candidates: ["candidate:1 1 UDP 1 127.0.0.1 9 typ host"], setup: "active", direction: "recvonly")
            let answer = SDPWriter.answer(to: offer, audioIndex: index, local: local, sessionID: 1)
            guard let back = try? WebRTCSessionDescription.parse(answer), let (_, section) = try? back.audioSection(),
                section.opusPayloadType == audio.opusPayloadType
            else { fatalError("WebRTCFuzz: roomtap's own answer does not read back") }
        }
        if let message = try? JSONValue(parsing: bytes) {
            for item in message.arrayValue ?? [message] {
                if let (_, event) = JanusSession.event(from: item) {
                    _ = try? JanusSession.checkPluginError(event.data, server: "fuzz")
                    for key in ["unpublished", "leaving", "id"] {
                        _ = event.data[key].flatMap(JanusVideoRoomJoin.feedID)
                    }
                    for entry in event.data["publishers"]?.arrayValue ?? [] {
                        _ = entry["id"].flatMap(JanusVideoRoomJoin.feedID)
                    }
                }
            }
        }
        if let message = try? SoraMessage.parse(text) {
            switch message {
            case .offer(let offer):
                SoraJoin.iceServers(offer).servers.forEach(checkReadBack)
                exerciseMultiStream(offer.sdp)
            case .reOffer(let sdp): exerciseMultiStream(sdp)
            case .notify(let notify): _ = SoraJoin.name(of: notify.connection ?? notify.data.first, key: "name")
            default: break
            }
        }
        exerciseMultiStream(text)
        _ = WHEPJoin.iceServers(text)
        ICEServer(url: text, username: "u", credential: "p").map(checkReadBack)
        _ = WHEPJoin.resolve(text, against: "http://127.0.0.1:9/whep/x")
        let status = bytes.count >= 2 ? Int(bytes[0]) << 8 | Int(bytes[1]) : 0
        _ = try? WHEPJoin.check(
            HTTPTransfer.Response(status: status, headers: [:], body: Array(bytes)), url: "http://127.0.0.1:9/whep/x")
    }
}
