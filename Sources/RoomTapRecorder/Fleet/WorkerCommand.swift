import Dispatch
import Foundation
import RoomTapAll
import RoomTapStorage

/// `roomtap worker`: the options checked, then ``Worker/run()`` on the main thread until it is
/// drained (SIGTERM, or SIGINT: drain; a second one of either: at once, when `context` handles
/// the stop signals). Records each room as a child of this program's own executable
/// (/proc/self/exe), so it runs only as the `roomtap` process.
enum WorkerCommand {
    static func run(_ args: ParsedArguments, _ context: CommandContext) throws {
        let console = context.console
        guard args.positionals.isEmpty else {
            throw UsageError(description: "unexpected argument '\(args.positionals[0])'", command: "worker")
        }
        guard let redisText = args.value("--redis") else {
            throw UsageError(description: "give the fleet's Redis: --redis redis://HOST:PORT", command: "worker")
        }
        let redis: RedisURL
        do { redis = try RedisURL(redisText) } catch {
            throw UsageError(description: "--redis: \(error.description)", command: "worker")
        }
        let environment = context.environment
        let host = ProcessInfo.processInfo.hostName
        let name = args.value("--name") ?? "\(host)-\(getpid())"
        guard JobID.isValid(name) else {
            throw UsageError(description: "--name '\(name)' must be 1-64 of A-Z a-z 0-9 . _ -", command: "worker")
        }
        var capacity = WorkerConfiguration.defaultCapacity()
        if let text = args.value("--capacity") {
            guard let n = Int(text), (1...100_000).contains(n) else {
                throw UsageError(
                    description: "--capacity must be a number of tracks 1-100000, not '\(text)'", command: "worker")
            }
            capacity = n
        }
        var lease = 10.0
        if let text = args.value("--lease-seconds") {
            guard let s = Double(text), s.isFinite, (1...300).contains(s) else {
                throw UsageError(description: "--lease-seconds must be 1-300 seconds, not '\(text)'", command: "worker")
            }
            lease = s
        }
        let spool =
            args.value("--spool")
            ?? (getuid() == 0 ? "/var/spool/roomtap" : (environment["HOME"] ?? "/tmp") + "/.local/state/roomtap/spool")
        var segmentSeconds = 10
        if let text = args.value("--segment-seconds") {
            guard let n = Int(text), (1...3600).contains(n) else {
                throw UsageError(
                    description: "--segment-seconds must be a whole number from 1 to 3600, not '\(text)'",
                    command: "worker")
            }
            guard args.value("--upload") != nil else {
                throw UsageError(
                    description: "--segment-seconds goes with --upload s3://BUCKET/PREFIX", command: "worker")
            }
            segmentSeconds = n
        }
        var archive: RoomArchive?
        if let upload = args.value("--upload") {
            let location: S3Location
            do { location = try S3Location(parsing: upload) } catch {
                throw UsageError(description: "--upload: \(error)", command: "worker")
            }
            let configuration: S3Configuration
            do { configuration = try S3Configuration.fromEnvironment(environment) } catch {
                throw RuntimeError(description: "--upload: \(error)")
            }
            archive = RoomArchive(
                client: S3Client(configuration: configuration), location: location, segmentSeconds: segmentSeconds)
        }
        var webhook: WebhookSender?
        if let url = args.value("--webhook") {
            if let problem = WebhookSender.problem(with: url) {
                throw UsageError(description: "--webhook: \(problem)", command: "worker")
            }
            webhook = WebhookSender(url: url, secret: environment["ROOMTAP_WEBHOOK_SECRET"])
        }
        var configuration = WorkerConfiguration(
            redis: redis, keys: try FleetCLI.keys(args, command: "worker"), name: name,
            spool: URL(fileURLWithPath: spool).standardizedFileURL.path, upload: args.value("--upload"),
            capacity: capacity, leaseSeconds: lease, metrics: args.value("--metrics"), webhook: args.value("--webhook"),
            executable: selfExecutable(), environment: environment, host: host)
        if let text = args.value("--failover-reserve") {
            guard let n = Int(text), (0..<configuration.capacity).contains(n) else {
                throw UsageError(
                    description:
                        "--failover-reserve must be a number of tracks below --capacity (\(configuration.capacity)), "
                        + "not '\(text)'", command: "worker")
            }
            configuration.failoverReserve = n
        }
        let worker = Worker(configuration: configuration)
        worker.archive = archive
        worker.log = { line in console.error("roomtap: worker \(name): \(line)\n") }
        worker.onReady = { address in
            if let address { console.error("roomtap: worker \(name): metrics on http://\(address)/metrics\n") }
        }
        if let webhook {
            worker.onEvent = { event, body in _ = webhook.post(event: event, body: body.objectValue ?? [:]) }
        }
        defer { webhook?.close(timeout: 10) }
        let signals = context.handlesStopSignals ? installSignals(worker) : []
        defer { for source in signals { source.cancel() } }
        do { try worker.run() } catch let error as FleetError { throw RuntimeError(description: error.description) }
    }

    /// This program's own path (/proc/self/exe), which records each room.
    static func selfExecutable() -> String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    /// SIGTERM or SIGINT once: drain; again (either): stop at once.
    private static func installSignals(_ worker: Worker) -> [any DispatchSourceSignal] {
        let queue = DispatchQueue(label: "roomtap.worker.signals")
        return [SIGTERM, SIGINT].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler {
                if worker.isDraining { worker.stopNow() } else { worker.drain() }
            }
            source.resume()
            return source
        }
    }
}
