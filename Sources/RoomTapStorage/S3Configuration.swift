/// Credentials for S3 requests. The secret and the session token are never part of a description,
/// an error or a log line.
public struct S3Credentials: Sendable, CustomStringConvertible {
    public let accessKeyID: String
    let secretAccessKey: String
    let sessionToken: String?

    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
    }

    /// The access key's first four characters, the rest elided; never the secret.
    public var description: String { "access key \(accessKeyID.prefix(4))... (secret not shown)" }
}

/// Where and how to reach an S3-compatible store, from the standard AWS environment:
/// `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, `AWS_REGION` /
/// `AWS_DEFAULT_REGION` (default us-east-1), `AWS_ENDPOINT_URL_S3` / `AWS_ENDPOINT_URL` (an
/// S3-compatible store: path-style addressing, `http://host:port/bucket/key`; without one, AWS's
/// virtual-hosted `https://bucket.s3.region.amazonaws.com/key`).
public struct S3Configuration: Sendable {
    public var credentials: S3Credentials
    public var region: String
    /// `scheme://host[:port]` without a trailing `/`; nil for AWS itself.
    public var endpoint: String?

    /// Why the environment does not configure S3 (one line naming the variable to set).
    public struct ConfigurationError: Error, Sendable, CustomStringConvertible {
        public let description: String
    }

    public init(credentials: S3Credentials, region: String = "us-east-1", endpoint: String? = nil) {
        self.credentials = credentials
        self.region = region
        self.endpoint = endpoint
    }

    /// The configuration the environment gives.
    public static func fromEnvironment(_ environment: [String: String]) throws(ConfigurationError) -> S3Configuration {
        func value(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        guard let key = value("AWS_ACCESS_KEY_ID"), let secret = value("AWS_SECRET_ACCESS_KEY") else {
            throw ConfigurationError(
                description: "no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the environment")
        }
        let region = value("AWS_REGION") ?? value("AWS_DEFAULT_REGION") ?? "us-east-1"
        guard region.utf8.allSatisfy({ ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D }) else {
            throw ConfigurationError(
                description: "AWS_REGION '\(S3Location.printable(region))' is not a region name (e.g. eu-west-1)")
        }
        var endpoint: String?
        for name in ["AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"] {
            guard let text = value(name) else { continue }
            endpoint = try checkedEndpoint(text, variable: name)
            break
        }
        return S3Configuration(
            credentials: S3Credentials(
                accessKeyID: key, secretAccessKey: secret, sessionToken: value("AWS_SESSION_TOKEN")),
            region: region, endpoint: endpoint)
    }

    /// `text` as an endpoint (`http(s)://host[:port]`, a trailing `/` dropped).
    static func checkedEndpoint(_ text: String, variable: String) throws(ConfigurationError) -> String {
        var endpoint = text
        while endpoint.hasSuffix("/") { endpoint.removeLast() }
        let lower = endpoint.lowercased()
        let scheme = lower.hasPrefix("https://") ? 8 : lower.hasPrefix("http://") ? 7 : 0
        let host = endpoint.dropFirst(scheme)
        let ok =
            scheme > 0 && !host.isEmpty
            && host.unicodeScalars.allSatisfy {
                $0.properties.isAlphabetic || ("0"..."9").contains($0) || ".-:[]_".unicodeScalars.contains($0)
            }
        guard ok else {
            throw ConfigurationError(
                description: "\(variable) '\(S3Location.printable(String(text.prefix(80))))' is not an endpoint: "
                    + "write http(s)://HOST[:PORT] without a path")
        }
        return endpoint
    }
}
