import RoomTapJSON

extension RoomDescription {
    /// The description, after checking that every port is either SRTP or plain RTP: every
    /// participant of a port has an SRTP key, or none does (one socket cannot tell a plain packet
    /// from one that failed to decrypt). Throws one line naming two participants that disagree.
    func checkedSRTPPorts(source: String) throws(RoomDescriptionError) -> RoomDescription {
        var first: [UInt16: ParticipantDescription] = [:]
        for participant in participants {
            guard let earlier = first[participant.port] else {
                first[participant.port] = participant
                continue
            }
            guard (earlier.srtp == nil) != (participant.srtp == nil) else { continue }
            let (keyed, plain) = earlier.srtp != nil ? (earlier, participant) : (participant, earlier)
            throw RoomDescriptionError(
                .unsupported, source: source,
                message: "port \(participant.port): \(Self.label(keyed)) sends SRTP and \(Self.label(plain)) "
                    + "plain RTP; give every participant of a port an SRTP key, or none")
        }
        return self
    }

    private static func label(_ participant: ParticipantDescription) -> String {
        if let name = participant.name { return name.quotedForMessage }
        return participant.ssrc.map { "ssrc \($0)" } ?? "the participant without an ssrc"
    }
}
