import RoomTapJSON

/// The room file's keys for a secured room (docs/ROOM-FILE.md): a participant's `srtp` object
/// and the room's `allow` list.
extension RoomFileParser {
    /// The keys of an `srtp` object.
    static let srtpKeys = ["suite", "key"]

    /// `{"suite": "AES_CM_128_HMAC_SHA1_80" | 80 | 32, "key": "<base64 key and salt>"}`: a suite by
    /// its SDES name (RFC 4568 §6.2, RFC 7714 §14.2), or Janus's `srtp_suite` number; the key as SDES
    /// `inline:` and Janus's `srtp_crypto` carry it. No message shows the key.
    func srtpKeying(_ value: JSONNode, path: String) throws(RoomDescriptionError) -> SRTPKeying {
        guard case .object(let members) = value.kind else {
            throw invalid(
                value, path, "is not an object; give {\"suite\": \"AES_CM_128_HMAC_SHA1_80\", \"key\": \"<base64>\"}")
        }
        let field = try fields(members, at: value, path: path, allowed: Self.srtpKeys)
        guard let suiteValue = field["suite"] else {
            throw invalid(value, path, "missing \"suite\"; give one of \(SRTPSuite.namesForMessages), or 80 or 32")
        }
        guard let keyValue = field["key"] else {
            throw invalid(value, path, "missing \"key\"; give the master key and salt in base64 (Janus: srtp_crypto)")
        }
        let suite: SRTPSuite?
        switch suiteValue.kind {
        case .string(let name): suite = SRTPSuite(name: name)
        case .number(let text):
            suite = Substring(text).sdpDecimal(maximum: 999).flatMap { SRTPSuite(janusSuite: Int($0)) }
        default: suite = nil
        }
        guard let suite else {
            throw invalid(
                suiteValue, path + ".suite",
                "\(suiteValue.quoted) is not an SRTP suite roomtap receives; give one of "
                    + "\(SRTPSuite.namesForMessages), or Janus's srtp_suite 80 or 32")
        }
        guard case .string(let text) = keyValue.kind else {
            throw invalid(keyValue, path + ".key", "is not a string; give the master key and salt in base64")
        }
        guard let keying = SRTPKeying(suite: suite, base64: text) else {
            let what = SRTPKeying.decodeBase64(text).map { "is \($0.count) bytes" } ?? "is not base64"
            throw invalid(
                keyValue, path + ".key",
                "\(what) (the key is not shown); \(suite.name) takes \(suite.keyAndSaltLength) bytes "
                    + "(\(suite.keyLength) of key, \(suite.saltLength) of salt) in base64")
        }
        return keying
    }

    /// `["10.0.0.0/8", "::1", ...]`: who may send (``SourcePrefix``); at least one entry.
    func allowList(_ value: JSONNode, path: String) throws(RoomDescriptionError) -> [SourcePrefix] {
        guard case .array(let entries) = value.kind, !entries.isEmpty else {
            throw invalid(value, path, "is not a list of addresses; give e.g. [\"10.0.0.0/8\", \"::1\"]")
        }
        guard entries.count <= RoomDescription.maximumParticipants else {
            throw invalid(
                value, path, "has \(entries.count) entries; give at most \(RoomDescription.maximumParticipants)")
        }
        var prefixes: [SourcePrefix] = []
        for (index, entry) in entries.enumerated() {
            guard case .string(let text) = entry.kind, let prefix = SourcePrefix(text) else {
                throw invalid(
                    entry, "\(path)[\(index)]",
                    "\(entry.quoted) is not an address or network (e.g. \"192.0.2.7\", \"10.0.0.0/8\", \"2001:db8::/32\")"
                )
            }
            prefixes.append(prefix)
        }
        return prefixes
    }
}
