import RoomTapFleet

/// Fuzz entry for what the HTTP server (`record --http`, `--metrics`, the worker's endpoint) reads
/// from anyone who can reach its port: the request head (``HTTPRequestHead``: request line, fields,
/// `Content-Length`), the query and the cookie it is asked for, and the access rules
/// (``HTTPAccess``) with and without a token. Traps when an invariant fails.
package enum HTTPFuzz {
    package static func exercise(_ bytes: UnsafeRawBufferPointer) {
        let input = Array(bytes.prefix(HTTPRequestHead.maxBytes + 64))
        // As sent, and as a head whatever the input ends with.
        for candidate in [input, input + [13, 10, 13, 10]] {
            guard let head = HTTPRequestHead(candidate) else { continue }
            check(head.path.hasPrefix("/") && !head.method.isEmpty, "request line")
            check(head.contentLength >= 0 && head.contentLength <= 999_999_999, "content length")
            check(head.fields.count <= HTTPRequestHead.maxFields, "field count")
            _ = head.queryValue("token")
            _ = head.cookie(HTTPAccess.cookieName)
            let loopback = HTTPAccess(token: nil, host: "127.0.0.1", port: 8080).check(head)
            check(loopback == nil || loopback!.status == 403, "loopback refuses with 403 only")
            let guarded = HTTPAccess(token: "0123456789abcdef", host: "0.0.0.0", port: 8080).check(head)
            check(guarded == nil || guarded!.status == 401 || guarded!.status == 403, "token refuses with 401/403")
            if guarded == nil && !HTTPAccess.openPaths.contains(head.path) {
                let bearer = head.field("authorization") ?? ""
                let cookie = head.cookie(HTTPAccess.cookieName) ?? ""
                let query = head.queryValue("token") ?? ""
                check(
                    bearer.hasSuffix("0123456789abcdef") || cookie == "0123456789abcdef" || query == "0123456789abcdef",
                    "a request without the token passed")
            }
        }
    }

    private static func check(_ condition: Bool, _ what: StaticString) {
        if !condition { fatalError("HTTPFuzz invariant failed: \(what)") }
    }
}
