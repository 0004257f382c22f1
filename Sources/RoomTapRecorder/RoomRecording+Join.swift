import Foundation
import RoomTap

/// `--join`/`--whep`: the room joined over WebRTC (RoomTapWebRTC), and `--agent-publish`.
extension RoomRecording {
    /// Joins the room and brings every present publisher's connection up, before DIR is touched
    /// (a room that does not exist, a wrong pin, ICE or DTLS failing cost nothing). Nothing to do
    /// without `--join`/`--whep`. Throws the one line; a failed join is left stopped. Main thread.
    func connectJoin() throws(WebRTCError) {
        guard let target = plan.options.join else { return }
        var options = RoomJoin.Options()
        options.stun = plan.options.stun
        options.iceHosts = plan.options.iceHosts
        let join = try RoomJoin(target: target, options: options)
        do { try join.connect() } catch {
            join.stop()
            throw error
        }
        roomJoin.withLock { $0 = join }
    }

    /// `--agent-publish`: a connection publishing into the joined room as `agent`, the SSRC its
    /// SDP announced and Opus's negotiated payload type; nil without the option. Throws a
    /// one-line reason.
    func publishAgentVoice(_ agent: AgentOptions) throws -> (
        transport: any RTPPacketTransport, ssrc: UInt32, payloadType: UInt8
    )? {
        guard agent.publish, let join = roomJoin.withLock({ $0 }) else { return nil }
        do {
            let (connection, ssrc, payloadType) = try join.publish(display: "agent")
            return (connection, ssrc, payloadType)
        } catch { throw RuntimeError(description: error.description) }
    }
}
