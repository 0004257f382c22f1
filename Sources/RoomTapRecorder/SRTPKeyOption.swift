import RoomTapAll

/// One `--srtp NAME=SUITE:KEY` or `--srtp NAME=SUITE:env:VAR` argument: a participant's SRTP key
/// given outside the room description, as operators hold keys (in a secrets store, handed to the
/// process), not in a file next to the recording.
///
/// - NAME is the participant as the room description names its track (`--dry-run` lists them: the
///   description's name, else `port-<port>`).
/// - SUITE is an SDES name (`AES_CM_128_HMAC_SHA1_80`, `AES_CM_128_HMAC_SHA1_32`, `AEAD_AES_128_GCM`,
///   `AEAD_AES_256_GCM`; RFC 4568 §6.2, RFC 7714 §14.2) or Janus's `srtp_suite` number, 32 or 80.
/// - KEY is the master key ‖ salt in base64, as SDES `inline:` and Janus's `srtp_crypto` carry it;
///   `env:VAR` reads that text from the environment variable VAR instead. The env form is the one
///   to use: anyone on the machine sees a command line (`ps`, /proc/PID/cmdline), only the user sees
///   a process's environment. The variable is named on the command line, not derived from NAME
///   (track names need not be valid variable names, and nothing is read that was not asked for).
///
/// A key is never shown: the messages name the participant, the suite and the variable, never the
/// key text.
///
/// Thread: a value type, use anywhere.
struct SRTPKeyOption {
    /// The participant's track name.
    let name: String
    /// Its key and suite.
    let keying: SRTPKeying

    /// Parses one `--srtp` value; `environment` answers `env:VAR`.
    static func parse(_ text: String, environment: [String: String]) throws(UsageError) -> SRTPKeyOption {
        func fail(_ what: String) -> UsageError {
            UsageError(description: "--srtp \(what)", command: "record")
        }
        guard let eq = text.firstIndex(of: "="), eq != text.startIndex else {
            throw fail(
                "must be NAME=SUITE:KEY or NAME=SUITE:env:VAR (e.g. alice=AES_CM_128_HMAC_SHA1_80:env:ALICE_SRTP_KEY)")
        }
        let name = String(text[..<eq])
        let rest = text[text.index(after: eq)...]
        guard let colon = rest.firstIndex(of: ":") else {
            throw fail("\(name): give the suite and the key as SUITE:KEY or SUITE:env:VAR")
        }
        let suiteText = rest[..<colon]
        let keyText = rest[rest.index(after: colon)...]
        guard let suite = SRTPSuite(name: suiteText) ?? Int(suiteText).flatMap(SRTPSuite.init(janusSuite:)) else {
            // The text is not echoed: a key put where the suite goes would show.
            throw fail(
                "\(name): unknown suite (before the first ':'); give one of "
                    + SRTPSuite.allCases.map(\.name).joined(separator: ", ") + " (or Janus's 32 or 80)")
        }
        let what = "\(suite.keyAndSaltLength) bytes of key and salt in base64 for \(suite.name)"
        if keyText.hasPrefix("env:") {
            let variable = String(keyText.dropFirst(4))
            guard !variable.isEmpty else { throw fail("\(name): env: names no variable; give env:VAR") }
            guard let value = environment[variable], !value.isEmpty else {
                throw fail("\(name): the environment variable \(variable) is not set; export it with \(what)")
            }
            guard let keying = SRTPKeying(suite: suite, base64: value) else {
                throw fail("\(name): the environment variable \(variable) is not \(what) (key not shown)")
            }
            return SRTPKeyOption(name: name, keying: keying)
        }
        guard let keying = SRTPKeying(suite: suite, base64: keyText) else {
            throw fail("\(name): the key is not \(what) (key not shown)")
        }
        return SRTPKeyOption(name: name, keying: keying)
    }
}
