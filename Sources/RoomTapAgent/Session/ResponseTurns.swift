/// Turn-taking with the model: whether a response is in progress, whether a human is talking,
/// which responses were cancelled (their late audio is dropped), and the `say` queue.
///
/// Only one response may be in progress (the service refuses a `response.create` during one with
/// `conversation_already_has_active_response`), and a `say` must not talk over a person. So a
/// `say` waits until no response is in progress *and* nobody talks: it is released after
/// `speech_stopped` and `response.done`, never by the `response.done` of a cancelled reply while
/// the person who barged in still talks. A create the service refuses anyway (matched by its
/// `event_id`) is queued again, without making its message twice.
///
/// Thread: a value, kept under the agent's lock.
package struct ResponseTurns {
    /// A `say` waiting its turn.
    struct Say {
        var text: String
        /// Its `conversation.item.create` went out already (only the `response.create` is left).
        var itemCreated = false
        /// The response after tool results (their `function_call_output` items are out): it
        /// belongs to its session and is dropped at a new one.
        var toolFollowUp = false
    }

    /// A response is in progress (asked for or created, not yet done).
    package private(set) var active = false
    /// The id of the response in progress (empty before `response.created`).
    private(set) var currentID = ""
    /// Someone is talking (`speech_started` without its `speech_stopped` yet).
    package private(set) var humanTalking = false
    private var cancelled: Set<String> = []
    private var pending: [Say] = []
    /// The `response.create` event ids of says sent, newest last.
    private var requests: [(eventID: String, say: Say)] = []

    /// A new session: nothing of the old one holds (its response, cancellations and requests);
    /// the says still waiting stay, to be made anew in the new session.
    mutating func reset() {
        active = false
        currentID = ""
        humanTalking = false
        cancelled = []
        pending = pending.filter { !$0.toolFollowUp }.map { Say(text: $0.text) }
        requests = []
    }

    /// Says waiting.
    package var waiting: Int { pending.count }

    mutating func queue(_ text: String) { pending.append(Say(text: text)) }

    /// Asks for one response after tool results (one for all the results still waiting for it).
    mutating func queueToolFollowUp() {
        guard !pending.contains(where: \.toolFollowUp) else { return }
        pending.append(Say(text: "", itemCreated: true, toolFollowUp: true))
    }

    /// The next say when it is its turn (and marks a response in progress), else nil.
    mutating func nextSay() -> Say? {
        guard !active, !humanTalking, !pending.isEmpty else { return nil }
        active = true
        currentID = ""
        return pending.removeFirst()
    }

    /// `say`'s `response.create` went out with `eventID`.
    mutating func sent(_ say: Say, createEventID eventID: String) {
        requests.append((eventID, Say(text: say.text, itemCreated: true, toolFollowUp: say.toolFollowUp)))
        if requests.count > 16 { requests.removeFirst(requests.count - 16) }
    }

    /// The service refused the create `eventID` because a response is in progress: the say goes
    /// back to the head of the queue. False when `eventID` is not one of ours.
    mutating func refusedBusy(eventID: String?) -> Bool {
        guard let eventID, let i = requests.firstIndex(where: { $0.eventID == eventID }) else { return false }
        pending.insert(requests.remove(at: i).say, at: 0)
        active = true  // the service has one in progress
        return true
    }

    /// `response.created`.
    mutating func created(_ id: String) {
        active = true
        currentID = id
    }

    /// `response.done` of `id`.
    mutating func done(_ id: String) {
        if id == currentID || id.isEmpty || currentID.isEmpty {
            active = false
            currentID = ""
        }
        cancelled.remove(id)
    }

    /// `speech_started`: the response in progress, if any, is being cancelled (by the server with
    /// `interrupt_response`, else by the agent); returns whether one was in progress.
    mutating func speechStarted() -> Bool {
        humanTalking = true
        guard active else { return false }
        if !currentID.isEmpty {
            cancelled.insert(currentID)
            if cancelled.count > 64 { cancelled.removeAll() }
        }
        return true
    }

    /// `speech_stopped`.
    mutating func speechStopped() { humanTalking = false }

    /// Whether audio of `responseID` is to be dropped.
    func isCancelled(_ responseID: String) -> Bool { !responseID.isEmpty && cancelled.contains(responseID) }
}
