import Foundation
import RoomTapAll

/// `--join`/`--whep`: the room joined over WebRTC (RoomTapWebRTC), and `--agent-publish`.
extension RoomRecording {
    /// Joins the room and brings every present publisher's connection up, before DIR is touched
    /// (a room that does not exist, a wrong pin, ICE or DTLS failing cost nothing). Nothing to do
    /// without `--join`/`--whep` (nil). Throws the one line; a failed join is left stopped. The
    /// room's thread.
    func connectJoin() throws(WebRTCError) -> RoomJoin? {
        guard let target = plan.options.join else { return nil }
        var options = RoomJoin.Options()
        options.stun = plan.options.stun
        options.iceHosts = plan.options.iceHosts
        let join = try RoomJoin(target: target, options: options)
        do { try join.connect() } catch {
            join.stop()
            throw error
        }
        return join
    }

    /// `--agent-publish`: a connection publishing into the joined room as `agent`, the SSRC its
    /// SDP announced and Opus's negotiated payload type; nil without the option (or without
    /// `join`). Throws a one-line reason.
    func publishAgentVoice(_ agent: AgentOptions, join: RoomJoin?) throws -> (
        transport: any RTPPacketTransport, ssrc: UInt32, payloadType: UInt8
    )? {
        guard agent.publish, let join else { return nil }
        do {
            let (connection, ssrc, payloadType) = try join.publish(display: "agent")
            return (connection, ssrc, payloadType)
        } catch { throw RuntimeError(description: error.description) }
    }
}
