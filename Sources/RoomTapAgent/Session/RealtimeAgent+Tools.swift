import Foundation
import RoomTapJSON
import RoomTapSync

/// Function calling: a `function_call` output item of the session in use is run once (by its
/// `call_id`, whichever event showed it first) on the tools queue; its output goes back as a
/// `conversation.item.create` `function_call_output`, then one `response.create` when it is the
/// model's turn (after the response that made the call is done, and nobody is talking). A result
/// for a session no longer in use is dropped (the new session does not know the call). A tool
/// that fails returns an error result; nothing waits for a tool but the answer to it.
extension RealtimeAgent {
    /// The calls of `calls` not taken up yet, to be run (decided under the lock).
    func takeUp(_ calls: [RealtimeFunctionCall], generation: Int, _ s: inout State) -> [AgentAction] {
        var actions: [AgentAction] = []
        for call in calls where !s.handledCalls.contains(call.callID) {
            if s.handledCalls.count > 1_024 { s.handledCalls.removeAll() }
            s.handledCalls.insert(call.callID)
            actions.append(.runTool(call, generation: generation))
        }
        return actions
    }

    /// Runs `call` on the tools queue, then answers it on session `generation`.
    func runTool(_ call: RealtimeFunctionCall, generation: Int) {
        let runner = configuration.toolRunner
        let known = configuration.session.tools.contains { $0.name == call.name }
        toolQueue.async { [weak self] in
            let result: RealtimeToolResult =
                if known, let runner { runner(call) } else { .error("there is no tool named '\(call.name)'") }
            self?.toolFinished(call, result, generation: generation)
        }
    }

    private func toolFinished(_ call: RealtimeFunctionCall, _ result: RealtimeToolResult, generation: Int) {
        toolCalls.add(1, ordering: .relaxed)
        if result.isError { toolErrors.add(1, ordering: .relaxed) }
        let actions = state.withLock { s -> [AgentAction] in
            guard generation == s.generation, let c = s.connection, s.isConnected, !s.stopRequested else {
                return [.log("the result of \(call.name) came after its session ended; dropped")]
            }
            var actions: [AgentAction] = [
                .send(
                    RealtimeClientEvent.functionCallOutput(callID: call.callID, output: result.output)
                        .json(eventID: nextEventID()), on: c)
            ]
            if result.isError { actions.append(.log("tool \(call.name): \(result.output)")) }
            guard !result.endsAgent else { return actions }
            s.turns.queueToolFollowUp()
            return actions + releaseSay(&s)
        }
        perform(actions)
        if result.endsAgent {
            configuration.log("the agent left the room (\(call.name)); the recording goes on")
            // stop() waits for the supervisor: not on the tools thread's own queue.
            RoomThread.start("roomtap.agent.leave") { [self] in stop() }
        }
    }
}
