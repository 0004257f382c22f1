import Foundation
import RoomTapCLITestSupport
import RoomTapStorage
import RoomTapTestSupport
import Testing

/// S3Client against a real SeaweedFS on loopback (it enforces SigV4).
@Suite("Storage: S3 client against SeaweedFS")
struct S3ClientTests {
    @Test func putHeadGetListDelete() throws {
        let server = try S3TestServer()
        let client = server.client()
        let dir = try TestScratch.directory("s3client")
        let path = dir.appendingPathComponent("a b+c.bin").path
        let bytes = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let key = "rooms/r1/odd name+é.bin"
        let object = try client.upload(file: path, bucket: server.bucket, key: key)
        #expect(object.size == 300_000)
        #expect(object.sha256 != nil, "roomtap's SHA-256 comes back on HEAD")
        let head = try #require(try client.head(bucket: server.bucket, key: key))
        #expect(head.size == 300_000)
        #expect(try client.head(bucket: server.bucket, key: "rooms/r1/none") == nil)
        let listed = try client.list(bucket: server.bucket, prefix: "rooms/r1/")
        #expect(listed.map(\.key) == [key])
        #expect(listed.first?.size == 300_000)
        let back = dir.appendingPathComponent("back.bin").path
        try client.download(bucket: server.bucket, key: key, to: back)
        #expect(try Data(contentsOf: URL(fileURLWithPath: back)) == Data(bytes))
        try client.delete(bucket: server.bucket, key: key)
        #expect(try client.head(bucket: server.bucket, key: key) == nil)
    }

    /// A file past 16 MiB goes up in parts (5 MiB each here) streamed from disk; the bytes that
    /// come back are the file's.
    @Test func multipartUploadOfAFilePast16MiB() throws {
        let server = try S3TestServer()
        var client = server.client()
        client.minimumPartSize = 5 << 20
        let dir = try TestScratch.directory("multipart")
        let path = dir.appendingPathComponent("big.wav").path
        let size = (17 << 20) + 12_345
        var bytes = [UInt8](repeating: 0, count: size)
        var x: UInt64 = 0x9E37_79B9_7F4A_7C15
        for i in 0..<size {
            x = x &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            bytes[i] = UInt8(truncatingIfNeeded: x >> 33)
        }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        #expect(client.partSize(forFileOf: Int64(size)) == 5 << 20)
        let object = try client.upload(file: path, bucket: server.bucket, key: "big/big.wav")
        #expect(object.size == Int64(size))
        #expect(object.etag.hasSuffix("-4"), "four parts: \(object.etag)")
        let back = dir.appendingPathComponent("back.wav").path
        try client.download(bucket: server.bucket, key: "big/big.wav", to: back)
        #expect(try Data(contentsOf: URL(fileURLWithPath: back)) == Data(bytes))
    }

    @Test func partSizesStayWithinS3Limits() {
        let client = S3Client(
            configuration: S3Configuration(credentials: S3Credentials(accessKeyID: "k", secretAccessKey: "s")))
        #expect(client.partSize(forFileOf: 1) == 8 << 20)
        let huge: Int64 = 200 << 30  // 200 GiB: 10 000 parts of 8 MiB are not enough
        let part = client.partSize(forFileOf: huge)
        #expect(part % (1 << 20) == 0 && (huge + part - 1) / part <= 10_000)
    }

    @Test func aWrongSecretIsRefusedByTheServerInOneLine() throws {
        let server = try S3TestServer()
        var configuration = server.configuration
        configuration.credentials = S3Credentials(accessKeyID: server.accessKey, secretAccessKey: "wrong-secret")
        let client = S3Client(configuration: configuration, retry: RetryPolicy(attempts: 1))
        let dir = try TestScratch.directory("wrongsecret")
        let path = dir.appendingPathComponent("x.wav").path
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: path))
        let error = try #require(throws: S3Error.self) {
            try client.upload(file: path, bucket: server.bucket, key: "x.wav")
        }
        #expect(error.kind == .signatureMismatch)
        #expect(
            error.description.contains("SignatureDoesNotMatch") && error.description.contains("AWS_SECRET_ACCESS_KEY"))
        #expect(!error.description.contains("wrong-secret") && !error.description.contains("\n"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data([1, 2, 3]))
    }

    @Test func anUnknownKeyAMissingBucketAndNoServerEachSaySo() throws {
        let server = try S3TestServer()
        var configuration = server.configuration
        configuration.credentials = S3Credentials(accessKeyID: "NOSUCHKEY", secretAccessKey: server.secretKey)
        let unknown = S3Client(configuration: configuration, retry: RetryPolicy(attempts: 1))
        let e1 = try #require(throws: S3Error.self) { try unknown.put(bytes: [1], bucket: server.bucket, key: "k") }
        #expect(e1.kind == .invalidAccessKey, "\(e1)")
        #expect(e1.description.contains("AWS_ACCESS_KEY_ID"))
        let e2 = try #require(throws: S3Error.self) {
            try server.client().put(bytes: [1], bucket: "no-such-bucket", key: "k")
        }
        #expect(e2.kind == .noSuchBucket, "\(e2)")
        #expect(e2.description.contains("does not exist"))
        let e3 = try #require(throws: S3Error.self) {
            try server.client().head(bucket: "no-such-bucket", key: "k")
        }
        #expect(e3.kind == .noSuchBucket, "\(e3)")
        let endpoint = server.endpoint
        server.stop()
        var down = S3Configuration(credentials: configuration.credentials, endpoint: endpoint)
        down.region = "us-east-1"
        let started = ContinuousClock.now
        let e4 = try #require(throws: S3Error.self) {
            try S3Client(configuration: down, retry: RetryPolicy(attempts: 3, baseDelay: 0.05, maxDelay: 0.1))
                .put(bytes: [1], bucket: "b-b", key: "k")
        }
        #expect(e4.kind == .unreachable, "\(e4)")
        #expect(e4.description.contains("after 3 tries") && e4.description.contains("AWS_ENDPOINT_URL"))
        #expect(ContinuousClock.now - started < .seconds(10))
    }

    /// A store that answers 500/503 to every try (one shutting down, one overloaded) and one that
    /// is gone: each is one line that says which, with the endpoint and what to do.
    @Test func aFailingStoreAndAGoneStoreSayWhich() throws {
        let server = try S3TestServer()
        let proxy = try FaultProxy(inFrontOf: server)
        var configuration = server.configuration
        configuration.endpoint = proxy.endpoint
        let client = S3Client(
            configuration: configuration, retry: RetryPolicy(attempts: 3, baseDelay: 0.01, maxDelay: 0.05))
        try client.checkBucket(server.bucket)
        for (status, code) in [(500, "InternalError"), (503, "SlowDown")] {
            proxy.set(.answer(status: status, code: code))
            let before = proxy.counts.answered
            do {
                try client.checkBucket(server.bucket)
                Issue.record("a failing store is an error")
            } catch {
                #expect(error.kind == .unavailable, "\(error)")
                #expect(
                    error.description
                        == "the S3 store at \(proxy.endpoint) is failing: it answered \(status) \(code) to "
                        + "LIST s3://\(server.bucket) to each of 3 tries; it is down, restarting or overloaded: try again later",
                    "\(error)")
            }
            #expect(proxy.counts.answered == before + 3, "three tries")
        }
        proxy.set(.refuse)
        do {
            try client.checkBucket(server.bucket)
            Issue.record("a refusing store is an error")
        } catch {
            #expect(error.kind == .unreachable, "\(error)")
            #expect(
                error.description.hasPrefix(
                    "cannot reach the S3 store at \(proxy.endpoint) for LIST s3://\(server.bucket): ")
                    && error.description.hasSuffix("(after 3 tries); check AWS_ENDPOINT_URL and the network"),
                "\(error)")
        }
        proxy.set(.pass)
        try client.checkBucket(server.bucket)
    }
}
