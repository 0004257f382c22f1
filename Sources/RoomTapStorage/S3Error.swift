/// Why an S3 request failed, as one line that says what to do. Never holds a secret.
public struct S3Error: Error, Sendable, CustomStringConvertible {
    /// What kind of failure: the uploader stops at once on the ones no retry can fix.
    public enum Kind: Sendable, Equatable {
        /// The store refused the signature (403 SignatureDoesNotMatch): a wrong secret (or clock).
        case signatureMismatch
        /// The store does not know the access key (403 InvalidAccessKeyId).
        case invalidAccessKey
        /// The credentials are valid but may not do this (403 AccessDenied).
        case accessDenied
        /// The bucket does not exist (404 NoSuchBucket).
        case noSuchBucket
        /// The object does not exist (404 on HEAD/GET).
        case notFound
        /// The store could not be reached (DNS, connect, timeout) after every retry.
        case unreachable
        /// The store answered 5xx or 429 to every retry (down, restarting, overloaded).
        case unavailable
        /// The bytes did not arrive as sent (400 BadDigest, a size or checksum that does not match).
        case integrity
        /// A local file could not be read or written.
        case local
        /// Any other answer of the store.
        case other
    }

    public let kind: Kind
    /// HTTP status (0 when no answer came).
    public let status: Int
    /// The store's error code (`SignatureDoesNotMatch`), when it sent one.
    public let code: String?
    public let description: String

    init(_ kind: Kind, _ description: String, status: Int = 0, code: String? = nil) {
        self.kind = kind
        self.description = description
        self.status = status
        self.code = code
    }

    /// True for failures no retry or other file can fix: stop the whole upload.
    public var isFatal: Bool { [.signatureMismatch, .invalidAccessKey, .accessDenied, .noSuchBucket].contains(kind) }

    /// The error of an answer with `status` and body `body` to `operation` on `target`.
    static func fromResponse(status: Int, body: [UInt8], operation: String, target: String, endpoint: String) -> S3Error
    {
        let text = String(decoding: body.prefix(64 << 10), as: UTF8.self)
        let code = S3XML.firstValue(of: "Code", in: text)
        let message = S3XML.firstValue(of: "Message", in: text).map { S3Location.printable(String($0.prefix(200))) }
        let what = "\(operation) \(target)"
        let answer = "\(status)" + (code.map { " \(S3Location.printable(String($0.prefix(60))))" } ?? "")
        switch (status, code) {
        case (_, "SignatureDoesNotMatch"):
            return S3Error(
                .signatureMismatch,
                "the store refused the request signature (\(answer)) for \(what): check AWS_SECRET_ACCESS_KEY "
                    + "(and the machine's clock)", status: status, code: code)
        case (_, "InvalidAccessKeyId"):
            return S3Error(
                .invalidAccessKey,
                "the store does not know the access key (\(answer)) for \(what): check AWS_ACCESS_KEY_ID",
                status: status, code: code)
        case (_, "NoSuchBucket"):
            return S3Error(
                .noSuchBucket,
                "the bucket of \(target) does not exist at \(endpoint) (\(answer)): create it or fix the s3:// URL",
                status: status, code: code)
        case (_, "BadDigest"), (_, "InvalidDigest"), (_, "XAmzContentSHA256Mismatch"):
            return S3Error(
                .integrity, "\(what): the store received other bytes than were sent (\(answer))", status: status,
                code: code)
        case (403, _):
            return S3Error(
                .accessDenied,
                "the store denied \(what) (\(answer)\(message.map { ": \($0)" } ?? "")): check the key's permissions",
                status: status, code: code)
        case (404, _):
            return S3Error(.notFound, "\(what): not found (\(answer))", status: status, code: code)
        default:
            return S3Error(
                .other, "\(what) failed: \(answer)\(message.map { " \($0)" } ?? "")", status: status, code: code)
        }
    }
}
