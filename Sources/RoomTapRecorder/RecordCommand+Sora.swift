/// The options of `record --sora-recording DIR` (see ``RecordingPlan/soraInputs(_:naming:)``).
extension RecordCommand {
    /// Reads `--sora-recording` and `--sora-name-key`. Usage errors: a key without a recording,
    /// an empty key, a recording with --janus-room (two recorders' timelines) or --align wallclock
    /// (a Sora recording is placed by its own JSONs).
    static func parseSora(_ args: ParsedArguments, into options: inout Options) throws(UsageError) {
        options.soraRecording = args.value("--sora-recording")
        options.soraNameKey = args.value("--sora-name-key")
        if let key = options.soraNameKey {
            guard options.soraRecording != nil else {
                throw UsageError(
                    description: "--sora-name-key \(key) names the tracks of --sora-recording DIR; give it too",
                    command: "record")
            }
            guard !key.isEmpty else {
                throw UsageError(
                    description: "--sora-name-key names no key; give the key of the connections' metadata that "
                        + "holds their names (e.g. --sora-name-key display_name)", command: "record")
            }
        }
        guard let folder = options.soraRecording else { return }
        guard !folder.isEmpty else {
            throw UsageError(
                description: "--sora-recording names no folder; give the folder Sora wrote for one recording",
                command: "record")
        }
        if options.janusRoom != nil {
            throw UsageError(
                description: "--sora-recording and --janus-room are two recorders' rooms on two timelines; record "
                    + "each with its own roomtap record", command: "record")
        }
    }
}
