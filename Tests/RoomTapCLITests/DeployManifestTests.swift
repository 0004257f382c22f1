import Foundation
import RoomTapCLITestSupport
import Testing

/// deploy/: the systemd unit and the Kubernetes manifests say what the program does: every flag
/// they pass is one `roomtap worker` takes, the probes are its endpoints on its metrics port.
@Suite("deploy/: systemd and Kubernetes match the program")
struct DeployManifestTests {
    let deploy = repositoryRoot.appendingPathComponent("deploy")

    func workerOptions() throws -> Set<String> {
        let help = try CLIRunner.run(["help", "worker"])
        #expect(help.status == 0)
        let flags = help.stdout.split(whereSeparator: { " ,\n".contains($0) }).filter { $0.hasPrefix("--") }
        return Set(flags.map(String.init))
    }

    @Test func theSystemdUnitNotifiesAndPassesFlagsTheWorkerTakes() throws {
        let unit = try String(
            contentsOf: deploy.appendingPathComponent("systemd/roomtap-worker.service"), encoding: .utf8)
        let lines = unit.split(separator: "\n").map(String.init)
        #expect(lines.contains("Type=notify"))
        #expect(lines.contains { $0.hasPrefix("WatchdogSec=") })
        #expect(lines.contains("KillSignal=SIGTERM"))
        let exec = try #require(lines.first { $0.hasPrefix("ExecStart=") })
        let words = exec.dropFirst("ExecStart=".count).split(separator: " ").map(String.init)
        #expect(words[1] == "worker")
        let options = try workerOptions()
        for flag in words where flag.hasPrefix("--") { #expect(options.contains(flag), "\(flag) is a worker option") }
        #expect(words.contains("--metrics"))
    }

    @Test func theDeploymentsProbesPortsAndArgsMatchTheWorker() throws {
        let yaml = try String(
            contentsOf: deploy.appendingPathComponent("kubernetes/worker-deployment.yaml"), encoding: .utf8)
        let lines = yaml.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        // args: the list after "args:" up to the next key.
        let start = try #require(lines.firstIndex(of: "args:"))
        var args: [String] = []
        for line in lines[(start + 1)...] {
            guard line.hasPrefix("- ") else { break }
            args.append(String(line.dropFirst(2)).trimmingCharacters(in: CharacterSet(charactersIn: "\"")))
        }
        #expect(args.first == "worker")
        let options = try workerOptions()
        for flag in args where flag.hasPrefix("--") { #expect(options.contains(flag), "\(flag) is a worker option") }
        let metrics = try #require(args.firstIndex(of: "--metrics").map { args[$0 + 1] })
        let port = try #require(metrics.split(separator: ":").last.map(String.init))
        #expect(lines.contains("containerPort: \(port)"))
        #expect(lines.filter { $0 == "port: \(port)" }.count == 2, "both probes on the metrics port")
        #expect(lines.contains("path: /healthz") && lines.contains("path: /readyz"))
        let lease = Double(try #require(args.firstIndex(of: "--lease-seconds").map { args[$0 + 1] })) ?? 0
        let grace = try #require(lines.first { $0.hasPrefix("terminationGracePeriodSeconds:") })
        #expect((Double(grace.split(separator: " ").last ?? "") ?? 0) >= lease * 3, "time to hand rooms over")
        #expect(lines.contains("preStop:"))
        let service = try String(
            contentsOf: deploy.appendingPathComponent("kubernetes/metrics-service.yaml"), encoding: .utf8)
        #expect(service.contains("targetPort: \(port)"))
        let hpa = try String(contentsOf: deploy.appendingPathComponent("kubernetes/autoscaler.yaml"), encoding: .utf8)
        #expect(hpa.contains("name: roomtap_capacity_free_tracks"))
        let metricsText = try String(
            contentsOf: repositoryRoot.appendingPathComponent("Sources/RoomTapFleet/Service/WorkerMetrics.swift"),
            encoding: .utf8)
        #expect(metricsText.contains("\"capacity_free_tracks\""), "the autoscaler's metric exists")
    }
}
