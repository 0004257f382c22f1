import RoomTapStorage
import Testing

/// `s3://BUCKET/PREFIX` and the AWS environment: outside input, so hostile cases too.
@Suite("Storage: S3 locations and the environment")
struct S3LocationTests {
    @Test func goodLocations() throws {
        let a = try S3Location(parsing: "s3://my-bucket/rooms/2026/r1/")
        #expect(a.bucket == "my-bucket" && a.prefix == "rooms/2026/r1")
        #expect(a.key(for: "alice.wav") == "rooms/2026/r1/alice.wav")
        #expect(a.description == "s3://my-bucket/rooms/2026/r1")
        let b = try S3Location(parsing: "s3://b.example.com")
        #expect(b.prefix.isEmpty && b.key(for: "room.json") == "room.json")
        #expect(try S3Location(parsing: "S3://abc/x").prefix == "x")
        #expect(
            a.appending("segments").key(for: "alice/000000480000.wav")
                == "rooms/2026/r1/segments/alice/000000480000.wav")
    }

    @Test(arguments: [
        "", "s3:/", "s3://", "s3:///x", "http://bucket/x", "bucket/x", "s3://ab", "s3://A-Bucket/x",
        "s3://-bucket/x", "s3://bucket-/x", "s3://bu..ck/x", "s3://bu_ck/x", "s3://buck et/x",
        "s3://bucket//x", "s3://bucket/a//b", "s3://bucket/../x", "s3://bucket/a/./b", "s3://bucket/a/..",
        "s3://bucket/a\nb", "s3://bucket/a\u{0}b", "s3://bucket/\u{7F}", "s3://" + String(repeating: "a", count: 64),
        "s3://bucket/" + String(repeating: "k", count: 901), String(repeating: "s3://", count: 300),
    ])
    func hostileLocationsAreRefusedInOneLine(_ text: String) {
        #expect(throws: S3Location.ParseError.self) { try S3Location(parsing: text) }
        do { _ = try S3Location(parsing: text) } catch {
            #expect(!error.description.contains("\n") && !error.description.contains("\u{0}"))
            #expect(error.description.contains("s3://BUCKET/PREFIX"))
            #expect(error.description.count < 300)
        }
    }

    @Test func theEnvironmentGivesCredentialsRegionAndEndpoint() throws {
        let c = try S3Configuration.fromEnvironment([
            "AWS_ACCESS_KEY_ID": "AKIAEXAMPLE", "AWS_SECRET_ACCESS_KEY": "topsecret", "AWS_SESSION_TOKEN": "tok",
            "AWS_DEFAULT_REGION": "eu-west-1", "AWS_ENDPOINT_URL": "http://127.0.0.1:9000/",
            "AWS_ENDPOINT_URL_S3": "http://127.0.0.1:9001",
        ])
        #expect(c.region == "eu-west-1" && c.endpoint == "http://127.0.0.1:9001")
        #expect(!"\(c.credentials)".contains("topsecret") && !"\(c)".contains("topsecret") && !"\(c)".contains("tok\""))
        let d = try S3Configuration.fromEnvironment([
            "AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s", "AWS_REGION": "us-west-2",
            "AWS_DEFAULT_REGION": "eu-west-1",
        ])
        #expect(d.region == "us-west-2" && d.endpoint == nil)
        let missing = try #require(throws: S3Configuration.ConfigurationError.self) {
            try S3Configuration.fromEnvironment(["AWS_ACCESS_KEY_ID": "k"])
        }
        #expect(missing.description.contains("AWS_SECRET_ACCESS_KEY"))
        for bad in ["ftp://x", "http://", "http://host/path", "http://a b", "127.0.0.1:9000"] {
            #expect(throws: S3Configuration.ConfigurationError.self) {
                try S3Configuration.fromEnvironment([
                    "AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s", "AWS_ENDPOINT_URL": bad,
                ])
            }
        }
        #expect(throws: S3Configuration.ConfigurationError.self) {
            try S3Configuration.fromEnvironment([
                "AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s", "AWS_REGION": "eu west",
            ])
        }
    }
}
