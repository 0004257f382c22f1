/// The one rule for naming a stream that no description named: `ssrc-<hex>`, the SSRC in lower-case
/// hex without leading zeros (`ssrc-4d2`), and the spellings that find it again: `ssrc-000004d2`,
/// `ssrc-0x4D2`, `0x000004d2` (how `tracks` shows an SSRC as a source).
///
/// Thread: any; pure.
public enum SSRCTrackName {
    /// The track name of an undescribed stream.
    public static func name(_ ssrc: UInt32) -> String { "ssrc-" + String(ssrc, radix: 16) }

    /// The SSRC a spelling names (`ssrc-<hex>`, `ssrc-0x<hex>`, `0x<hex>`; hex in any case, with
    /// leading zeros), nil for any other text.
    public static func ssrc(in text: String) -> UInt32? {
        var hex = Substring(text.lowercased())
        if hex.hasPrefix("ssrc-") { hex = hex.dropFirst(5) } else if !hex.hasPrefix("0x") { return nil }
        if hex.hasPrefix("0x") { hex = hex.dropFirst(2) }
        guard !hex.isEmpty, hex.count <= 8 else { return nil }
        return UInt32(hex, radix: 16)
    }
}
