import Foundation
import RoomTapSync

/// Function calling: a `function_call` output item of the session in use is run once (by its
/// `call_id`, whichever event showed it first) on the tools queue; its output goes back as a
/// `conversation.item.create` `function_call_output`, then one `response.create` when it is the
/// model's turn (after the response that made the call is done, and nobody is talking). A result
/// for a session no longer in use is dropped (the new session does not know the call). A tool
/// that fails returns an error result; nothing waits for a tool but the answer to it. What is
/// decided is the reducer's (``AgentSession/toolFinished(_:_:generation:)``).
extension RealtimeAgent {
    /// Runs `call` on the tools queue, then feeds its result for session `generation`.
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
        feed(.toolFinished(call, result, generation: generation))
        if result.endsAgent {
            configuration.log("the agent left the room (\(call.name)); the recording goes on")
            // stop() waits for the supervisor: not on the tools thread's own queue.
            RoomThread.start("roomtap.agent.leave") { [self] in stop() }
        }
    }
}
