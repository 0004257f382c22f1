import Foundation
import RoomTapFiles

/// A client of one S3-compatible store: PUT (single or multipart, streamed from disk), HEAD, GET
/// to a file, LIST by prefix, DELETE. Requests are signed with AWS Signature V4 by libcurl
/// (`CURLOPT_AWS_SIGV4`); every upload carries `Content-MD5` (checked by the store) and
/// `x-amz-content-sha256` (the signed hex SHA-256 of the body), and the object's SHA-256 as
/// `x-amz-meta-roomtap-sha256`, which ``head(_:)`` reads back to verify it later.
///
/// Failures without an answer, 5xx and 429 are retried per ``RetryPolicy``; other answers fail
/// at once with an ``S3Error`` (one line, no secret).
///
/// Thread: any; each call blocks its caller for the request(s) and keeps nothing between calls,
/// so several threads may use one client at once.
public struct S3Client: Sendable {
    public let configuration: S3Configuration
    public var retry: RetryPolicy
    /// Files larger than this go up in parts.
    public var multipartThreshold: Int64 = 16 << 20
    /// The smallest part (S3's own minimum is 5 MiB); parts grow beyond it so a file needs at
    /// most 10 000 of them.
    public var minimumPartSize: Int64 = 8 << 20

    /// S3's limits.
    public static let maxParts: Int64 = 10_000
    public static let smallestPart: Int64 = 5 << 20
    public static let largestPart: Int64 = 5 << 30

    public init(configuration: S3Configuration, retry: RetryPolicy = RetryPolicy()) {
        self.configuration = configuration
        self.retry = retry
    }

    /// The part size for a file of `size` bytes: at least ``minimumPartSize``, whole MiB, at most
    /// 10 000 parts.
    public func partSize(forFileOf size: Int64) -> Int64 {
        let mib: Int64 = 1 << 20
        let needed = (size + Self.maxParts - 1) / Self.maxParts
        let rounded = (needed + mib - 1) / mib * mib
        return max(max(minimumPartSize, Self.smallestPart), rounded)
    }

    // MARK: - Objects

    /// Uploads the file at `path` as `key` of `bucket` (multipart above ``multipartThreshold``)
    /// and returns the object as the store then reports it (HEAD), verified: its size and SHA-256
    /// are the file's, else ``S3Error/Kind/integrity``. Idempotent: uploading again replaces the
    /// object with the same bytes.
    @discardableResult
    public func upload(file path: String, bucket: String, key: String, contentType: String? = nil) throws(S3Error)
        -> S3Object
    {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw S3Error(.local, "cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw S3Error(.local, "cannot stat \(path)") }
        let size = Int64(info.st_size)
        let whole = try FileDigests.of(fd: fd, offset: 0, length: size)
        let type = contentType ?? Self.contentType(for: path)
        if size > multipartThreshold {
            try uploadParts(fd: fd, size: size, sha256: whole.sha256.hex, bucket: bucket, key: key, contentType: type)
        } else {
            let response = try send(
                "PUT", bucket: bucket, key: key,
                headers: [
                    ("Content-MD5", whole.md5Base64), ("x-amz-content-sha256", whole.sha256.hex),
                    ("x-amz-meta-roomtap-sha256", whole.sha256.hex), ("Content-Type", type),
                ], body: .file(fd: fd, offset: 0, length: size), operation: "PUT")
            let etag = Self.unquoted(response.headers["etag"] ?? "")
            if !etag.isEmpty && etag != whole.md5.hex {
                throw S3Error(
                    .integrity, "PUT \(Self.url(bucket, key)): the store's ETag \(etag) is not the file's MD5")
            }
        }
        guard let object = try head(bucket: bucket, key: key) else {
            throw S3Error(.integrity, "PUT \(Self.url(bucket, key)): the object is not there after the upload")
        }
        guard object.size == size, object.sha256 == nil || object.sha256 == whole.sha256.hex else {
            throw S3Error(
                .integrity,
                "PUT \(Self.url(bucket, key)): the store holds \(object.size) bytes (SHA-256 \(object.sha256 ?? "?")), "
                    + "the file \(size)")
        }
        return object
    }

    /// Uploads `bytes` as `key` (one PUT with Content-MD5).
    public func put(bytes: [UInt8], bucket: String, key: String, contentType: String = "application/octet-stream")
        throws(S3Error)
    {
        let sha = Digest.sha256(bytes).hex
        _ = try send(
            "PUT", bucket: bucket, key: key,
            headers: [
                ("Content-MD5", Data(Digest.md5(bytes)).base64EncodedString()), ("x-amz-content-sha256", sha),
                ("x-amz-meta-roomtap-sha256", sha), ("Content-Type", contentType),
            ], body: .bytes(bytes), operation: "PUT")
    }

    /// The object `key`, or nil when there is none.
    public func head(bucket: String, key: String) throws(S3Error) -> S3Object? {
        do {
            let response = try send("HEAD", bucket: bucket, key: key, operation: "HEAD")
            return S3Object(
                key: key, size: Int64(response.headers["content-length"] ?? "") ?? -1,
                etag: Self.unquoted(response.headers["etag"] ?? ""),
                sha256: response.headers["x-amz-meta-roomtap-sha256"])
        } catch  where error.kind == .notFound && error.code != "NoSuchBucket" {
            // A HEAD answer has no body, so a missing bucket also looks like 404: ask the bucket.
            if error.status == 404 { try checkBucket(bucket) }
            return nil
        }
    }

    /// Downloads `key` to `path` through an atomic replace (``OutputFile/Replacement``: a temporary
    /// file beside `path`, fsynced and renamed when complete and the size matches; removed on any
    /// failure). Never replaces an existing `path` unless `overwrite`.
    public func download(bucket: String, key: String, to path: String, overwrite: Bool = false) throws(S3Error) {
        if !overwrite && access(path, F_OK) == 0 {
            throw S3Error(.local, "\(path) exists; not replaced")
        }
        var lastError: S3Error?
        for attempt in 1...retry.attempts {
            let file: OutputFile.Replacement
            do { file = try OutputFile.Replacement.begin(path: path, overwrite: true) } catch {
                throw S3Error(.local, error.description)
            }
            let fd = file.fd
            var transfer = HTTPTransfer(method: "GET", url: Self.url(configuration, bucket, key, []))
            transfer.headers = [("x-amz-content-sha256", Self.emptySHA256)] + tokenHeader
            transfer.signing = signing
            transfer.output = fd
            do {
                let response = try transfer.perform()
                var info = stat()
                fstat(fd, &info)
                guard (200..<300).contains(response.status) else {
                    file.abandon()
                    let error = S3Error.fromResponse(
                        status: response.status, body: response.body, operation: "GET", target: Self.url(bucket, key),
                        endpoint: endpointName)
                    guard Self.isRetryable(response.status) else { throw error }
                    guard attempt < retry.attempts else {
                        throw failing(error, "GET", Self.url(bucket, key), attempts: attempt)
                    }
                    lastError = error
                    pause(attempt)
                    continue
                }
                if let expected = response.headers["content-length"].flatMap({ Int64($0) }),
                    expected != Int64(info.st_size)
                {
                    file.abandon()
                    throw S3Error(
                        .integrity, "GET \(Self.url(bucket, key)): \(info.st_size) of \(expected) bytes arrived")
                }
                do { try file.commit() } catch { throw S3Error(.local, error.description) }
                return
            } catch let error as HTTPTransfer.TransportError {
                file.abandon()
                lastError = unreachable(error, "GET", Self.url(bucket, key), attempts: attempt)
                guard error.isRetryable, attempt < retry.attempts else { throw lastError! }
                pause(attempt)
            } catch let error as S3Error {
                throw error
            } catch {
                file.abandon()
                throw S3Error(.other, "\(error)")
            }
        }
        throw lastError ?? S3Error(.other, "GET \(Self.url(bucket, key)) failed")
    }

    /// Every object whose key starts with `prefix` (ListObjectsV2, page after page).
    public func list(bucket: String, prefix: String) throws(S3Error) -> [S3Object] {
        var objects: [S3Object] = []
        var token: String?
        repeat {
            var query = [("list-type", "2"), ("prefix", prefix)]
            if let token { query.append(("continuation-token", token)) }
            let response = try send("GET", bucket: bucket, key: "", query: query, operation: "LIST")
            let text = String(decoding: response.body, as: UTF8.self)
            for block in S3XML.blocks("Contents", in: text) {
                guard let key = S3XML.firstValue(of: "Key", in: block) else { continue }
                objects.append(
                    S3Object(
                        key: key, size: Int64(S3XML.firstValue(of: "Size", in: block) ?? "") ?? -1,
                        etag: Self.unquoted(S3XML.firstValue(of: "ETag", in: block) ?? ""), sha256: nil))
            }
            let truncated = S3XML.firstValue(of: "IsTruncated", in: text) == "true"
            token = truncated ? S3XML.firstValue(of: "NextContinuationToken", in: text) : nil
        } while token != nil
        return objects
    }

    /// Deletes `key` (no error when it is not there).
    public func delete(bucket: String, key: String) throws(S3Error) {
        do { _ = try send("DELETE", bucket: bucket, key: key, operation: "DELETE") } catch
            where error.kind == .notFound
        {}
    }

    /// Creates `bucket` (tests, set-up). Succeeds when it exists and is ours.
    public func createBucket(_ bucket: String) throws(S3Error) {
        do { _ = try send("PUT", bucket: bucket, key: "", operation: "CREATE BUCKET") } catch
            where error.code
            == "BucketAlreadyOwnedByYou"
        {}
    }

    /// Throws ``S3Error/Kind/noSuchBucket`` (or the auth failure) when `bucket` cannot be used.
    public func checkBucket(_ bucket: String) throws(S3Error) {
        _ = try send("GET", bucket: bucket, key: "", query: [("list-type", "2"), ("max-keys", "1")], operation: "LIST")
    }

    // MARK: - Multipart

    private func uploadParts(fd: Int32, size: Int64, sha256: String, bucket: String, key: String, contentType: String)
        throws(S3Error)
    {
        let partSize = partSize(forFileOf: size)
        guard partSize <= Self.largestPart else {
            throw S3Error(.local, "\(size) bytes is more than S3 takes in one object")
        }
        let created = try send(
            "POST", bucket: bucket, key: key, query: [("uploads", "")],
            headers: [("x-amz-meta-roomtap-sha256", sha256), ("Content-Type", contentType)],
            operation: "CREATE MULTIPART")
        guard let uploadID = S3XML.firstValue(of: "UploadId", in: String(decoding: created.body, as: UTF8.self)),
            !uploadID.isEmpty
        else {
            throw S3Error(.other, "CREATE MULTIPART \(Self.url(bucket, key)): the store sent no UploadId")
        }
        do throws(S3Error) {
            var parts: [(number: Int, etag: String)] = []
            var offset: Int64 = 0
            var number = 1
            while offset < size {
                let length = min(partSize, size - offset)
                let digests = try FileDigests.of(fd: fd, offset: offset, length: length)
                let response = try send(
                    "PUT", bucket: bucket, key: key, query: [("partNumber", String(number)), ("uploadId", uploadID)],
                    headers: [("Content-MD5", digests.md5Base64), ("x-amz-content-sha256", digests.sha256.hex)],
                    body: .file(fd: fd, offset: offset, length: length), operation: "UPLOAD PART \(number)")
                let etag = Self.unquoted(response.headers["etag"] ?? "")
                if !etag.isEmpty && etag != digests.md5.hex {
                    throw S3Error(
                        .integrity, "UPLOAD PART \(number) of \(Self.url(bucket, key)): ETag \(etag) is not its MD5")
                }
                parts.append((number, etag.isEmpty ? digests.md5.hex : etag))
                offset += length
                number += 1
            }
            var xml = "<CompleteMultipartUpload>"
            for part in parts {
                xml += "<Part><PartNumber>\(part.number)</PartNumber><ETag>\"\(part.etag)\"</ETag></Part>"
            }
            xml += "</CompleteMultipartUpload>"
            let body = Array(xml.utf8)
            let done = try send(
                "POST", bucket: bucket, key: key, query: [("uploadId", uploadID)],
                headers: [
                    ("Content-MD5", Data(Digest.md5(body)).base64EncodedString()),
                    ("x-amz-content-sha256", Digest.sha256(body).hex), ("Content-Type", "application/xml"),
                ], body: .bytes(body), operation: "COMPLETE MULTIPART")
            // S3 may answer 200 and still fail (the error is in the body).
            let text = String(decoding: done.body, as: UTF8.self)
            if text.contains("<Error>") {
                throw S3Error.fromResponse(
                    status: 500, body: done.body, operation: "COMPLETE MULTIPART", target: Self.url(bucket, key),
                    endpoint: endpointName)
            }
        } catch {
            // No orphaned parts left to pay for; the local file is untouched either way.
            _ = try? send(
                "DELETE", bucket: bucket, key: key, query: [("uploadId", uploadID)], operation: "ABORT MULTIPART")
            throw error
        }
    }

    // MARK: - Requests

    private var signing: HTTPTransfer.Signing {
        HTTPTransfer.Signing(region: configuration.region, credentials: configuration.credentials)
    }

    private var tokenHeader: [(String, String)] {
        configuration.credentials.sessionToken.map { [("x-amz-security-token", $0)] } ?? []
    }

    private var endpointName: String { configuration.endpoint ?? "s3.\(configuration.region).amazonaws.com" }

    static let emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    /// One request with retries; a 2xx response, or the error.
    private func send(
        _ method: String, bucket: String, key: String, query: [(String, String)] = [], headers: [(String, String)] = [],
        body: HTTPTransfer.Body = .none, operation: String
    ) throws(S3Error) -> HTTPTransfer.Response {
        var transfer = HTTPTransfer(method: method, url: Self.url(configuration, bucket, key, query))
        var all = headers
        if !all.contains(where: { $0.0 == "x-amz-content-sha256" }) {
            all.append(("x-amz-content-sha256", Self.emptySHA256))
        }
        transfer.headers = all + tokenHeader
        transfer.body = body
        transfer.signing = signing
        let target = Self.url(bucket, key)
        var attempt = 1
        while true {
            do {
                let response = try transfer.perform()
                if (200..<300).contains(response.status) { return response }
                let error = S3Error.fromResponse(
                    status: response.status, body: response.body, operation: operation, target: target,
                    endpoint: endpointName)
                guard Self.isRetryable(response.status) else { throw error }
                guard attempt < retry.attempts else { throw failing(error, operation, target, attempts: attempt) }
            } catch let error as HTTPTransfer.TransportError {
                guard error.isRetryable, attempt < retry.attempts else {
                    throw unreachable(error, operation, target, attempts: attempt)
                }
            } catch let error as S3Error {
                throw error
            } catch {
                throw S3Error(.other, "\(error)")
            }
            pause(attempt)
            attempt += 1
        }
    }

    private func pause(_ attempt: Int) {
        let seconds = retry.delay(beforeRetry: attempt)
        if seconds > 0 { usleep(UInt32(min(seconds, 60) * 1e6)) }
    }

    private func unreachable(_ error: HTTPTransfer.TransportError, _ operation: String, _ target: String, attempts: Int)
        -> S3Error
    {
        if error.code == -2 { return S3Error(.local, "\(operation) \(target): \(error.message)") }
        let tries = attempts > 1 ? " (after \(attempts) tries)" : ""
        return S3Error(
            error.isRetryable ? .unreachable : .other,
            "cannot reach the S3 store at \(endpointName) for \(operation) \(target): \(S3Location.printable(error.message))"
                + "\(tries); check AWS_ENDPOINT_URL and the network")
    }

    /// `error`, the store's 5xx or 429 answer to the last of `attempts` tries, as one line
    /// saying the store is failing (down, restarting, overloaded) and what to do.
    private func failing(_ error: S3Error, _ operation: String, _ target: String, attempts: Int) -> S3Error {
        let answer = "\(error.status)" + (error.code.map { " \(S3Location.printable(String($0.prefix(60))))" } ?? "")
        let tries = attempts > 1 ? " to each of \(attempts) tries" : ""
        return S3Error(
            .unavailable,
            "the S3 store at \(endpointName) is failing: it answered \(answer) to \(operation) \(target)\(tries); "
                + "it is down, restarting or overloaded: try again later", status: error.status, code: error.code)
    }

    static func isRetryable(_ status: Int) -> Bool { status >= 500 || status == 429 }

    static func unquoted(_ etag: String) -> String {
        var e = etag
        if e.hasPrefix("\"") { e.removeFirst() }
        if e.hasSuffix("\"") { e.removeLast() }
        return e
    }

    /// `s3://bucket/key`, for messages.
    static func url(_ bucket: String, _ key: String) -> String { "s3://\(bucket)" + (key.isEmpty ? "" : "/\(key)") }

    /// The request URL: path-style on an endpoint, virtual-hosted on AWS; the key encoded segment
    /// by segment and the query sorted and encoded as SigV4's canonical request wants them
    /// (libcurl signs the URL as given).
    static func url(_ configuration: S3Configuration, _ bucket: String, _ key: String, _ query: [(String, String)])
        -> String
    {
        let path = key.split(separator: "/", omittingEmptySubsequences: false).map { uriEncode(String($0)) }
            .joined(separator: "/")
        var url: String
        if let endpoint = configuration.endpoint {
            url = "\(endpoint)/\(bucket)" + (key.isEmpty ? "" : "/\(path)")
        } else if bucket.contains(".") {
            url = "https://s3.\(configuration.region).amazonaws.com/\(bucket)" + (key.isEmpty ? "" : "/\(path)")
        } else {
            url = "https://\(bucket).s3.\(configuration.region).amazonaws.com/\(path)"
        }
        if !query.isEmpty {
            let pairs: [String] = query.map { (name: String, value: String) -> String in
                uriEncode(name) + "=" + uriEncode(value)
            }
            url += "?" + pairs.sorted().joined(separator: "&")
        }
        return url
    }

    /// RFC 3986 percent-encoding of everything but the unreserved characters (SigV4's UriEncode).
    static func uriEncode(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case 0x41...0x5A, 0x61...0x7A, 0x30...0x39, 0x2D, 0x2E, 0x5F, 0x7E:
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let digits: [Character] = Array("0123456789ABCDEF")
                out.append("%")
                out.append(digits[Int(byte >> 4)])
                out.append(digits[Int(byte & 15)])
            }
        }
        return out
    }

    static func contentType(for path: String) -> String {
        switch (path as NSString).pathExtension.lowercased() {
        case "wav": return "audio/wav"
        case "flac": return "audio/flac"
        case "opus", "ogg": return "audio/ogg"
        case "json": return "application/json"
        case "jsonl": return "application/x-ndjson"
        case "svg": return "image/svg+xml"
        default: return "application/octet-stream"
        }
    }
}
