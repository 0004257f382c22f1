import RoomTapAll

extension RecordCommand {
    /// `--sora-audio-streaming HOST:PORT` (a bare PORT: loopback), `--tls-cert`/`--tls-key` and
    /// `--sora-name ID=NAME`.
    static func parseSoraStreaming(_ args: ParsedArguments, into options: inout Options) throws(UsageError) {
        if let text = args.value("--sora-audio-streaming") {
            let address = text.allSatisfy(\.isNumber) ? ListenAddress("127.0.0.1:\(text)") : ListenAddress(text)
            guard let address else {
                throw UsageError(
                    description: "--sora-audio-streaming '\(text)' must be HOST:PORT with a numeric address and a "
                        + "port 0-65535, or a PORT on loopback (e.g. 127.0.0.1:5890, [::1]:5890, 0.0.0.0:5890; "
                        + "port 0: the kernel picks a free one)",
                    command: "record")
            }
            options.soraStreaming = address
        }
        switch (args.value("--tls-cert"), args.value("--tls-key")) {
        case (nil, nil): break
        case (let certificate?, let key?):
            guard options.soraStreaming != nil else {
                throw UsageError(
                    description: "--tls-cert and --tls-key serve --sora-audio-streaming over TLS; give that too",
                    command: "record")
            }
            options.soraTLS = (certificate, key)
        default:
            throw UsageError(
                description: "give --tls-cert and --tls-key together (the PEM certificate chain and its private key)",
                command: "record")
        }
        for text in args.values("--sora-name") {
            guard let equals = text.firstIndex(of: "="), equals != text.startIndex,
                text.index(after: equals) != text.endIndex
            else {
                throw UsageError(
                    description:
                        "--sora-name '\(text)' must be CONNECTION_ID=NAME (the track name of a Sora connection)",
                    command: "record")
            }
            guard options.soraStreaming != nil else {
                throw UsageError(
                    description: "--sora-name names a track of --sora-audio-streaming; give that too", command: "record"
                )
            }
            let id = String(text[..<equals])
            let name = String(text[text.index(after: equals)...])
            guard options.soraNames[id] == nil else {
                throw UsageError(description: "--sora-name \(id) is given twice; give one name", command: "record")
            }
            guard !options.soraNames.values.contains(name) else {
                throw UsageError(
                    description: "--sora-name: two connections are named '\(name)'; give each its own name",
                    command: "record")
            }
            options.soraNames[id] = name
        }
    }
}
