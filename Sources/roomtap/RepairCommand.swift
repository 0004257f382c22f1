import RoomTap

/// `roomtap repair FILE...`: make WAV files cut short readable again.
enum RepairCommand {
    static func run(_ args: ParsedArguments) throws {
        let files = args.positionals
        guard !files.isEmpty else {
            throw UsageError(description: "no files: give one or more WAV files to repair", command: "repair")
        }
        var failures: [String] = []
        for path in files {
            do {
                let report = try WAVRepair.repair(path: path)
                if report.changed {
                    print(
                        "\(path): repaired: \(report.samplesAfter) samples readable (header said \(report.samplesStated))"
                            + (report.bytesTrimmed > 0
                                ? ", \(report.bytesTrimmed) trailing byte(s) of a partial sample trimmed" : ""))
                } else {
                    print("\(path): intact: \(report.samplesAfter) samples")
                }
            } catch {
                failures.append(error.description)
            }
        }
        if failures.count == 1 { throw RuntimeError(description: failures[0]) }
        if failures.count > 1 {
            for failure in failures.dropLast() { CommandDispatch.printError(failure) }
            throw RuntimeError(description: failures.last!)
        }
    }
}
