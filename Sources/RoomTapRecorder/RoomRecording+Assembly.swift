import Foundation
import RoomTapAll
import RoomTapSync

/// The parts of one recording room besides its tracks: what the options ask for, made in order by
/// ``RoomRecording/assembleParts(room:clock:startTime:)`` before any track joins, then the live
/// room (which adds tracks itself) once the tracks are in.
///
/// Thread: a value. The assembler fills it on the thread that runs the room (nothing else sees it
/// while it is made); then the track handlers hold a copy, and ``AssembledParts`` publishes the
/// finished one once, for what was made before the parts and looks them up later.
struct RoomParts: Sendable {
    let room: Room
    /// The real-time clock of a live room; nil offline (a ``VirtualClock``).
    let clock: RealTimeClock?
    /// The wall-clock time of room sample 0.
    let startTime: Date
    /// The control socket and what acts on its requests (also the live page's).
    var controlServer: ControlServer?
    var controlHandler: RoomControlHandler?
    /// `--http`: the live page's server.
    var liveServer: HTTPServer?
    /// `--metrics`: the recorder's Prometheus endpoint.
    var metricsServer: MetricsServer?
    /// `--play`.
    var playback: ALSAPlayback?
    /// `--mic`.
    var microphone: ALSACapture?
    /// The network's sockets, bound before DIR is touched, and the live room's options for them.
    var sockets: [UDPSocket] = []
    var liveOptions: LiveRoom.Options?
    /// `--join`/`--whep`: the room joined over WebRTC.
    var join: RoomJoin?
    /// `--sora-audio-streaming`: the HTTP/2 receiver of Sora's audio streaming.
    var soraStreaming: SoraAudioStreaming?
    /// transcript.jsonl (--agent, --transcribe), shared by the agent and the speakers' sessions.
    var transcript: TranscriptWriter?
    /// `--transcribe`: every speaker's own transcription session.
    var transcriber: RoomTranscriber?
    /// `--agent`: made before the tracks, attached to the room after them.
    var agent: RoomAgent?
    /// The live room: the last part, made once the files' tracks are in.
    var live: LiveRoom?

    init(room: Room, clock: RealTimeClock?, startTime: Date) {
        self.room = room
        self.clock = clock
        self.startTime = startTime
    }
}

/// The room's parts once assembled, for what was made before them and asks for them later (the
/// control socket's `tracks`, the metrics, a track's outcome, the Recorder's last steps): empty
/// while the room is assembled (and when its assembly failed), then set once and never changed.
///
/// Thread: any. ``publish(_:)`` once, by the thread that assembled the room.
final class AssembledParts: Sendable {
    private let parts = Locked<RoomParts?>(nil)

    /// The finished parts; nil until published.
    var current: RoomParts? { parts.withLock { $0 } }

    /// Publishes the finished parts. Once.
    func publish(_ finished: RoomParts) {
        parts.withLock {
            precondition($0 == nil, "the room's parts are published once")
            $0 = finished
        }
    }
}

extension RoomRecording {
    /// Makes the parts of the room that take no track, in the order the options need them: the
    /// control socket first (a second recorder on the same socket fails here, having made
    /// nothing), the live page and metrics, `--play` and `--mic`, the network's ports and a
    /// WebRTC join and Sora's streaming listener (all before DIR is touched: a port in use must not
    /// cost the earlier recording that --force would replace), then DIR, the transcript, the
    /// speakers' transcription and the agent. On a failure, what was made is closed and the files
    /// this run created are removed, and the one-line error is thrown. The room's thread.
    func assembleParts(room: Room, clock: RealTimeClock?, startTime: Date) throws -> RoomParts {
        let options = plan.options
        var parts = RoomParts(room: room, clock: clock, startTime: startTime)
        func failed(_ error: any Error, line: Bool = true) -> any Error {
            abandon(parts)
            return line ? RuntimeError(description: "\(error)") : error
        }
        if options.usesRealTimeClock || options.control != nil {
            do {
                let (server, handler) = try startControl(room: room, clock: clock, started: startTime)
                parts.controlServer = server
                parts.controlHandler = handler
            } catch { throw failed(error) }
        }
        if let address = options.http, let handler = parts.controlHandler {
            do {
                parts.liveServer = try startLivePage(
                    address: address, handler: handler, control: parts.controlServer, room: room, clock: clock,
                    started: startTime)
            } catch { throw failed(error) }
        }
        if let address = options.metrics, address != options.http {
            do {
                parts.metricsServer = try startMetrics(address: address, room: room, clock: clock, started: startTime)
            } catch { throw failed(error) }
        }
        if let device = options.play {
            do {
                // With --realtime-priority N the device thread runs at N - 1, like the receive
                // thread: below the clock, above everything that does I/O.
                parts.playback = try ALSAPlayback(
                    device: device, channels: options.channels,
                    realtimePriority: room.realtimePriority.map { max(1, $0 - 1) })
            } catch { throw failed(error) }
        }
        if let device = options.mic {
            do { parts.microphone = try ALSACapture(device: device, channels: options.channels) } catch {
                throw failed(error)
            }
        }
        if options.hasNetwork, clock != nil {
            let liveOptions = liveRoomOptions()
            do { parts.sockets = try LiveRoom.bind(liveOptions) } catch { throw failed(error) }
            parts.liveOptions = liveOptions
        }
        do { parts.join = try connectJoin() } catch { throw failed(error) }
        do { parts.soraStreaming = try bindSoraStreaming() } catch { throw failed(error) }
        // The control socket, the ports, --play and --mic are open (the plan checked the API key):
        // only now are DIR made and, with --force, the earlier recording removed, just before the
        // first file.
        do { try plan.prepareOutputs() } catch { throw failed(error, line: false) }
        if let transcriptPath = plan.transcriptPath {
            do {
                parts.transcript = try TranscriptWriter(
                    path: transcriptPath,
                    recordLagSamples: Int64(options.timing.recordDelayFrames * AudioFrame.samplesPerChannel))
                shared.withLock { $0.created.append(transcriptPath) }
            } catch { throw failed(error) }
        }
        // Per-speaker transcription before any speaker: each track added from now on (files,
        // live participants whenever they appear) gets a session in the add-track handler.
        if let transcribeOptions = options.transcribe, let writer = parts.transcript {
            do {
                parts.transcriber = try RoomTranscriber(
                    options: transcribeOptions, transcript: writer, environment: plan.context.environment,
                    console: plan.context.console)
            } catch { throw failed(error, line: false) }
        }
        // The agent before the tracks, so that the add-track handler can give it each track; it
        // hears none until ``RoomAgent/attach(to:humans:)`` once the files' tracks are in.
        if let agentOptions = options.agent, let writer = parts.transcript {
            do {
                let published = try publishAgentVoice(agentOptions, join: parts.join)
                let agent = try RoomAgent(
                    options: agentOptions, transcript: writer, environment: plan.context.environment,
                    console: plan.context.console,
                    humanLines: options.transcribe == nil, publish: published)
                parts.controlHandler?.setAgentHandler({ agent.handle($0) }, status: { agent.status })
                agent.tools.setHandler(parts.controlHandler)
                parts.agent = agent
            } catch { throw failed(error, line: false) }
        }
        return parts
    }

    /// Adds the room's tracks (the mix first, so every track added later joins it; each input
    /// file; the microphone; the agent's voice and hearing) and then the live room, whose
    /// described participants are tracks from the start. The room's track handlers must be
    /// installed first: they route each track as it is added. On a failure, the one-line error is
    /// thrown (the caller abandons the room). The room's thread.
    func addTracks(to parts: inout RoomParts) throws {
        let options = plan.options
        let room = parts.room
        if options.needsMix {
            shared.withLock { $0.mixPath = plan.mixPath }
            room.addMix(name: "mix", inputs: [], channels: options.channels)
        }
        for input in plan.inputs {
            let source: any FrameSource
            do { source = try input.frameSource(channels: options.channels) } catch {
                throw RuntimeError(description: "\(error)")
            }
            shared.withLock {
                $0.pathsBySource[ObjectIdentifier(source)] = input.wavPath
                $0.inputsBySource[ObjectIdentifier(source)] = input.spec.path
            }
            room.addTrack(name: input.spec.name, source: source, role: .speakerFromFile)
        }
        if let microphone = parts.microphone {
            room.addTrack(name: options.micName, source: microphone, role: .speakerFromMicrophone)
        }
        parts.agent?.attach(to: room, humans: room.tracks.filter(\.role.isSpeaker))
        if let liveOptions = parts.liveOptions, let clock = parts.clock {
            do {
                let live = try LiveRoom(room: room, clock: clock, options: liveOptions, sockets: parts.sockets)
                parts.live = live
                parts.join?.attach(to: live)
                attachSoraStreaming(parts.soraStreaming, transcript: parts.transcript, to: live)
            } catch { throw RuntimeError(description: error.description) }
        }
        if let firstError = shared.withLock({ $0.errors.first }) {
            throw RuntimeError(description: firstError.error)
        }
    }

    /// The live room's options from the command line's.
    private func liveRoomOptions() -> LiveRoom.Options {
        let options = plan.options
        var o = LiveRoom.Options()
        o.listen = options.listen
        o.description = plan.description
        o.maxTracks = options.maxTracks
        o.jitterMilliseconds = options.jitterMilliseconds
        o.jitterMaxMilliseconds = options.jitterMaxMilliseconds
        o.jitterFixed = options.jitterFixed
        o.recordDelayMilliseconds = options.recordDelayMilliseconds
        o.livePlayout = options.hasLiveConsumer
        o.channels = options.channels
        o.leaveAfter = options.leaveAfter
        o.allow = options.allow
        o.discover = options.discover
        return o
    }

    /// Set-up failed, or the room could not start: closes what was made and deletes the files this
    /// run created, so nothing is left half-made. Idempotent for each part.
    func abandon(_ parts: RoomParts) {
        parts.controlHandler?.noteStopping()  // no track command waits for a set-up that ended
        parts.transcriber?.finish(timeout: .zero)
        parts.transcript?.close()
        parts.controlServer?.stop()
        parts.metricsServer?.stop()
        parts.liveServer?.stop()
        parts.join?.stop()
        parts.soraStreaming?.stop()
        parts.live?.stop()
        parts.microphone?.close()
        try? parts.playback?.close()
        for socket in parts.sockets { socket.close() }  // idempotent: also once the live room owns them
        parts.room.stop()
        parts.room.waitUntilFinished()
        for path in shared.withLock({ $0.created }) { unlink(path) }
    }
}
