/// An object as HEAD or LIST report it.
public struct S3Object: Sendable, Equatable {
    /// The full key.
    public let key: String
    /// Bytes.
    public let size: Int64
    /// The ETag without quotes (a single PUT's: the hex MD5 of the bytes; a multipart upload's:
    /// the MD5 of the parts' MD5s, `-` and the part count).
    public let etag: String
    /// The SHA-256 roomtap stored with the object (`x-amz-meta-roomtap-sha256`, hex); HEAD only.
    public let sha256: String?
}
