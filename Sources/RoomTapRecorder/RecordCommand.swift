import Foundation
import RoomTapAll

/// `roomtap record`: every speaker of a room to a time-aligned WAV each, a mix, and room.json.
enum RecordCommand {
    /// `--join`, `--whep`, `--whep-token`, `--stun`: a room joined over WebRTC.
    private static func parseJoin(
        _ args: ParsedArguments, environment: [String: String], into options: inout Options
    ) throws(UsageError) {
        let whep = args.values("--whep")
        if let url = args.value("--join") {
            guard whep.isEmpty else {
                throw UsageError(description: "give --join or --whep, not both", command: "record")
            }
            if url.hasPrefix("sora+") {
                guard var target = SoraTarget(url: url) else {
                    throw UsageError(
                        description: "--join '\(url)' must be sora+wss://HOST[:PORT]/signaling?channel_id=ID "
                            + "(sora+ws:// without TLS)", command: "record")
                }
                target.client = "roomtap \(CommandDispatch.version)"
                target.metadata = try soraMetadata(args, environment: environment)
                if let key = args.value("--join-name-key") {
                    guard !key.isEmpty else {
                        throw UsageError(description: "--join-name-key must not be empty", command: "record")
                    }
                    target.nameKey = key
                }
                options.join = .sora(target)
                return try parseICE(args, into: &options)
            }
            for option in ["--join-metadata", "--join-name-key"] where args.value(option) != nil {
                throw UsageError(
                    description: "\(option) is for --join sora+wss://...; give a Sora channel too", command: "record")
            }
            guard let target = JanusVideoRoomTarget(url: url) else {
                throw UsageError(
                    description: "--join '\(url)' must be janus+http://HOST:PORT/janus?room=ID[&pin=PIN] "
                        + "(janus+https:// for TLS) or sora+wss://HOST/signaling?channel_id=ID", command: "record")
            }
            options.join = .janus(target)
        } else if !whep.isEmpty {
            var targets: [WHEPTarget] = []
            for text in whep {
                guard let equals = text.firstIndex(of: "="), equals != text.startIndex else {
                    throw UsageError(description: "--whep '\(text)' must be NAME=URL", command: "record")
                }
                let name = String(text[..<equals])
                let url = String(text[text.index(after: equals)...])
                guard url.hasPrefix("http://") || url.hasPrefix("https://"), URL(string: url)?.host != nil else {
                    throw UsageError(
                        description:
                            "--whep \(name)=\(url): the URL must be the WHEP endpoint's http:// or https:// URL",
                        command: "record")
                }
                guard !targets.contains(where: { $0.name == name }) else {
                    throw UsageError(
                        description: "--whep \(name) is given twice; give each name once", command: "record")
                }
                targets.append(WHEPTarget(name: name, url: url))
            }
            let token = args.value("--whep-token") ?? environment["ROOMTAP_WHEP_TOKEN"]
            options.join = .whep(targets, token: token?.isEmpty == true ? nil : token)
        }
        for option in ["--join-metadata", "--join-name-key"] where args.value(option) != nil && options.join == nil {
            throw UsageError(
                description: "\(option) is for --join sora+wss://...; give a Sora channel too", command: "record")
        }
        try parseICE(args, into: &options)
    }

    /// `--join-metadata JSON|@FILE`, else `ROOMTAP_SORA_METADATA`: the Sora connect message's
    /// `metadata`. The text never appears in an error message (it may be a token).
    private static func soraMetadata(
        _ args: ParsedArguments, environment: [String: String]
    ) throws(UsageError) -> JSONValue? {
        var text: String
        var origin = "--join-metadata"
        if let given = args.value("--join-metadata") {
            text = given
            if given.hasPrefix("@") {
                let path = String(given.dropFirst())
                origin = "--join-metadata @\(path)"
                guard let data = FileManager.default.contents(atPath: path) else {
                    throw UsageError(description: "\(origin): cannot read the file", command: "record")
                }
                text = String(decoding: data, as: UTF8.self)
            }
        } else if let variable = environment["ROOMTAP_SORA_METADATA"], !variable.isEmpty {
            text = variable
            origin = "ROOMTAP_SORA_METADATA"
        } else {
            return nil
        }
        do { return try JSONValue(parsing: text) } catch {
            throw UsageError(
                description: "\(origin) is not JSON (\(error.message) at byte \(error.offset)); give a JSON value "
                    + "such as {\"access_token\": \"...\"}", command: "record")
        }
    }

    /// `--ice-host`, `--stun`: the local side of a WebRTC join.
    private static func parseICE(_ args: ParsedArguments, into options: inout Options) throws(UsageError) {
        for host in args.values("--ice-host") {
            guard options.join != nil else {
                throw UsageError(
                    description: "--ice-host is for --join or --whep; give one of them too", command: "record")
            }
            guard ListenAddress(host.contains(":") ? "[\(host)]:0" : "\(host):0") != nil else {
                throw UsageError(
                    description: "--ice-host '\(host)' must be a numeric IP address (e.g. 127.0.0.1)", command: "record"
                )
            }
            options.iceHosts.append(host)
        }
        if let stun = args.value("--stun") {
            guard options.join != nil else {
                throw UsageError(description: "--stun is for --join or --whep; give one of them too", command: "record")
            }
            let text = stun.hasPrefix("stun:") ? String(stun.dropFirst(5)) : stun
            guard let colon = text.lastIndex(of: ":"), let port = UInt16(text[text.index(after: colon)...]), port > 0,
                colon != text.startIndex
            else {
                throw UsageError(
                    description: "--stun '\(stun)' must be HOST:PORT (e.g. stun.example.net:3478)", command: "record")
            }
            options.stun = (String(text[..<colon]), port)
        }
    }

    /// The options of `record`, each group read and checked by a part of its own (in this order,
    /// so that of several mistakes the first one named is the same as ever), then the checks
    /// across groups: the output directory, the speakers, the names.
    /// `environment`: where `ROOMTAP_WHEP_TOKEN`, `ROOMTAP_SORA_METADATA` and `--srtp`'s `env:`
    /// keys are read (the run's, ``CommandContext/environment``).
    static func parse(_ args: ParsedArguments, environment: [String: String]) throws(UsageError) -> Options {
        var options = Options()
        try parseInputs(args, into: &options)
        try parseOutputs(args, into: &options)
        try parseRendering(args, into: &options)
        try parseNetwork(args, environment: environment, into: &options)
        try parseClock(args, into: &options)
        try parseCompanions(args, into: &options)
        try parseDevices(args, into: &options)
        let out = args.value("--out")
        let extra = args.positionals
        guard extra.isEmpty else {
            throw UsageError(
                description: "unexpected argument '\(extra[0])'; speakers are given as --file NAME=PATH",
                command: "record")
        }
        guard !options.files.isEmpty || options.janusRoom != nil || options.soraRecording != nil || options.isLive
        else {
            throw UsageError(
                description: "no speakers: give --file NAME=PATH (or --janus-room DIR, --sora-recording DIR), or "
                    + "--listen HOST:PORT / "
                    + "--sdp FILE / --room FILE "
                    + "/ --mic for a live room", command: "record")
        }
        guard let out, !out.isEmpty else {
            throw UsageError(description: "no output directory: give --out DIR", command: "record")
        }
        options.out = out
        if options.http != nil && !options.usesRealTimeClock {
            throw UsageError(
                description: "--http serves a room while it runs: give a live room (--listen, --sdp, --room, --join, "
                    + "--mic, --agent) or --realtime", command: "record")
        }
        try checkNames(options)
        return options
    }

    /// The speakers from files and recordings: --file, --janus-room, --sora-recording, --align.
    private static func parseInputs(_ args: ParsedArguments, into options: inout Options) throws(UsageError) {
        var files: [FileSpec] = []
        for text in args.values("--file") { files.append(try FileSpec.parse(text)) }
        options.files = files
        options.janusRoom = args.value("--janus-room")
        try parseSora(args, into: &options)
        if let text = args.value("--align") {
            guard let align = Alignment(rawValue: text) else {
                throw UsageError(
                    description: "--align must be file or wallclock, not '\(text)'", command: "record")
            }
            options.align = align
        }
    }

    /// What is written and where it goes: --mix, --force, --format/--rate/--bitrate, --loudness, --multichannel, --upload, --webhook, --metrics, --http, and the output flags.
    private static func parseOutputs(_ args: ParsedArguments, into options: inout Options) throws(UsageError) {
        options.mix = args.flag("--mix")
        options.force = args.flag("--force")
        options.allowTruncated = args.flag("--allow-truncated")
        options.quiet = args.flag("--quiet")
        options.json = args.flag("--json")
        options.dryRun = args.flag("--dry-run")
        options.output = try OutputFormat.parse(args, command: "record")
        options.loudness = args.flag("--loudness")
        options.multichannel = args.value("--multichannel")
        options.upload = try RecordUploadOptions.parse(args)
        options.webhook = args.value("--webhook")
        if let text = args.value("--metrics") {
            guard let colon = text.lastIndex(of: ":"), UInt16(text[text.index(after: colon)...]) != nil else {
                throw UsageError(
                    description: "--metrics '\(text)' must be HOST:PORT (e.g. 127.0.0.1:9464, :9464; port 0: any)",
                    command: "record")
            }
            options.metrics = text
        }
        options.http = try LivePage.parseAddress(args.value("--http"))
        if let file = options.multichannel {
            guard options.output.isDefault else {
                throw UsageError(
                    description: "--multichannel is made from 48 kHz WAV speaker files; drop --format/--rate, or "
                        + "record WAV and run roomtap export --multichannel", command: "record")
            }
            guard AudioFileFormat.fromExtension(of: file) != .opus else {
                throw UsageError(
                    description: "--multichannel \(file): a multichannel file is WAV or FLAC; name it .wav or .flac",
                    command: "record")
            }
        }
    }

    /// How the room renders: --threads, --channels.
    private static func parseRendering(_ args: ParsedArguments, into options: inout Options) throws(UsageError) {
        options.threads = try integer(args.value("--threads"), "--threads", in: 1...Room.maxRenderThreads)
        if let channels = args.value("--channels") {
            guard channels == "1" || channels == "2" else {
                throw UsageError(description: "--channels must be 1 or 2, not '\(channels)'", command: "record")
            }
            options.channels = Int(channels)!
        }
    }

    /// The live room's network: --listen, --allow, --discover, --join, Sora's audio streaming, --sdp/--room, --srtp, the jitter buffer, the record delay, --duration, --leave-after.
    private static func parseNetwork(
        _ args: ParsedArguments, environment: [String: String], into options: inout Options
    ) throws(UsageError) {
        for text in args.values("--listen") {
            var parsed = ListenAddress(text)
            if parsed == nil { parsed = try resolvedListenAddress(text) }
            guard let address = parsed else {
                throw UsageError(
                    description: "--listen '\(text)' must be HOST:PORT with an address or host name and a port "
                        + "0-65535 (e.g. 127.0.0.1:25000, localhost:25000, [::1]:25000, :25000; port 0: the kernel "
                        + "picks a free one)",
                    command: "record")
            }
            options.listen.append(address)
        }
        for text in args.values("--allow") {
            guard let prefix = SourcePrefix(text) else {
                throw UsageError(
                    description: "--allow '\(text)' must be an IP address or network ADDR[/PREFIX] "
                        + "(e.g. 192.0.2.7, 10.0.0.0/8, 2001:db8::/32)", command: "record")
            }
            options.allow.append(prefix)
        }
        options.discover = args.flag("--discover")
        try parseJoin(args, environment: environment, into: &options)
        try parseSoraStreaming(args, into: &options)
        options.sdp = args.value("--sdp")
        options.roomFile = args.value("--room")
        if options.sdp != nil && options.roomFile != nil {
            throw UsageError(description: "give --sdp or --room, not both", command: "record")
        }
        for text in args.values("--srtp") {
            guard options.sdp != nil || options.roomFile != nil else {
                throw UsageError(
                    description: "--srtp keys a participant of --sdp or --room; give the room description too",
                    command: "record")
            }
            let key = try SRTPKeyOption.parse(text, environment: environment)
            guard !options.srtpKeys.contains(where: { $0.name == key.name }) else {
                throw UsageError(description: "--srtp \(key.name) is given twice; give one key", command: "record")
            }
            options.srtpKeys.append(key)
        }
        options.maxTracks = try integer(args.value("--max-tracks"), "--max-tracks", in: 1...1024) ?? 64
        options.jitterMilliseconds = try integer(args.value("--jitter-ms"), "--jitter-ms", in: 10...1000) ?? 60
        options.jitterMaxMilliseconds =
            try integer(args.value("--jitter-max-ms"), "--jitter-max-ms", in: 10...2000)
            ?? max(200, options.jitterMilliseconds)
        guard options.jitterMaxMilliseconds >= options.jitterMilliseconds else {
            throw UsageError(
                description: "--jitter-max-ms (\(options.jitterMaxMilliseconds)) must be at least --jitter-ms "
                    + "(\(options.jitterMilliseconds))", command: "record")
        }
        options.jitterFixed = args.flag("--jitter-fixed")
        options.recordDelayMilliseconds =
            try integer(args.value("--record-delay"), "--record-delay", in: 20...5000) ?? 2000
        guard options.recordDelayMilliseconds >= options.jitterMilliseconds else {
            throw UsageError(
                description: "--record-delay (\(options.recordDelayMilliseconds)) must be at least --jitter-ms "
                    + "(\(options.jitterMilliseconds)): the files wait at least as long as playback",
                command: "record")
        }
        if let text = args.value("--duration") {
            guard let seconds = Double(text), seconds.isFinite, seconds > 0, seconds <= 7 * 86_400 else {
                throw UsageError(
                    description: "--duration must be a number of seconds > 0, not '\(text)'", command: "record")
            }
            options.duration = seconds
        }
        if let text = args.value("--leave-after") {
            guard let seconds = Double(text), seconds.isFinite, seconds >= 0.1, seconds <= 3600 else {
                throw UsageError(
                    description: "--leave-after must be seconds between 0.1 and 3600, not '\(text)'", command: "record")
            }
            options.leaveAfter = seconds
        }
    }

    /// The room clock's scheduling: --realtime, --realtime-priority.
    private static func parseClock(_ args: ParsedArguments, into options: inout Options) throws(UsageError) {
        options.realtime = args.flag("--realtime")
        if let text = args.value("--realtime-priority") {
            guard let level = Int32(text), (1...99).contains(level) else {
                throw UsageError(
                    description: "--realtime-priority must be a SCHED_FIFO priority from 1 to 99, not '\(text)'",
                    command: "record")
            }
            options.realtimePriority = level
        }
    }

    /// What runs beside the room: --control, --agent and its options, --transcribe.
    private static func parseCompanions(_ args: ParsedArguments, into options: inout Options) throws(UsageError) {
        options.control = args.value("--control")
        options.agent = try AgentOptions.parse(args)
        options.transcribe = try TranscribeOptions.parse(args)
    }

    /// Sound devices: --play, --play-track, --mic, --mic-name.
    private static func parseDevices(_ args: ParsedArguments, into options: inout Options) throws(UsageError) {
        options.play = args.value("--play")
        options.playTrack = args.value("--play-track")
        if options.playTrack != nil && options.play == nil { options.play = "default" }
        options.mic = args.value("--mic")
        for (option, device) in [("--play", options.play), ("--mic", options.mic)] where device?.isEmpty == true {
            throw UsageError(
                description: "\(option)= names no device; give \(option)=DEVICE, or \(option) alone for the "
                    + "default device", command: "record")
        }
        if let name = args.value("--mic-name") {
            guard options.mic != nil else {
                throw UsageError(description: "--mic-name names the --mic track; give --mic too", command: "record")
            }
            options.micName = name
        }
    }

    /// Refuses track names that collide: a name given twice, two names that differ only in case
    /// (a case-insensitive file system would take their files for one), and the names roomtap
    /// gives its own tracks when it makes them (`mix` with a mix, `agent` and `agent-hears` with
    /// --agent). Covers the --file names and the --mic-name.
    static func checkNames(_ options: Options) throws(UsageError) {
        var named = options.files.map { (option: "--file", label: "--file name '\($0.name)'", name: $0.name) }
        if options.mic != nil {
            named.append((option: "--mic-name", label: "--mic-name '\(options.micName)'", name: options.micName))
        }
        var reserved: [String: String] = [:]
        if options.needsMix { reserved["mix"] = "roomtap's own mix track (with --mix or --play)" }
        if options.agent != nil {
            for name in ["agent", "agent-hears"] { reserved[name] = "roomtap's own agent tracks (with --agent)" }
        }
        var seen: [String: (option: String, label: String, name: String)] = [:]
        for entry in named {
            // The room file's rule (TrackName): a name is shown, logged and made a file.
            if let problem = TrackName.problem(entry.name) {
                throw UsageError(
                    description: "\(entry.option) name '\(TrackName.printable(entry.name))' \(problem); give the track "
                        + "a name of \(TrackName.rule)", command: "record")
            }
            let key = TrackName.key(entry.name)
            if let owner = reserved[key] {
                throw UsageError(
                    description: "\(entry.label) is taken by \(owner); give the track another name", command: "record")
            }
            if let earlier = seen[key] {
                let both = earlier.option == entry.option
                if earlier.name == entry.name {
                    throw UsageError(
                        description: (both
                            ? "\(entry.label) is given twice" : "\(entry.label) is also \(earlier.label)")
                            + "; give each track a name of its own", command: "record")
                }
                let pair =
                    both
                    ? "\(entry.option) names '\(earlier.name)' and '\(entry.name)'"
                    : "\(earlier.label) and \(entry.label)"
                throw UsageError(
                    description: "\(pair) differ only in case (a file system may take them for one file); "
                        + "give each track a name of its own", command: "record")
            }
            seen[key] = entry
        }
    }

    /// `--listen NAME:PORT` with a host name (`localhost:25000`), as the room file accepts: the
    /// name is resolved once, now (getaddrinfo), to its first IPv4 address, else its first IPv6
    /// one. Nil when `text` is not NAME:PORT; a name that does not resolve is a usage error.
    private static func resolvedListenAddress(_ text: String) throws(UsageError) -> ListenAddress? {
        guard let colon = text.lastIndex(of: ":"), let port = UInt16(text[text.index(after: colon)...]) else {
            return nil
        }
        let name = String(text[..<colon])
        let hostName = name.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "-" || $0 == "."
        }
        guard !name.isEmpty, name.count <= 253, hostName else { return nil }
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(name, nil, &hints, &found)
        guard status == 0, let first = found else {
            throw UsageError(
                description: "--listen '\(text)': the host name \(name) does not resolve "
                    + "(\(String(cString: gai_strerror(status)))); give an address such as 127.0.0.1:\(port)",
                command: "record")
        }
        defer { freeaddrinfo(first) }
        var numeric: [(family: Int32, host: String)] = []
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let info = entry {
            var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            if getnameinfo(
                info.pointee.ai_addr, info.pointee.ai_addrlen, &host, socklen_t(host.count), nil, 0, NI_NUMERICHOST)
                == 0
            {
                numeric.append((info.pointee.ai_family, String(cString: host)))
            }
            entry = info.pointee.ai_next
        }
        guard let chosen = numeric.first(where: { $0.family == AF_INET }) ?? numeric.first else { return nil }
        return ListenAddress(host: chosen.host, port: port)
    }

    private static func integer(_ text: String?, _ name: String, in range: ClosedRange<Int>) throws(UsageError) -> Int?
    {
        guard let text else { return nil }
        guard let value = Int(text), range.contains(value) else {
            throw UsageError(
                description:
                    "\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound), not '\(text)'",
                command: "record")
        }
        return value
    }

    /// `roomtap record`: the ``Recorder``'s three steps, with the plan's warnings, the dry run's
    /// plan and the summary (or --json) printed between them.
    static func run(_ arguments: ParsedArguments, _ context: CommandContext) throws {
        let console = context.console
        var options = try parse(arguments, environment: context.environment)
        try options.agent?.readInstructions()
        let recorder = try Recorder(options: options, context: context)
        let plan = recorder.plan
        // A Sora recording's faults: its other tracks are recorded (room.json keeps these too).
        for warning in plan.sora?.warnings ?? [] { console.printWarning(warning) }
        if options.dryRun {
            // As the run would, creating nothing.
            try RoomRecording.checkControl(options, environment: context.environment)
            if options.json {
                console.print(RecordPlanReport.json(plan).jsonText)
            } else {
                console.print(RecordPlanReport.text(plan), terminator: "")
            }
            return
        }
        let result = try recorder.record()
        if options.json {
            console.print(RecordSummaryJSON.render(result).jsonText)
        } else if !options.quiet {
            console.print(result.summaryTable(), terminator: "")
        }
        for warning in result.warnings { console.printWarning(warning) }
        try recorder.finish(result)
    }
}
