import Foundation
import RoomTapStorage

/// `s3://` inputs of `record`: `--file NAME=s3://BUCKET/KEY[@SECONDS]`, `--janus-room
/// s3://BUCKET/PREFIX` and `--sora-recording s3://BUCKET/PREFIX` (every object directly under the
/// prefix; sora-archive-uploader's `<recording_id>/` layout), `--sdp s3://...` and `--room
/// s3://...`. Each object is downloaded (``S3Client/download(bucket:key:to:overwrite:)``: retried,
/// size checked, renamed into place when whole) into a private temporary directory (mode 0700,
/// `$TMPDIR` or /tmp) before anything else is checked, and the options then name the local copies,
/// so the room is recorded exactly as the same local files would be. room.json names the `s3://`
/// URL of each source, not the temporary copy (``RecordCommand/Options/inputOrigins``).
///
/// Credentials and endpoint come from the environment (as for `--upload`). A missing object, a
/// missing bucket, a refused signature: one line naming the option, the URL and what to do; the
/// temporary directory is removed and --out is never created.
///
/// Thread: the command's (blocking); ``remove()`` once, after the room.
final class RemoteInputs {
    /// The private directory the objects were downloaded to.
    let directory: String
    /// Each local copy (file or directory) and the URL it came from, for messages.
    private var copies: [(local: String, url: String)] = []

    private init(directory: String) { self.directory = directory }

    /// True when `path` names an object in S3.
    static func isRemote(_ path: String?) -> Bool { path?.lowercased().hasPrefix("s3://") == true }

    /// Downloads the `s3://` inputs of `options` and points them at the local copies; nil (and
    /// `options` unchanged) when there are none.
    static func fetch(_ options: inout RecordCommand.Options, environment: [String: String]) throws -> RemoteInputs? {
        let remoteFiles = options.files.indices.filter { isRemote(options.files[$0].path) }
        guard
            !remoteFiles.isEmpty || isRemote(options.janusRoom) || isRemote(options.soraRecording)
                || isRemote(options.sdp) || isRemote(options.roomFile)
        else { return nil }
        let configuration: S3Configuration
        do { configuration = try S3Configuration.fromEnvironment(environment) } catch {
            var first = "--room \(options.roomFile ?? "")"
            if let index = remoteFiles.first {
                first = "--file \(options.files[index].name)=\(options.files[index].path)"
            } else if isRemote(options.janusRoom), let url = options.janusRoom {
                first = "--janus-room \(url)"
            } else if isRemote(options.soraRecording), let url = options.soraRecording {
                first = "--sora-recording \(url)"
            } else if isRemote(options.sdp), let url = options.sdp {
                first = "--sdp \(url)"
            }
            throw RuntimeError(description: "\(first): \(error.description)")
        }
        let client = S3Client(configuration: configuration)
        let inputs = try RemoteInputs(directory: makePrivateDirectory(environment: environment))
        do {
            for (n, index) in remoteFiles.enumerated() {
                let spec = options.files[index]
                let label = "--file \(spec.name)=\(spec.path)"
                let local = try inputs.download(spec.path, label: label, into: "file-\(n)", client: client)
                options.inputOrigins[local] = spec.path
                inputs.copies.append((local, spec.path))
                options.files[index] = FileSpec(name: spec.name, path: local, offsetSamples: spec.offsetSamples)
            }
            if let url = options.janusRoom, isRemote(url) {
                let local = try inputs.downloadDirectory(
                    url, label: "--janus-room \(url)", into: "janus-room", client: client,
                    origins: &options.inputOrigins)
                options.janusRoom = local
                for (path, origin) in options.inputOrigins where path.hasPrefix(local + "/") {
                    inputs.copies.append((path, origin))
                }
                inputs.copies.append((local, url))
            }
            if let url = options.soraRecording, isRemote(url) {
                let local = try inputs.downloadDirectory(
                    url, label: "--sora-recording \(url)", into: "sora-recording", client: client,
                    origins: &options.inputOrigins)
                options.soraRecording = local
                options.inputOrigins[local] = url
                for (path, origin) in options.inputOrigins where path.hasPrefix(local + "/") {
                    inputs.copies.append((path, origin))
                }
                inputs.copies.append((local, url))
            }
            if let url = options.sdp, isRemote(url) {
                let local = try inputs.download(url, label: "--sdp \(url)", into: "sdp", client: client)
                options.sdp = local
                inputs.copies.append((local, url))
            }
            if let url = options.roomFile, isRemote(url) {
                let local = try inputs.download(url, label: "--room \(url)", into: "room", client: client)
                options.roomFile = local
                inputs.copies.append((local, url))
            }
        } catch {
            inputs.remove()
            throw error
        }
        return inputs
    }

    /// Removes the downloaded copies and their directory. Idempotent.
    func remove() { try? FileManager.default.removeItem(atPath: directory) }

    /// `error` (a one-line usage or runtime error about an input) with each local copy's path
    /// replaced by its `s3://` URL: the user never gave, and will not find, the temporary path.
    func translated(_ error: any Error) -> any Error {
        func text(_ line: String) -> String {
            // Longest first: a copy inside the Janus directory before the directory itself.
            copies.sorted { $0.local.count > $1.local.count }.reduce(line) {
                $0.replacingOccurrences(of: $1.local, with: $1.url)
            }
        }
        switch error {
        case let error as UsageError: return UsageError(description: text(error.description), command: error.command)
        default: return RuntimeError(description: text("\(error)"))  // exit 1 and "\(error)", as before
        }
    }

    /// `mkdtemp` under $TMPDIR (else /tmp): a directory only this user can enter.
    private static func makePrivateDirectory(environment: [String: String]) throws -> String {
        let base = environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array((base + "/roomtap-inputs-XXXXXX").utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw RuntimeError(
                description: "cannot make a temporary directory in \(base) for the s3:// inputs: "
                    + "\(String(cString: strerror(errno))); set TMPDIR to a writable directory")
        }
        return String(cString: made)
    }

    /// The bucket and key of `url` (an object: the key may not be empty).
    private static func object(_ url: String, label: String) throws -> (bucket: String, key: String) {
        let location: S3Location
        do { location = try S3Location(parsing: url) } catch { throw RuntimeError(description: "\(label): \(error)") }
        guard !location.prefix.isEmpty, !url.hasSuffix("/") else {
            throw RuntimeError(description: "\(label): the URL names no object; write s3://BUCKET/KEY")
        }
        return (location.bucket, location.prefix)
    }

    /// Downloads the object `url` to `DIR/<folder>/<its base name>` and returns that path.
    private func download(_ url: String, label: String, into folder: String, client: S3Client) throws -> String {
        let (bucket, key) = try Self.object(url, label: label)
        return try fetchObject(bucket: bucket, key: key, url: url, label: label, into: folder, client: client)
    }

    private func fetchObject(
        bucket: String, key: String, url: String, label: String, into folder: String, client: S3Client
    ) throws -> String {
        let local = directory + "/" + folder
        if mkdir(local, 0o700) != 0 && errno != EEXIST {
            throw RuntimeError(description: "cannot create \(local): \(String(cString: strerror(errno)))")
        }
        let path = local + "/" + (key as NSString).lastPathComponent
        do { try client.download(bucket: bucket, key: key, to: path) } catch {
            throw RuntimeError(description: Self.message(error, label: label, url: url))
        }
        return path
    }

    /// Downloads every object directly under the prefix `url` (a Janus rec_dir) into
    /// `DIR/<folder>/` and returns that directory; `origins` gets each copy's URL.
    private func downloadDirectory(
        _ url: String, label: String, into folder: String, client: S3Client, origins: inout [String: String]
    ) throws -> String {
        let location: S3Location
        do { location = try S3Location(parsing: url) } catch { throw RuntimeError(description: "\(label): \(error)") }
        let prefix = location.prefix.isEmpty ? "" : location.prefix + "/"
        let objects: [S3Object]
        do { objects = try client.list(bucket: location.bucket, prefix: prefix) } catch {
            throw RuntimeError(description: Self.message(error, label: label, url: url))
        }
        let direct = objects.filter { !$0.key.dropFirst(prefix.count).contains("/") && $0.key.count > prefix.count }
        guard !direct.isEmpty else {
            let expected =
                folder == "sora-recording"
                ? "the Sora recording's files, report-<recording_id>.json, archive-<connection_id>.json, ..."
                : "the Janus recordings, <plugin>-<room>-user-<id>-<time>-audio.mjr"
            throw RuntimeError(
                description: "\(label): there is no object under \(location.description)/; check the bucket and "
                    + "prefix (\(expected), directly under it)")
        }
        let local = directory + "/" + folder
        for object in direct {
            let objectURL = "s3://\(location.bucket)/\(object.key)"
            let path = try fetchObject(
                bucket: location.bucket, key: object.key, url: objectURL, label: label, into: folder, client: client)
            origins[path] = objectURL
        }
        return local
    }

    /// One line: the option, the URL, what went wrong and what to do.
    static func message(_ error: S3Error, label: String, url: String) -> String {
        switch error.kind {
        case .notFound:
            return "\(label): there is no object \(url) (\(error.status) \(error.code ?? "NoSuchKey")); "
                + "check the bucket and key"
        default:
            return "\(label): cannot download \(url): \(error.description)"
        }
    }
}
