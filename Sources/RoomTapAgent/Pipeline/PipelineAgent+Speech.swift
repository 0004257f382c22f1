import Foundation
import RoomTapCore
import RoomTapSync

/// The `roomtap.pipeline.speech` thread: the only writer of ``PipelineAgent/voice``. It speaks the
/// reply's sentences in order, follows the playout to the end of the reply, and on a barge-in
/// flushes the voice and keeps what was heard.
extension PipelineAgent {
    private enum SpeechStep {
        case speak(Sentence)
        case cut(Reply)
        case finish(Reply)
        case wait(Duration)
        case exit(Reply?)
    }

    func speechLoop() {
        let clock = configuration.clock
        while true {
            let step = state.withLock { s -> SpeechStep in
                guard var reply = s.reply else {
                    s.sentences.removeAll()
                    return s.stopRequested ? .exit(nil) : .wait(.seconds(1))
                }
                if s.stopRequested {
                    s.reply = nil
                    return .exit(reply)
                }
                _ = talkedOver(&reply)
                s.reply = reply
                if generation.load(ordering: .acquiring) != reply.generation {
                    s.reply = nil
                    s.sentences.removeAll()
                    return .cut(reply)
                }
                if let i = s.sentences.firstIndex(where: { $0.generation == reply.generation }) {
                    return .speak(s.sentences.remove(at: i))
                }
                if reply.chatDone && voice.playPosition >= (reply.spoken.last?.end ?? 0) {
                    s.reply = nil
                    return .finish(reply)
                }
                return .wait(.milliseconds(10))
            }
            switch step {
            case .speak(let sentence): speak(sentence)
            case .cut(let reply):
                let stop = voice.flush()
                upsampler.reset()
                let interrupted = stop < (reply.spoken.last?.end ?? 0) || !reply.chatDone
                finish(reply, stop: stop, interrupted: interrupted)
            case .finish(let reply): finish(reply, stop: voice.writePosition, interrupted: false)
            case .wait(let duration): _ = clock.wait(speechWake, until: clock.now + duration)
            case .exit(let reply):
                if let reply { finish(reply, stop: voice.writePosition, interrupted: false) }
                return
            }
        }
    }

    /// Barge-in by level: talk that began while the reply's audio plays cancels it (under the
    /// lock; moves the mark along while nothing plays). True when it cancelled.
    private func talkedOver(_ reply: inout Reply) -> Bool {
        let onsets = talkOver.onsets
        guard configuration.bargeIn > .zero, isListening, voice.isPlaying else {
            reply.talkMark = onsets
            return false
        }
        guard onsets > reply.talkMark else { return false }
        reply.talkMark = onsets
        _ = generation.compareExchange(
            expected: reply.generation, desired: reply.generation + 1, ordering: .acquiringAndReleasing)
        return true
    }

    /// Streams one sentence's speech into the voice (resampled to 48 kHz), then its filter tail.
    private func speak(_ sentence: Sentence) {
        let start = voice.writePosition
        var pushed = 0
        var readyNoted = false
        let generation = sentence.generation
        do throws(PipelineFailure) {
            try configuration.speech.speak(
                sentence.text,
                isCancelled: { [self] in
                    state.withLock { s in
                        if var reply = s.reply, reply.generation == generation {
                            _ = talkedOver(&reply)
                            s.reply = reply
                        }
                    }
                    return self.generation.load(ordering: .acquiring) != generation
                },
                onSamples: { [self] samples in
                    var i = 0
                    while i < samples.count {
                        let n = min(upsampler.maxInputSamples, samples.count - i)
                        pushed += voice.push(upsampler.process(UnsafeBufferPointer(rebasing: samples[i..<(i + n)])))
                        i += n
                    }
                    if !readyNoted && pushed >= voice.prebufferSamples {
                        readyNoted = true
                        audioReady(generation, at: start)
                    }
                })
        } catch {
            switch error.action {
            case .cancelled: break
            case .fatal: fail(error.message)
            default:
                note(error, retry: false)
                configuration.log("\(error.message); a sentence of the reply is not spoken")
            }
        }
        while true {
            let tail = upsampler.flush()
            if tail.isEmpty { break }
            pushed += voice.push(tail)
        }
        voice.markComplete()
        let end = voice.writePosition
        if pushed > 0 && !readyNoted { audioReady(generation, at: start) }
        state.withLock { s in
            guard s.reply?.generation == generation, end > start else { return }
            s.reply?.spoken.append((sentence.text, start, end))
        }
    }

    /// The reply's first audio is ready to play (a prebuffer's worth queued, or a whole sentence).
    private func audioReady(_ generation: UInt64, at position: Int64) {
        let now = configuration.clock.now
        state.withLock { s in
            guard s.reply?.generation == generation, s.reply?.firstAudioAt == nil else { return }
            s.reply?.firstAudioAt = now
            s.reply?.firstPosition = position
        }
    }

    /// The reply is over (played out, cut at `stop`, or the agent stopping): the history gets what
    /// was said aloud, the transcript a line, the statistics its numbers.
    private func finish(_ reply: Reply, stop: Int64, interrupted: Bool) {
        let said = interrupted ? Self.saidAloud(reply.spoken, stop: stop) : reply.generated
        let limit = 10_000
        state.withLock { s in
            if !said.trimmingCharacters(in: .whitespaces).isEmpty {
                s.history.append(ChatMessage(role: .assistant, content: said))
            }
            guard reply.firstPosition != nil else { return }
            s.stats.replies += 1
            if interrupted { s.stats.bargeIns += 1 }
            if let at = reply.firstAudioAt {
                s.turnLatencies.append((at - reply.turnArrival).milliseconds)
                s.answerLatencies.append((at - reply.answeredAt).milliseconds)
                if s.turnLatencies.count > limit { s.turnLatencies.removeFirst(s.turnLatencies.count - limit) }
                if s.answerLatencies.count > limit { s.answerLatencies.removeFirst(s.answerLatencies.count - limit) }
            }
        }
        wake.signal()
        if let first = reply.firstPosition, let transcript = configuration.transcript {
            let text = reply.generated.isEmpty ? reply.spoken.map(\.text).joined(separator: " ") : reply.generated
            transcript.write(
                startSample: voice.roomSample(atPosition: first), endSample: voice.roomSample(atPosition: stop),
                speaker: configuration.speakerName, text: text.trimmingCharacters(in: .whitespacesAndNewlines),
                interrupted: interrupted)
        }
        if reply.leaveAfter {
            configuration.log("left the room (leave_room); the recording goes on")
            state.withLock { $0.stopRequested = true }
            wake.signal()
        }
    }

    /// The words of `spoken` sentences heard before ring position `stop`: whole sentences, and of
    /// the one cut, the share of its words its played audio covers (with `…`).
    static func saidAloud(_ spoken: [(text: String, start: Int64, end: Int64)], stop: Int64) -> String {
        var parts: [String] = []
        for sentence in spoken {
            if sentence.end <= stop {
                parts.append(sentence.text)
            } else if sentence.start < stop {
                let words = sentence.text.split(separator: " ")
                let share = Double(stop - sentence.start) / Double(max(1, sentence.end - sentence.start))
                let kept = Int(Double(words.count) * share)
                if kept > 0 { parts.append(words.prefix(kept).joined(separator: " ") + "…") }
            }
        }
        return parts.joined(separator: " ")
    }
}
