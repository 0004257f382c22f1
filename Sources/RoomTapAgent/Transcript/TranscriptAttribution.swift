/// What goes into transcript.jsonl and what the model is reminded of: the agent's reply items
/// placed on the voice track (a line is written when its audio has played out, or where a
/// barge-in cut it, then marked `interrupted`), the humans' utterances placed by the server's VAD
/// offsets, and the recent lines replayed into a new session as one summary.
///
/// Thread: a value, kept under the agent's lock; it decides lines, the agent writes them after.
package struct TranscriptAttribution {
    /// One assistant item's audio on the voice track.
    package struct VoiceItem {
        let id: String
        let responseID: String
        let contentIndex: Int
        /// The session (generation) it came from: only its own session may truncate it.
        let session: Int
        /// Voice ring position of its first sample (48 kHz).
        let start: Int64
        /// 24 kHz samples received.
        var received: Int64 = 0
        var audioDone = false
        var transcript: String?
        /// Ring position where a barge-in cut it.
        var stoppedAt: Int64?
        var written = false
        var end: Int64 { start + 2 * received }
    }

    let contextLines: Int
    private(set) var items: [VoiceItem] = []
    private var partial: [String: String] = [:]
    private var humanSpeech: [String: (start: Int64?, end: Int64?)] = [:]
    private var recent: [(agent: Bool, text: String)] = []

    package init(contextLines: Int) { self.contextLines = contextLines }

    /// How far a truncate stays under the audio received of an item, in ms. The service refuses
    /// a truncate past the item's audio ("already shorter than"), and its item may be a few ms
    /// shorter than the samples that reached us (its own rounding of the chunks to ms); a cut
    /// within this margin of the end claims the end less the margin, so no truncate ever claims
    /// more than the server has.
    package static let truncationMarginMs: Int64 = 20

    // MARK: The agent's items

    /// Audio of `itemID` arrived; false when it is to be dropped (the item was cut). `start` is
    /// where a new item begins on the voice ring.
    package mutating func receive(
        itemID: String, responseID: String, contentIndex: Int, session: Int, samples: Int,
        start: @autoclosure () -> Int64
    ) -> Bool {
        if let last = items.last, last.id == itemID {
            guard last.stoppedAt == nil else { return false }
        } else {
            guard !items.contains(where: { $0.id == itemID }) else { return false }
            items.append(
                VoiceItem(
                    id: itemID, responseID: responseID, contentIndex: contentIndex, session: session, start: start()))
            if items.count > 64 { items.removeFirst(items.count - 64) }
        }
        items[items.count - 1].received += Int64(samples)
        return true
    }

    mutating func audioDone(itemID: String) {
        if let i = items.lastIndex(where: { $0.id == itemID }) { items[i].audioDone = true }
    }

    /// What the server is told of an item a barge-in cut.
    package enum Cut: Equatable {
        /// `conversation.item.truncate` at the audio really played, in ms.
        case truncate(itemID: String, contentIndex: Int, audioEndMs: Int)
        /// `conversation.item.delete`: nothing of it played (a truncate to 0 ms is refused for an
        /// item without audio, and says nothing the model should remember).
        case delete(itemID: String)
    }

    /// Playback was flushed at ring position `stoppedAt`: every item not fully played is cut
    /// there; returns what to tell the server of the items of `session`: those that had started
    /// playing are truncated at the audio really played, in ms, clamped to what was received;
    /// those nothing of which played are deleted. The truncation point stays
    /// ``truncationMarginMs`` under what was received; an item the margin leaves nothing
    /// of is deleted.
    package mutating func cut(at stoppedAt: Int64, session: Int) -> [Cut] {
        var cuts: [Cut] = []
        for i in items.indices where items[i].stoppedAt == nil && items[i].end > stoppedAt {
            items[i].stoppedAt = max(stoppedAt, items[i].start)
            guard items[i].session == session else { continue }
            let played = stoppedAt - items[i].start
            let endMs = min(played / 48, items[i].received / 24 - Self.truncationMarginMs)
            guard endMs > 0 else {
                cuts.append(.delete(itemID: items[i].id))
                continue
            }
            cuts.append(.truncate(itemID: items[i].id, contentIndex: items[i].contentIndex, audioEndMs: Int(endMs)))
        }
        return cuts
    }

    /// The reply in progress was cancelled while nothing of it plays: its item takes no more audio.
    mutating func cutLast(at position: Int64) {
        if let last = items.indices.last, items[last].stoppedAt == nil {
            items[last].stoppedAt = max(position, items[last].start)
        }
    }

    mutating func transcriptDelta(itemID: String, _ delta: String) {
        if partial.count >= 64 { partial.removeAll() }
        if partial[itemID, default: ""].utf8.count < 65_536 { partial[itemID, default: ""] += delta }
    }

    /// The item's whole transcript (the service sends it also for a cancelled item: all it
    /// generated, not what was heard).
    mutating func transcriptDone(itemID: String, _ transcript: String) {
        partial[itemID] = nil
        if let i = items.lastIndex(where: { $0.id == itemID }) { items[i].transcript = transcript }
    }

    /// `response.done`: items of the response without a transcript keep what the deltas said.
    mutating func responseDone(_ responseID: String) {
        for i in items.indices where items[i].responseID == responseID && items[i].transcript == nil {
            items[i].transcript = partial[items[i].id] ?? ""
        }
        partial = partial.filter { entry in items.contains { $0.id == entry.key && $0.responseID != responseID } }
    }

    /// The agent lines due: items that have played out (`played`: the voice ring's play
    /// position) or were cut; with `final`, all. `room` maps a ring position to a room sample.
    mutating func agentLines(played: Int64, final: Bool, room: (Int64) -> Int64) -> [PendingTranscriptLine] {
        var lines: [PendingTranscriptLine] = []
        for i in items.indices where !items[i].written {
            let item = items[i]
            guard let text = item.transcript ?? (final ? partial[item.id] : nil) else {
                if final { items[i].written = true }
                continue
            }
            let end: Int64
            if let stop = item.stoppedAt {
                end = stop
            } else if item.audioDone && played >= item.end || final {
                end = item.end
            } else {
                continue
            }
            items[i].written = true
            guard end > item.start, !text.isEmpty else { continue }
            lines.append(
                PendingTranscriptLine(
                    start: room(item.start), end: room(end), speaker: "agent", text: text,
                    interrupted: item.stoppedAt != nil))
            remember(agent: true, text)
        }
        return lines
    }

    /// True while a line waits only for its audio to play out (`played`: the voice ring's play
    /// position): the agent wants to look again when it will have.
    func waitsForPlayout(played: Int64) -> Bool {
        items.contains { !$0.written && $0.stoppedAt == nil && $0.audioDone && $0.transcript != nil && played < $0.end }
    }

    // MARK: The humans

    mutating func speechStarted(itemID: String, at room: Int64?) {
        if humanSpeech.count >= 256 { humanSpeech.removeAll() }  // no transcription: stay bounded
        humanSpeech[itemID] = (room, nil)
    }

    mutating func speechStopped(itemID: String, at room: Int64?) {
        humanSpeech[itemID] = (humanSpeech[itemID]?.start, room)
    }

    /// Utterances whose speech started and whose transcription has not come yet.
    var pendingUtterances: Int { humanSpeech.count }

    /// The room span of utterance `itemID` (forgotten after), defaulting to `now`.
    mutating func utterance(itemID: String, now: Int64) -> (start: Int64, end: Int64) {
        let span = humanSpeech.removeValue(forKey: itemID)
        let start = span?.start ?? now
        return (start, span?.end ?? max(start, now))
    }

    // MARK: Context

    mutating func remember(agent: Bool, _ text: String) {
        recent.append((agent, text))
        if recent.count > contextLines { recent.removeFirst(recent.count - contextLines) }
    }

    /// The recent lines as one system message for a new session (nil when there are none). One
    /// system item, not assistant text items: replayed assistant text would lead the model to
    /// answer in text.
    var contextSummary: String? {
        guard !recent.isEmpty else { return nil }
        return "The conversation so far in this call (you are \"agent\"; the connection was renewed, continue "
            + "naturally and do not repeat yourself):\n"
            + recent.map { $0.agent ? "agent: \($0.text)" : $0.text }.joined(separator: "\n")
    }
}
