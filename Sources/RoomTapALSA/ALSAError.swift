/// A failure of an ALSA device, as one line for the user: what was being done, on which device,
/// and alsa-lib's own words (`snd_strerror`).
///
/// Example: `cannot open ALSA playback device "usb": No such file or directory`.
public struct ALSAError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The whole line.
    public let message: String
    /// The negative errno-style code alsa-lib returned.
    public let code: Int32

    init(_ message: String, code: Int32) {
        self.message = message
        self.code = code
    }

    public var description: String { message }
}
