import Foundation
public import RoomTapSinks
import RoomTapTestSupport

/// WAV files for tests: write one from samples, copy or cut its bytes, run sox on it.
public enum WAVFixtures {
    /// Writes interleaved `samples` (padded to whole 10 ms frames) to a finished WAV file at `path`.
    @discardableResult
    public static func write(
        _ samples: [Int16], channels: Int, to path: String, options: WAVWriter.Options = .init()
    ) throws -> WAVWriter {
        var options = options
        options.syncOnFinish = false
        let writer = try WAVWriter(path: path, channels: channels, options: options)
        try FrameFeeding.feed(samples, channels: channels, to: writer)
        try writer.finish()
        return writer
    }

    /// The bytes of the file at `path`.
    public static func bytes(_ path: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// Writes `bytes` to `path`, replacing it.
    public static func setBytes(_ bytes: [UInt8], _ path: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    /// Copies the first `length` bytes of `source` to `destination` (a file cut short).
    public static func copyPrefix(of source: String, length: Int, to destination: String) throws {
        try setBytes(Array(try bytes(source).prefix(length)), destination)
    }

    /// The path of an executable in the usual bin directories, or nil.
    public static func tool(_ name: String) -> String? {
        ["/usr/bin", "/usr/local/bin", "/bin"].map { "\($0)/\(name)" }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Runs `executable arguments...`, returns its status and output (stdout then stderr).
    public static func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = ChildProcesses.pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        try ChildProcesses.run(process)
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}
