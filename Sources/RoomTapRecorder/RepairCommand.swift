import Foundation
import RoomTapAll

/// `roomtap repair FILE...|DIR`: make WAV, FLAC and Ogg Opus files cut short readable again; for a
/// recording's directory, every such file in it and then room.json brought up to what they hold.
enum RepairCommand {
    static func run(_ args: ParsedArguments, _ context: CommandContext) throws {
        let console = context.console
        let paths = args.positionals
        guard !paths.isEmpty else {
            throw UsageError(
                description: "no files: give one or more WAV files, or a recording's directory, to repair",
                command: "repair")
        }
        var failures: [String] = []
        for path in paths {
            var isDirectory: ObjCBool = false
            let exists = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
            // A recording still being written is not repaired under its recorder's feet.
            let recording = exists && isDirectory.boolValue ? path : DirectoryPath.parent(of: path)
            if let refusal = RecorderLock.refusal(recording, "repair it after it stops") {
                failures.append(refusal.description)
                continue
            }
            if exists, isDirectory.boolValue {
                repairDirectory(path, failures: &failures, console)
            } else {
                _ = repairFile(path, failures: &failures, console)
            }
        }
        if failures.count == 1 { throw RuntimeError(description: failures[0]) }
        if failures.count > 1 {
            for failure in failures.dropLast() { console.printError(failure) }
            throw RuntimeError(description: failures.last!)
        }
    }

    /// What a repair did to one file, for room.json: whether it changed, and its length in room samples.
    struct Repaired {
        var changed: Bool
        var roomSamples: Int64
    }

    /// Repairs one WAV (or FLAC: STREAMINFO, see ``FLACRepair``; or Ogg Opus: ``OggOpusRepair``) and prints its line; returns what
    /// it did, nil (and a failure) when it could not.
    private static func repairFile(_ path: String, failures: inout [String], _ console: Console) -> Repaired? {
        do {
            var rate = AudioFrame.sampleRate
            let report: WAVRepair.Report
            if path.lowercased().hasSuffix(".flac") {
                (report, rate) = try FLACRepair.repair(path: path)
            } else if path.lowercased().hasSuffix(".opus") {
                report = try OggOpusRepair.repair(path: path)  // granule positions: 48 kHz
                if report.changed {
                    console.print(
                        "\(path): repaired: \(report.samplesAfter) samples readable (to its last whole page), "
                            + (report.bytesTrimmed > 0 ? "\(report.bytesTrimmed) byte(s) of a cut page trimmed, " : "")
                            + "end of stream marked")
                    return Repaired(changed: true, roomSamples: report.samplesAfter)
                }
            } else {
                report = try WAVRepair.repair(path: path)
                rate = (try? WAVFile.inspect(path: path).sampleRate) ?? rate
            }
            if report.changed {
                console.print(
                    "\(path): repaired: \(report.samplesAfter) samples readable (header said \(report.samplesStated))"
                        + (report.bytesTrimmed > 0
                            ? ", \(report.bytesTrimmed) trailing byte(s) of a partial "
                                + (path.lowercased().hasSuffix(".flac") ? "frame" : "sample") + " trimmed" : ""))
            } else {
                console.print("\(path): intact: \(report.samplesAfter) samples")
            }
            return Repaired(
                changed: report.changed,
                roomSamples: report.samplesAfter * Int64(AudioFrame.sampleRate) / Int64(max(rate, 1)))
        } catch {
            failures.append(error.description)
            return nil
        }
    }

    /// Every WAV, FLAC and Ogg Opus file directly in `directory` (regular files; links are left
    /// alone), then its room.json.
    private static func repairDirectory(_ directory: String, failures: inout [String], _ console: Console) {
        // The lock file a recorder killed with SIGKILL left (nobody holds it: checked by the caller).
        unlink(RecordingPlan.join(directory, RecorderLock.fileName))
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
        } catch {
            failures.append("cannot list \(directory): \(error.localizedDescription)")
            return
        }
        var repaired: [String: Repaired] = [:]
        var found = 0
        for name in names
        where [".wav", ".flac", ".opus"].contains(where: name.lowercased().hasSuffix) && !name.hasPrefix(".") {
            let path = RecordingPlan.join(directory, name)
            var info = stat()
            guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { continue }
            found += 1
            repaired[name] = repairFile(path, failures: &failures, console)
        }
        let roomJSON = RecordingPlan.join(directory, "room.json")
        var info = stat()
        if found == 0 && lstat(roomJSON, &info) != 0 {
            failures.append(
                "\(directory) holds no recording (no WAV, FLAC or Ogg Opus file, no room.json); give the directory "
                    + "roomtap record --out wrote, or the files to repair")
            return
        }
        do {
            guard let report = try RoomReport.read(from: roomJSON) else {
                console.print(
                    "\(roomJSON): none (an older recording, or not a roomtap one): only the WAVs were repaired")
                return
            }
            try update(report, at: roomJSON, from: repaired, console)
        } catch {
            failures.append("\(error)")
        }
    }

    /// Brings room.json up to what the repaired files hold, when it is not already: each track's
    /// `samples` and `samplesWritten` from its file, the room's length from the longest file,
    /// `"state": "repaired"` (and `stoppedEarly` for a recording that was cut). A report of a
    /// finished recording whose files were all intact is left as it is, so a second run changes
    /// nothing. Tracks whose file is missing keep their figures (and are named on stderr).
    private static func update(
        _ report: RoomReport, at path: String, from repaired: [String: Repaired], _ console: Console
    ) throws {
        let wasCut = report.state == RoomReport.State.recording.rawValue
        let filesChanged = report.tracks.contains { repaired[$0.file]?.changed == true }
        guard wasCut || filesChanged else {
            console.print("\(path): intact: \(report.tracks.count) track(s), state \(report.state ?? "complete")")
            return
        }
        var updated = report
        var longest: Int64?
        for index in updated.tracks.indices {
            let file = updated.tracks[index].file
            guard let samples = repaired[file]?.roomSamples else {
                console.printWarning(
                    "\(path) lists \(file), which is not a readable audio file in the directory; its figures "
                        + "were left as they were")
                continue
            }
            updated.tracks[index].samples = samples
            updated.tracks[index].samplesWritten = samples
            longest = max(longest ?? 0, samples)
        }
        if let longest {
            updated.durationSamples = longest
            updated.durationSeconds = Double(longest) / Double(AudioFrame.sampleRate)
        }
        updated.state = RoomReport.State.repaired.rawValue
        if wasCut { updated.stoppedEarly = true }
        try updated.write(to: path, overwrite: true)
        console.print(
            "\(path): updated: \(updated.tracks.count) track(s), "
                + String(format: "%.2f s", updated.durationSeconds) + " of room, state repaired")
    }
}
