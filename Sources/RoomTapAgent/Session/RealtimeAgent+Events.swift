/// Server events (on each connection's WebSocket thread): parsed here, outside the lock, then
/// fed to the reducer (``AgentSession``, `AgentSession+Events.swift`), which decides.
extension RealtimeAgent {
    /// One message of the session `generation`. The connection's thread.
    func receive(_ text: String, generation: Int) {
        guard let event = RealtimeServerEvent.decode(text) else {
            configuration.log("ignored a message that is not a Realtime event (\(text.utf8.count) bytes)")
            return
        }
        feed(.server(event, generation: generation))
    }
}
