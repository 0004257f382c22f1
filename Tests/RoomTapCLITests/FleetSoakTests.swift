import Foundation
import RoomTapAll
import RoomTapCLITestSupport
import RoomTapRTPTestSupport
import RoomTapSync
import RoomTapTestSupport
import Testing

/// `make fleet` (and its short form in `make test`): workers recording offline and live rooms while
/// one of them is killed with SIGKILL every few seconds and started again. Every room must end
/// done, exactly once, with live rooms' gaps bounded. Sizes from the environment:
/// ROOMTAP_FLEET_WORKERS (2), ROOMTAP_FLEET_ROOMS (6), ROOMTAP_FLEET_LIVE (1 in 3 rooms),
/// ROOMTAP_FLEET_KILL_EVERY (6 s), ROOMTAP_FLEET_LIVE_SECONDS (8: live rooms last 1-2 times it),
/// ROOMTAP_FLEET_SENDERS (1 per live room). The report goes to stderr.
@Suite("CLI: fleet soak (short form)", .serialized)
struct FleetSoakTests {
    static func setting(_ name: String, _ fallback: Int) -> Int {
        ProcessInfo.processInfo.environment[name].flatMap(Int.init) ?? fallback
    }

    @Test func everyRoomEndsDoneOnceWhileWorkersAreKilled() throws {
        let workers = Self.setting("ROOMTAP_FLEET_WORKERS", 2)
        let roomCount = Self.setting("ROOMTAP_FLEET_ROOMS", 6)
        let liveEvery = Self.setting("ROOMTAP_FLEET_LIVE", 3)
        let killEvery = Self.setting("ROOMTAP_FLEET_KILL_EVERY", 6)
        let liveSeconds = Self.setting("ROOMTAP_FLEET_LIVE_SECONDS", 8)
        // Senders per live room: 3 in make fleet, 1 in make test's short form (the other suites
        // run beside it on two cores and some of them measure timing).
        let sendersPerRoom = Self.setting("ROOMTAP_FLEET_SENDERS", 1)
        let lease = 2.0
        let redis = try RedisTestServer()
        let root = try temporaryDirectory("fleet-soak")
        let speakers = ["alice", "bob", "carol"]
        var live: Set<String> = []
        for k in 0..<roomCount {
            let id = "room-\(k)"
            if k % liveEvery == liveEvery - 1 {
                live.insert(id)
                try roomtap(
                    [
                        "submit", "--redis", redis.url, "--id", id, "--", "record", "--listen", "127.0.0.1:0",
                        "--duration",
                        String(liveSeconds + (k % 4) * liveSeconds / 3),  // 30-60 s in make fleet
                    ], expect: 0)
            } else {
                let count = 3 + k % 6  // 3-8 speakers
                let files = (0..<count).flatMap { s in
                    ["--file", "\(speakers[s % 3])\(s)=\(sample(speakers[s % 3]))@\(Double(s) * 0.5)"]
                }
                try roomtap(
                    ["submit", "--redis", redis.url, "--id", id, "--", "record"] + files + ["--mix"], expect: 0)
            }
        }
        func start(_ n: Int) throws -> CLIRunner.Running {
            try CLIRunner.start([
                "worker", "--redis", redis.url, "--name", "w\(n)", "--spool", root.appendingPathComponent("w\(n)").path,
                "--lease-seconds", String(lease), "--capacity", "24",
            ])
        }
        var running = try (0..<workers).map(start)
        // Live rooms: senders (speakers, one SSRC each, as an SFU forwards them) that follow the
        // room to its new address.
        let liveRooms = live
        let followers = Locked<[String: (address: String, senders: [RTPTestSender], index: Int)]>([:])
        let stop = Locked(false)
        let follower = Thread {
            while !stop.withLock({ $0 }) {
                let outcome = try? CLIRunner.run(["jobs", "--redis", redis.url, "--json"])
                let jobs =
                    (outcome.flatMap { try? JSONSerialization.jsonObject(with: Data($0.stdout.utf8)) }
                        as? [[String: Any]]) ?? []
                for job in jobs {
                    guard let id = job["id"] as? String, liveRooms.contains(id), let listen = job["listen"] as? String,
                        !listen.isEmpty, let address = ListenAddress(listen)
                    else { continue }
                    followers.withLock { table in
                        guard table[id]?.address != listen else { return }
                        let index = (table[id]?.index ?? -1) + 1
                        let room = UInt32(id.dropFirst("room-".count)) ?? 0
                        let senders = (0..<sendersPerRoom).map { speaker in
                            let sender = RTPTestSender(
                                pcm: TestSignal.sine(
                                    frequency: 300 + 110 * Double(speaker), samples: 48_000 * (2 * liveSeconds + 4),
                                    amplitude: 0.4),
                                to: address, ssrc: 0xC0DE_0000 | room << 4 | UInt32(speaker),
                                firstSequence: UInt16(truncatingIfNeeded: 1 + index * 4000),
                                firstTimestamp: UInt32(truncatingIfNeeded: 1 + index * 4000 * 960))
                            sender.start()
                            return sender
                        }
                        table[id] = (listen, senders, index)
                    }
                }
                _ = waitUntil(timeout: .milliseconds(200), every: .milliseconds(20)) { stop.withLock { $0 } }
            }
        }
        follower.start()
        var kills = 0
        var lastKill = Date()
        let began = Date()
        var reclaimTimes: [Double] = []
        func states() -> [String: [String: Any]] {
            let outcome = try? CLIRunner.run(["jobs", "--redis", redis.url, "--json"])
            let jobs =
                (outcome.flatMap { try? JSONSerialization.jsonObject(with: Data($0.stdout.utf8)) } as? [[String: Any]])
                ?? []
            return Dictionary(uniqueKeysWithValues: jobs.compactMap { j in (j["id"] as? String).map { ($0, j) } })
        }
        let finished = try waitUntil(timeout: .seconds(60 + roomCount * 20), every: .milliseconds(250)) {
            let now = states()
            if now.count == roomCount,
                now.values.allSatisfy({ ["done", "failed", "cancelled"].contains($0["state"] as? String ?? "") })
            {
                return true
            }
            if Date().timeIntervalSince(lastKill) >= Double(killEvery) {
                let victim = kills % workers
                running[victim].signal(SIGKILL)
                _ = running[victim].wait(timeout: 30)
                let killedAt = Date()
                let held = now.filter {
                    $0.value["worker"] as? String == "w\(victim)" && $0.value["state"] as? String == "running"
                }
                running[victim] = try start(victim)
                kills += 1
                lastKill = Date()
                for id in held.keys {
                    _ = waitUntil(timeout: .seconds(20), every: .milliseconds(100)) {
                        (states()[id]?["epoch"] as? Int ?? 0) > (held[id]?["epoch"] as? Int ?? 0)
                            || (states()[id]?["state"] as? String) == "done"
                    }
                    reclaimTimes.append(Date().timeIntervalSince(killedAt))
                }
            }
            return false
        }
        stop.withLock { $0 = true }
        // CPU: each running worker's own (the fleet's overhead) and its reaped recorders' (the rooms).
        let cpu = running.map { Self.cpuSeconds(of: $0.pid) }
        let workerCPU = cpu.reduce(0) { $0 + $1.own }
        let recorderCPU = cpu.reduce(0) { $0 + $1.children }
        for w in running { w.signal(SIGTERM) }
        for w in running { _ = w.wait(timeout: 60) }
        let final = states()
        #expect(finished, "every room ended: \(final.mapValues { $0["state"] ?? "?" })")
        #expect(final.count == roomCount)
        var gapsLost: [Double] = []
        for (id, job) in final {
            #expect(job["state"] as? String == "done", "\(id): \(job["state"] ?? "?") \(job["error"] ?? "")")
            let rooms = (0..<workers).filter {
                FileManager.default.fileExists(atPath: root.appendingPathComponent("w\($0)/\(id)/room/room.json").path)
            }
            #expect(rooms.count == 1, "\(id) finished exactly once (in \(rooms.count) spools)")
            for gap in job["gaps"] as? [[String: Any]] ?? [] {
                let lost = (gap["to"] as? Double ?? 0) - (gap["from"] as? Double ?? 0)
                gapsLost.append(lost)
                let detail =
                    "\(id): \(lost) s lost (\(gap["from"] ?? "?")-\(gap["to"] ?? "?") s: \(gap["reason"] ?? "")); "
                    + "parts \(job["parts"] ?? "?")"
                #expect(lost < lease * 2 + 4, "\(detail)")
            }
        }
        let mean = gapsLost.isEmpty ? 0 : gapsLost.reduce(0, +) / Double(gapsLost.count)
        let reclaimMean = reclaimTimes.isEmpty ? 0 : reclaimTimes.reduce(0, +) / Double(reclaimTimes.count)
        SoakReport.note(
            "fleet soak: \(workers) workers, \(roomCount) rooms (\(live.count) live), \(kills) SIGKILLs in "
                + String(format: "%.0f s", Date().timeIntervalSince(began))
                + "; done \(final.values.filter { $0["state"] as? String == "done" }.count)/\(roomCount); "
                + "failovers with a gap \(gapsLost.count), audio lost max "
                + String(format: "%.2f", gapsLost.max() ?? 0)
                + " s mean " + String(format: "%.2f", mean) + " s; time to reclaim mean "
                + String(format: "%.2f", reclaimMean)
                + " s max " + String(format: "%.2f", reclaimTimes.max() ?? 0) + " s; duplicate runs 0 checked"
                + String(
                    format: "; CPU of the last worker incarnations %.2f s vs their recorders %.2f s (%.1f %%)",
                    workerCPU, recorderCPU, recorderCPU > 0 ? 100 * workerCPU / recorderCPU : 0)
                + final.values.filter { $0["state"] as? String != "done" }.map {
                    "; \($0["id"] ?? "?") \($0["state"] ?? "?"): \($0["error"] ?? "")"
                }.joined())
    }
}

extension FleetSoakTests {
    /// CPU seconds of a process (utime + stime) and of its reaped children (cutime + cstime),
    /// from /proc/PID/stat (proc(5): fields 14-17, in clock ticks).
    static func cpuSeconds(of pid: Int32) -> (own: Double, children: Double) {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return (0, 0) }
        // After "pid (comm)": field 3 (state) is the first; utime is field 14.
        let fields = text[text.index(after: close)...].split(separator: " ").compactMap { Double($0) }
        let tick = Double(sysconf(Int32(_SC_CLK_TCK)))
        guard fields.count > 14, tick > 0 else { return (0, 0) }
        return ((fields[10] + fields[11]) / tick, (fields[12] + fields[13]) / tick)
    }
}

private enum SoakReport {
    static func note(_ text: String) { FileHandle.standardError.write(Data((text + "\n").utf8)) }
}
