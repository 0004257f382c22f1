import Foundation
import RoomTapAll
import RoomTapSync
import Synchronization

/// The commands of the control socket (docs/CONTROL-PROTOCOL.md) acting on a running room: who the
/// recorder is (`hello`), track listing and status, mute/unmute/volume/solo/unsolo, `stop`, and the
/// agent's commands. What each command asks is a ``ControlCommand``; this is what it does here.
///
/// Thread: `handle` runs on the control server's thread (and the live page's, and the agent's
/// tools thread). It only sets atomics on the tracks and reads counters, so it returns at once
/// and never waits: not on the room clock, not for the room's set-up (a command about tracks
/// before it is answered `starting`, see ``SetUpGate``). A change takes effect at the next tick;
/// the reply's `room_time` is the room time of that tick (the ramp starts there and lasts one
/// frame).
final class RoomControlHandler: ControlHandler {
    /// What the recorder knows about a track beyond the room: where it comes from and how it fares.
    struct TrackDetails: Sendable {
        var source: String
        var isLive: Bool
        var lossPercent: Double?
        /// RTP packets received so far (a network source), nil otherwise.
        var packets: Int? = nil
        /// Why the track's file stopped being written (a full disk), nil while it is written.
        var fileError: String? = nil
    }

    /// The recorder's numbers for `status`.
    struct StatusDetails: Sendable {
        var sinks: Int
        var droppedFrames: Int
        var lateTicks: Int
        var files: [String]
        /// `record --upload`: the segments sent so far (``LiveUpload/status``); nil without it.
        var upload: LiveUpload.Status? = nil
        /// Files that could not be written (a full disk), as room.json's `errors` will list them.
        var errors: [RoomReport.Failure] = []
    }

    let room: Room
    let controlPath: String
    /// The output directory, absolute.
    let directory: String
    /// When the recorder started (wall clock, for `hello`).
    let started: Date
    let log: ControlLog
    private let details: @Sendable (AudioTrack) -> TrackDetails
    private let status: @Sendable () -> StatusDetails
    private let publisher = Locked<(@Sendable (JSONValue) -> Void)?>(nil)
    private let agentHandler = Locked<(@Sendable (ControlCommand.AgentAction) -> ControlResponse)?>(nil)
    private let agentStatus = Locked<(@Sendable () -> JSONValue)?>(nil)
    private let stopAction = Locked<(@Sendable () -> Void)?>(nil)
    private let stopping = Atomic<Bool>(false)
    private let startedMonotonic = MonotonicClock.now
    /// Opened once the room is set up (or given up): until then track commands answer `starting`.
    private let setUp = SetUpGate()

    init(
        room: Room, controlPath: String, directory: String, started: Date, log: ControlLog,
        details: @escaping @Sendable (AudioTrack) -> TrackDetails, status: @escaping @Sendable () -> StatusDetails
    ) {
        self.room = room
        self.controlPath = controlPath
        self.directory = directory
        self.started = started
        self.log = log
        self.details = details
        self.status = status
    }

    /// Where events for watchers go (the server's publish). Any thread.
    func setPublisher(_ publish: @escaping @Sendable (JSONValue) -> Void) { publisher.withLock { $0 = publish } }

    /// Who answers `agent` requests (nil: no agent in this room). Any thread.
    /// `status` is the agent's part of the `status` answer (its `agent` object).
    func setAgentHandler(
        _ handler: (@Sendable (ControlCommand.AgentAction) -> ControlResponse)?,
        status: (@Sendable () -> JSONValue)? = nil
    ) {
        agentHandler.withLock { $0 = handler }
        agentStatus.withLock { $0 = status }
    }

    /// What `stop` does: the same as SIGINT (the room stops, draining a network room's record
    /// delay, and the recorder finalises its files). Until it is set (the room has not started),
    /// `stop` answers `starting`. Any thread.
    /// Setting it also ends the set-up: every track the room starts with exists, and track
    /// commands are served from now on (before, they are answered `starting`).
    func setStopAction(_ action: @escaping @Sendable () -> Void) {
        stopAction.withLock { $0 = action }
        setUp.open()
    }

    /// Records that the room is ending (asked to stop, or its end reached): `hello` then says
    /// `stopping`. Idempotent; any thread.
    func noteStopping() {
        stopping.store(true, ordering: .relaxed)
        setUp.open()
    }

    /// Sends an event to every watcher. Any thread.
    func publish(_ event: JSONValue) { publisher.withLock { $0 }?(event) }

    /// Server thread: the request read as a ``ControlCommand`` (its refusal when it is none),
    /// then ``handle(_:by:)``.
    func handle(_ request: ControlRequest) -> ControlResponse {
        do throws(ControlFailure) {
            return handle(try ControlCommand(request), by: nil)
        } catch { return .failure(error) }
    }

    /// Does `command`. `by` names who asked when it is not a control client (`agent`): it goes into
    /// the control log (room.json `controls`) and the `control_changed` event. The live page and
    /// the agent's room tools come this way, so they act exactly as `roomtap mute NAME` does.
    ///
    /// While the recorder is still setting up (the socket exists from the start, so that a second
    /// recorder on it fails before making anything), a command about tracks (`tracks`, `mute`,
    /// `unmute`, `volume`, `solo`, `unsolo`) and `stop` are answered `starting` at once; the
    /// `roomtap` verbs ask again until the room's first tracks exist, so `volume alice 0.5` sent as
    /// soon as the socket appears finds alice. Any thread but the room clock's; never waits.
    func handle(_ command: ControlCommand, by: String?) -> ControlResponse {
        if let refusal = setUp.refusal(of: command) { return .failure(refusal) }
        switch command {
        case .ping: return .ok(.object(["pong": .bool(true)]))
        case .hello: return .ok(helloObject())
        case .stop: return stop()
        case .tracks: return .ok(trackList())
        case .status: return .ok(statusObject())
        case .mute(let name, let scope): return mute(name, scope: scope, enabled: false, by: by)
        case .unmute(let name, let scope): return mute(name, scope: scope, enabled: true, by: by)
        case .volume(let name, let change, let scope): return volume(name, change: change, scope: scope, by: by)
        case .solo(let names): return solo(names)
        case .unsolo: return unsolo()
        case .watch: return .watch(.object(["watching": .bool(true), "room_time": .number(roomTime)]))
        case .agent(let action):
            guard let handler = agentHandler.withLock({ $0 }) else {
                return .failure(.unavailable, "this room has no agent; start the recorder with --agent")
            }
            return handler(action)
        }
    }

    /// The `tracks` result, `{"tracks": [...]}`, as the room has them now, set up or not (the live
    /// page's first event). Any thread but the room clock's.
    func trackList() -> JSONValue { .object(["tracks": .array(visibleTracks().map(describe))]) }

    /// The `levels` event: level and talking of every track, for watchers (~10 times a second).
    func levelsEvent() -> JSONValue {
        .object([
            "event": .string("levels"), "room_time": .number(roomTime),
            "tracks": .array(
                visibleTracks().map { track in
                    .object([
                        "name": .string(track.name), "level_dbfs": level(track),
                        "talking": .bool(track.meter.isTalking),
                    ])
                }),
        ])
    }

    /// The track as `tracks` and `track_added` show it.
    func describe(_ track: AudioTrack) -> JSONValue {
        let state = track.controls.state
        let more = details(track)
        let soloed = room.soloedTracks.contains { $0 === track }
        var object = Self.controlFields(state)
        object.merge([
            "name": .string(track.name), "id": .number(Double(track.id.rawValue)), "source": .string(more.source),
            "kind": .string(track.role.kind),
            "state": .string(more.isLive ? "live" : "left"), "solo": .bool(soloed),
            "level_dbfs": level(track), "talking": .bool(track.meter.isTalking),
            "loss_percent": more.lossPercent.map { .number(($0 * 100).rounded() / 100) } ?? .null,
            "file_error": more.fileError.map(JSONValue.string) ?? .null,
        ]) { _, new in new }
        let packets: JSONValue = more.packets.map { .number(Double($0)) } ?? .null
        object["packets"] = packets
        object["role"] = .string(track.role.rawValue)
        return .object(object)
    }

    // MARK: - Commands

    private var roomTime: Double { Double(room.position) / Double(AudioFrame.sampleRate) }

    private func visibleTracks() -> [AudioTrack] { room.tracks }

    private func level(_ track: AudioTrack) -> JSONValue {
        track.meter.levelDBFS.map { .number((Double($0) * 10).rounded() / 10) } ?? .null
    }

    private func track(named name: String) throws(ControlFailure) -> AudioTrack {
        let all = room.tracks
        // An undescribed stream also answers to its SSRC as `tracks` shows it (ssrc-000004d2, 0x4d2).
        let canonical = SSRCTrackName.ssrc(in: name).map(SSRCTrackName.name)
        // Names that differ only in case are one name (TrackName): `Alice` finds alice.
        guard
            let track = all.first(where: { $0.name == name }) ?? all.first(where: { $0.name == canonical })
                ?? all.first(where: { TrackName.key($0.name) == TrackName.key(name) })
        else {
            throw ControlFailure(
                .unknownTrack, "no track named '\(name)' (tracks: \(all.map(\.name).joined(separator: ", ")))")
        }
        return track
    }

    /// The scope asked for, or `otherwise` when none was. A derived track (the mix, agent-hears)
    /// has what is heard only: its record is the mix of its inputs' records, so a record scope on
    /// it is refused (taking a speaker off the record is how to change it).
    private func scope(
        _ asked: ControlCommand.Scope?, otherwise: ControlScope, of track: AudioTrack
    ) throws(ControlFailure) -> ControlScope {
        let scope = asked.map(ControlScope.init) ?? otherwise
        if track.isDerived && scope != .heard {
            throw ControlFailure(
                .badRequest,
                "'\(track.name)' is made from the other tracks: its controls change what is heard only, and its "
                    + "file is the mix of the record; to change the record, take a speaker off it "
                    + "(roomtap mute NAME --scope record)")
        }
        return scope
    }

    /// `mute` (default scope heard) and `unmute` (default scope all: every mute of the track is
    /// lifted). Only the mute state of the scope changes; volumes are kept.
    private func mute(
        _ name: String, scope asked: ControlCommand.Scope?, enabled: Bool, by: String?
    ) -> ControlResponse {
        do throws(ControlFailure) {
            let found = try track(named: name)
            let scope = try scope(asked, otherwise: enabled && !found.isDerived ? .all : .heard, of: found)
            found.controls.setEnabled(enabled, scope: scope)
            return changed(found, change: enabled ? "unmute" : "mute", scope: scope, by: by)
        } catch { return .failure(error) }
    }

    /// `volume` (default scope heard): the gain of the scope, set (`volume`) or changed by
    /// `change_db` (relative, atomic on the track's controls); mute state is never touched.
    private func volume(
        _ name: String, change: ControlCommand.VolumeChange, scope asked: ControlCommand.Scope?, by: String?
    ) -> ControlResponse {
        do throws(ControlFailure) {
            let found = try track(named: name)
            let scope = try scope(asked, otherwise: .heard, of: found)
            switch change {
            case .set(let gain): found.controls.setVolume(gain, scope: scope)
            case .change(let decibels):
                // A relative step (`roomtap volume NAME +3dB`), applied here in one atomic step.
                found.controls.changeVolume(byDecibels: Float(decibels), scope: scope)
            }
            return changed(found, change: "volume", scope: scope, by: by)
        } catch { return .failure(error) }
    }

    /// `solo` of `names` (at least one), each found as `tracks` names it.
    private func solo(_ names: [String]) -> ControlResponse {
        let chosen: [AudioTrack]
        do throws(ControlFailure) {
            // A request always names one (ControlCommand checks); a command made in code may not.
            guard !names.isEmpty else { throw ControlFailure(.badRequest, "'solo' needs at least one track name") }
            var found: [AudioTrack] = []
            for name in names { found.append(try track(named: name)) }
            chosen = found
        } catch { return .failure(error) }
        let at = roomTime
        room.solo(chosen)
        log.append(ControlLog.Change(roomTime: at, change: "solo", tracks: names))
        let result: [String: JSONValue] = ["solo": .array(names.map(JSONValue.string)), "room_time": .number(at)]
        announce("solo", result)
        return .ok(.object(result))
    }

    private func unsolo() -> ControlResponse {
        let at = roomTime
        room.unsolo()
        log.append(ControlLog.Change(roomTime: at, change: "unsolo"))
        let result: [String: JSONValue] = ["solo": .array([]), "room_time": .number(at)]
        announce("unsolo", result)
        return .ok(.object(result))
    }

    /// Logs and announces a change of `track`'s controls made in `scope`; the reply: the scope of
    /// this change and the track's whole state after it (heard and record).
    private func changed(_ track: AudioTrack, change: String, scope: ControlScope, by: String?) -> ControlResponse {
        let at = roomTime
        let state = track.controls.state
        log.append(
            ControlLog.Change(
                roomTime: at, change: change, track: track.name, muted: !state.isEnabled, volume: state.volume,
                recordMuted: !state.isRecordEnabled, recordVolume: state.recordVolume, scope: scope.rawValue, by: by))
        var result = Self.controlFields(state)
        result["track"] = .string(track.name)
        result["scope"] = .string(scope.rawValue)
        result["room_time"] = .number(at)
        if let by { result["by"] = .string(by) }
        announce(change, result)
        return .ok(.object(result))
    }

    /// A track's mute and volume, heard (`muted`, `volume`) and recorded (`record_muted`,
    /// `record_volume`).
    static func controlFields(_ state: TrackControlState) -> [String: JSONValue] {
        [
            "muted": .bool(!state.isEnabled), "volume": JSONValue(state.volume),
            "record_muted": .bool(!state.isRecordEnabled), "record_volume": JSONValue(state.recordVolume),
        ]
    }

    /// The `control_changed` event: the change's name and the reply's fields.
    private func announce(_ change: String, _ result: [String: JSONValue]) {
        var event = result
        event["event"] = .string("control_changed")
        event["change"] = .string(change)
        publish(.object(event))
    }

    /// `stop`: starts the stop (once; a repeated `stop` changes nothing) and subscribes the client to
    /// events, so that it hears `stopped` when room.json is written (the connection closes then).
    private func stop() -> ControlResponse {
        guard let action = stopAction.withLock({ $0 }) else { return .failure(.starting) }
        noteStopping()
        action()
        return .watch(
            .object([
                "stopping": .bool(true), "pid": .number(Double(getpid())), "dir": .string(directory),
                "room_time": .number(roomTime),
            ]))
    }

    private func helloObject() -> JSONValue {
        let uptime = MonotonicClock.now - startedMonotonic
        let seconds = Double(uptime.components.seconds) + Double(uptime.components.attoseconds) / 1e18
        return .object([
            "roomtap": .string(CommandDispatch.version), "pid": .number(Double(getpid())), "dir": .string(directory),
            "control": .string(controlPath), "started": .string(Self.iso8601(started)),
            "uptime": .number((seconds * 1000).rounded() / 1000), "room_time": .number(roomTime),
            "tracks": .number(Double(room.tracks.count)),
            "state": .string(state),
        ])
    }

    /// `starting` until the room runs (and `stop` works), `recording`, then `stopping`.
    private var state: String {
        if stopping.load(ordering: .relaxed) { return "stopping" }
        return stopAction.withLock { $0 } == nil ? "starting" : "recording"
    }

    /// Failed files as `[{"file", "error"}]` (status, and the `stopped` event).
    static func errorsJSON(_ errors: [RoomReport.Failure]) -> JSONValue {
        .array(
            errors.map { .object(["file": $0.file.map(JSONValue.string) ?? .null, "error": .string($0.error)]) })
    }

    /// `2026-12-01T00:10:00Z`.
    static func iso8601(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1,
            Int(parts.tm_mday), Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec))
    }

    private func statusObject() -> JSONValue {
        let s = status()
        var object: [String: JSONValue] = [
            "room_time": .number(roomTime), "tracks": .number(Double(room.tracks.count)),
            "sinks": .number(Double(s.sinks)), "dropped_frames": .number(Double(s.droppedFrames)),
            "late_ticks": .number(Double(s.lateTicks)), "files": .array(s.files.map(JSONValue.string)),
            "control": .string(controlPath), "pid": .number(Double(getpid())), "dir": .string(directory),
            "solo": .array(room.soloedTracks.map { .string($0.name) }),
            "errors": Self.errorsJSON(s.errors),
        ]
        if let agent = agentStatus.withLock({ $0 }) { object["agent"] = agent() }
        if let upload = s.upload {
            var value: [String: JSONValue] = [
                "destination": .string(upload.destination), "segments_uploaded": .number(Double(upload.uploaded)),
                "segments_failed": .number(Double(upload.failed)), "segments_waiting": .number(Double(upload.pending)),
            ]
            if let error = upload.lastError { value["last_error"] = .string(error) }
            object["upload"] = .object(value)
        }
        return .object(object)
    }
}

extension ControlScope {
    /// The core's scope of a protocol scope (the same three cases).
    init(_ scope: ControlCommand.Scope) {
        switch scope {
        case .heard: self = .heard
        case .record: self = .record
        case .all: self = .all
        }
    }
}
