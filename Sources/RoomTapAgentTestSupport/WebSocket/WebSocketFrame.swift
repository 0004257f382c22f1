/// RFC 6455 section 5.2 frames for the test server (https://www.rfc-editor.org/rfc/rfc6455#section-5.2):
///
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-------+-+-------------+-------------------------------+
/// |F|R|R|R| opcode|M| Payload len |    Extended payload length    |
/// |I|S|S|S|  (4)  |A|     (7)     |             (16/64)           |
/// |N|V|V|V|       |S|             |   (if payload len==126/127)   |
/// | |1|2|3|       |K|             |                               |
/// +-+-+-+-+-------+-+-------------+ - - - - - - - - - - - - - - - +
/// |     Extended payload length continued, if payload len == 127  |
/// + - - - - - - - - - - - - - - - +-------------------------------+
/// |                               |Masking-key, if MASK set to 1  |
/// +-------------------------------+-------------------------------+
/// | Masking-key (continued)       |          Payload Data         |
/// +-------------------------------- - - - - - - - - - - - - - - - +
/// ```
public struct WebSocketFrame: Sendable, Equatable {
    public var fin: Bool
    /// RSV1-3 as the top bits (0 unless an extension is negotiated).
    public var reserved: UInt8
    public var opcode: UInt8
    public var masked: Bool
    /// The payload, unmasked.
    public var payload: [UInt8]

    public init(fin: Bool = true, reserved: UInt8 = 0, opcode: UInt8, masked: Bool = false, payload: [UInt8]) {
        self.fin = fin
        self.reserved = reserved
        self.opcode = opcode
        self.masked = masked
        self.payload = payload
    }

    /// The frame's bytes; unmasked (server to client) unless `maskKey` is given.
    public func encoded(maskKey: [UInt8]? = nil) -> [UInt8] {
        var out: [UInt8] = [(fin ? 0x80 : 0) | reserved << 4 | opcode & 0x0F]
        let maskBit: UInt8 = maskKey == nil ? 0 : 0x80
        let count = payload.count
        if count < 126 {
            out.append(maskBit | UInt8(count))
        } else if count < 65536 {
            out += [maskBit | 126, UInt8(count >> 8), UInt8(count & 0xFF)]
        } else {
            out.append(maskBit | 127)
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: count >> shift)) }
        }
        if let maskKey {
            out += maskKey
            out += payload.enumerated().map { $0.element ^ maskKey[$0.offset & 3] }
        } else {
            out += payload
        }
        return out
    }

    /// A data message as one unmasked frame.
    public static func encode(_ message: WebSocketTestMessage) -> [UInt8] {
        switch message {
        case .text(let text): WebSocketFrame(opcode: 1, payload: Array(text.utf8)).encoded()
        case .binary(let bytes): WebSocketFrame(opcode: 2, payload: bytes).encoded()
        }
    }

    /// Parses one frame at the start of `bytes[offset...]`; nil when more bytes are needed.
    /// Returns the frame and the bytes it took.
    static func parse(_ bytes: [UInt8], at offset: Int) -> (frame: WebSocketFrame, length: Int)? {
        let available = bytes.count - offset
        guard available >= 2 else { return nil }
        let b0 = bytes[offset]
        let b1 = bytes[offset + 1]
        var position = offset + 2
        var length = Int(b1 & 0x7F)
        if length == 126 {
            guard available >= 4 else { return nil }
            length = Int(bytes[position]) << 8 | Int(bytes[position + 1])
            position += 2
        } else if length == 127 {
            guard available >= 10 else { return nil }
            length = 0
            for i in 0..<8 { length = length << 8 | Int(bytes[position + i]) }
            position += 8
        }
        let masked = b1 & 0x80 != 0
        var key: [UInt8] = []
        if masked {
            guard bytes.count >= position + 4 else { return nil }
            key = Array(bytes[position..<(position + 4)])
            position += 4
        }
        guard bytes.count >= position + length else { return nil }
        var payload = Array(bytes[position..<(position + length)])
        if masked {
            payload.withUnsafeMutableBufferPointer { p in
                for i in 0..<p.count { p[i] ^= key[i & 3] }
            }
        }
        let frame = WebSocketFrame(
            fin: b0 & 0x80 != 0, reserved: (b0 >> 4) & 0x7, opcode: b0 & 0x0F, masked: masked, payload: payload)
        return (frame, position + length - offset)
    }
}
