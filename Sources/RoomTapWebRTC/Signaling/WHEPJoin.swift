import Foundation
package import RoomTapStorage
import RoomTapSync

/// One WHEP endpoint to play: a track name and the endpoint's URL (`--whep NAME=URL`).
///
/// Thread: a value type, use anywhere.
public struct WHEPTarget: Sendable, Equatable {
    public var name: String
    public var url: String
    public init(name: String, url: String) {
        self.name = name
        self.url = url
    }
}

/// The WHEP adapter (WebRTC-HTTP Egress Protocol, https://datatracker.ietf.org/doc/draft-ietf-wish-whep/):
/// per endpoint, `POST` our offer (`Content-Type: application/sdp`, `Authorization: Bearer` when a
/// token is given) and expect `201 Created` with the answer and the session's `Location`; the
/// `Link` headers with `rel="ice-server"` are kept for the report; `DELETE` on the session URL
/// at the end. A session whose connection breaks is deleted and requested again with backoff.
///
/// Thread: see ``JoinAdapter``; the sessions are locked.
package final class WHEPJoin: JoinAdapter, @unchecked Sendable {
    private let targets: [WHEPTarget]
    private let token: String?
    private let sessions = Locked<[Session]>([])

    private struct Session {
        var target: WHEPTarget
        var publisher: JoinedPublisher
        var location: String?
        var attempts = 0
        var retryAt: MonotonicClock.Instant?
    }

    init(_ targets: [WHEPTarget], token: String?) {
        self.targets = targets
        self.token = token
    }

    func connect(_ join: RoomJoin) throws(WebRTCError) {
        for target in targets {
            let publisher = join.publisher(display: target.name, id: target.url, fallback: "whep")
            sessions.withLock { $0.append(Session(target: target, publisher: publisher)) }
            do {
                try open(index: sessions.withLock { $0.count } - 1, join: join)
            } catch {
                close(join)
                throw error
            }
        }
    }

    func supervise(_ join: RoomJoin) {
        while !join.isStopping {
            for index in sessions.withLock({ $0.indices }) { check(index: index, join: join) }
            Thread.sleep(forTimeInterval: 0.25)
        }
    }

    func close(_ join: RoomJoin) {
        for session in sessions.withLock({ $0 }) {
            if let location = session.location { delete(location) }
        }
        sessions.withLock { for i in $0.indices { $0[i].location = nil } }
    }

    // MARK: -

    private func open(index: Int, join: RoomJoin) throws(WebRTCError) {
        let session = sessions.withLock { $0[index] }
        let started = MonotonicClock.now
        let connection = join.makeConnection(for: session.publisher)
        do throws(WebRTCError) {
            let offer = try connection.makeOffer()
            var headers = [("Content-Type", "application/sdp"), ("Accept", "application/sdp")]
            if let token { headers.append(("Authorization", "Bearer \(token)")) }
            let transfer = HTTPTransfer(
                method: "POST", url: session.target.url, headers: headers, body: .bytes(Array(offer.utf8)),
                timeoutSeconds: Int(join.options.connectTimeout))
            let response: HTTPTransfer.Response
            do { response = try transfer.perform() } catch {
                throw WebRTCError.signaling("cannot reach the WHEP endpoint \(session.target.url): \(error.message)")
            }
            try Self.check(response, url: session.target.url)
            let location = response.headers["location"].map { Self.resolve($0, against: session.target.url) }
            sessions.withLock { $0[index].location = location }
            try connection.accept(answer: String(decoding: response.body, as: UTF8.self))
            try connection.waitUntilConnected(timeout: join.options.connectTimeout)
        } catch {
            connection.close()
            if let location = sessions.withLock({ $0[index].location }) { delete(location) }
            sessions.withLock { $0[index].location = nil }
            throw error
        }
        session.publisher.use(connection, publisherID: session.target.url, setUpSeconds: -started.secondsFromNow)
        sessions.withLock { $0[index].attempts = 0 }
    }

    private func check(index: Int, join: RoomJoin) {
        let session = sessions.withLock { $0[index] }
        switch session.publisher.connection?.currentState {
        case .connected?, .connecting?, .new?: return
        default: break
        }
        let now = MonotonicClock.now
        guard let retryAt = session.retryAt else {
            let attempts = session.attempts + 1
            let delay = reconnectDelay(attempt: attempts)
            sessions.withLock {
                $0[index].attempts = attempts
                $0[index].retryAt = now + .seconds(delay)
            }
            session.publisher.left()
            if let location = session.location { delete(location) }
            sessions.withLock { $0[index].location = nil }
            join.warn(
                "roomtap: the WHEP session of \(session.publisher.name) broke; requesting it again in \(String(format: "%.1f", delay)) s"
            )
            return
        }
        guard now >= retryAt else { return }
        sessions.withLock { $0[index].retryAt = nil }
        do { try open(index: index, join: join) } catch {
            join.warn("roomtap: WHEP \(session.publisher.name) again: \(error)")
        }
    }

    private func delete(_ location: String) {
        var headers: [(String, String)] = []
        if let token { headers.append(("Authorization", "Bearer \(token)")) }
        _ = try? HTTPTransfer(method: "DELETE", url: location, headers: headers, timeoutSeconds: 5).perform()
    }

    /// A WHEP reply that is not `201` with an SDP body, as a line.
    package static func check(_ response: HTTPTransfer.Response, url: String) throws(WebRTCError) {
        switch response.status {
        case 201: break
        case 401, 403:
            throw .signaling(
                "the WHEP endpoint \(url) refused the token (HTTP \(response.status)); give --whep-token or ROOMTAP_WHEP_TOKEN"
            )
        case 404:
            throw .signaling("the WHEP endpoint \(url) does not exist (HTTP 404)")
        default:
            let reason =
                String(decoding: response.body.prefix(200), as: UTF8.self)
                .split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
            throw .signaling(
                "the WHEP endpoint \(url) answered HTTP \(response.status)\(reason.isEmpty ? "" : ": \(reason)")")
        }
    }

    /// `Location` may be relative to the endpoint (RFC 9110 §10.2.2).
    package static func resolve(_ location: String, against url: String) -> String {
        URL(string: location, relativeTo: URL(string: url))?.absoluteString ?? location
    }

    /// The ICE server URLs of `Link: <stun:...>; rel="ice-server"` values.
    package static func iceServers(_ link: String?) -> [String] {
        guard let link else { return [] }
        return link.split(separator: ",").compactMap { part in
            guard part.contains("rel=\"ice-server\"") || part.contains("rel=ice-server"),
                let open = part.firstIndex(of: "<"), let close = part.firstIndex(of: ">"), open < close
            else { return nil }
            return String(part[part.index(after: open)..<close])
        }
    }
}
