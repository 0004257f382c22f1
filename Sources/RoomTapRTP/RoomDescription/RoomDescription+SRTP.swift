import RoomTapJSON

extension RoomDescription {
    /// The description with SRTP keys given outside it (the CLI's `--srtp`, from the command line or
    /// the environment): `keys[name]` goes to every participant whose ``ParticipantDescription/trackName``
    /// is `name`; names no participant has are the caller's to refuse first (they are ignored here).
    /// Throws, naming no key, when such a participant already has a key in the description (a key is
    /// given in one place) or when a port would then mix SRTP and plain RTP.
    public func keyed(_ keys: [String: SRTPKeying], source: String) throws(RoomDescriptionError) -> RoomDescription {
        var keyed = self
        for i in keyed.participants.indices {
            guard let keying = keys[keyed.participants[i].trackName] else { continue }
            guard keyed.participants[i].srtp == nil else {
                throw RoomDescriptionError(
                    .duplicate, source: source,
                    message: "\(keyed.participants[i].trackName.quotedForMessage) has an SRTP key in the "
                        + "description already; give each key in one place")
            }
            keyed.participants[i].srtp = keying
        }
        return try keyed.checkedSRTPPorts(source: source)
    }

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
