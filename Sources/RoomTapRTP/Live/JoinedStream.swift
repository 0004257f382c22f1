public import RoomTapCore

/// A track of a ``LiveRoom`` fed by a transport of its own instead of the room's UDP sockets: one
/// publisher of a room roomtap joined over WebRTC (see RoomTapWebRTC), whose packets reach it
/// decrypted by that transport. It keeps the exact record path of every live track: packets placed
/// by RTP timestamp, streams aligned by their RTCP sender reports, silence as the leave monitor
/// sees it, an RTCP BYE or ``leave()`` ending its audio and a later packet continuing the track.
///
/// Thread: ``receive(_:arrival:)``, ``noteSenderReport(_:)`` and ``leave()`` from the one thread
/// that delivers the stream's packets (the jitter buffer's producer side); the rest anywhere.
public final class JoinedStream: Sendable {
    /// The live participant (its track, jitter buffer, SSRC).
    public let participant: LiveParticipant

    init(participant: LiveParticipant) { self.participant = participant }

    /// The room's track.
    public var track: AudioTrack { participant.track }

    /// One RTP packet of the stream (`arrival`: CLOCK_MONOTONIC ns of its receipt). A new SSRC
    /// (the publisher restarted) continues the same track. Allocates nothing.
    public func receive(_ packet: RTPPacket, arrival: UInt64) { participant.deliver(packet, arrival: arrival) }

    /// An RTCP sender report of the stream's SSRC: maps its RTP time to the sender's wall clock.
    public func noteSenderReport(_ report: RTCPSenderReport) {
        guard report.ssrc == participant.ssrc else { return }
        participant.buffer.noteSenderReport(ntp: report.ntpTimestamp, rtpTimestamp: report.rtpTimestamp)
    }

    /// The publisher left (unpublished, hung up, RTCP BYE): the track renders silence from here on.
    /// Idempotent.
    public func leave() { participant.leave() }
}
