import RoomTapRTP

/// A fuzzing entry point for the secured receive path (for the libFuzzer target in `Fuzz/`): the
/// `a=crypto` parser (``SDESCrypto``), `--allow`/`allow` prefixes (``SourcePrefix``), and
/// libsrtp's unprotect of SRTP and SRTCP in place, as ``ReceiveGuard`` calls it, over arbitrary
/// bytes. Traps only when an invariant breaks: an unprotected packet is never longer than the
/// datagram, and a prefix prints as a prefix that parses back to itself.
///
/// Thread: one thread at a time (the libsrtp sessions are shared by every call).
package enum SecurityFuzz {
    /// Sessions with a template for any SSRC: AES-CM (80-bit tag) and AES-GCM.
    private static let contexts: [SRTPContext] = [SRTPSuite.aesCM128HMACSHA1Tag80, .aeadAES128GCM]
        .compactMap { suite in
            let keying = SRTPKeying(suite: suite, keyAndSalt: (0..<suite.keyAndSaltLength).map { UInt8($0) })!
            return try? SRTPContext(streams: [.init(ssrc: nil, keying: keying)])
        }

    /// Runs the parsers and libsrtp over `bytes`; discards the results.
    package static func exercise(_ bytes: UnsafeRawBufferPointer) {
        let text = String(decoding: bytes.prefix(512), as: UTF8.self)
        _ = try? SDESCrypto.parse(Substring(text))
        if let prefix = SourcePrefix(text) {
            check(SourcePrefix(prefix.description) == prefix, "a prefix prints as itself")
        }
        guard bytes.count <= RTPReceiver.maxDatagram else { return }
        let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, bytes.count), alignment: 8)
        defer { copy.deallocate() }
        for context in contexts {
            for rtcp in [false, true] {
                if let base = bytes.baseAddress { copy.baseAddress!.copyMemory(from: base, byteCount: bytes.count) }
                let plain =
                    rtcp
                    ? context.unprotectRTCP(copy.baseAddress!, length: bytes.count)
                    : context.unprotectRTP(copy.baseAddress!, length: bytes.count)
                check((plain ?? 0) <= bytes.count, "unprotect never grows a packet")
            }
        }
    }

    private static func check(_ condition: Bool, _ what: StaticString) {
        if !condition { fatalError("invariant failed: \(what)") }
    }
}
