import Foundation
import Glibc
import RoomTapCore
import RoomTapMediaTestSupport
import RoomTapSinks
import RoomTapTestSupport
import Testing

/// Files are never overwritten by accident, and every error is one line that says what to do.
@Suite struct WAVErrorTests {
    @Test func anExistingFileIsRefusedAndLeftUnchanged() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("take1.wav")
        let original = Array("precious recording".utf8)
        try WAVFixtures.setBytes(original, path)
        let error = #expect(throws: WAVError.self) { try WAVWriter(path: path, channels: 1) }
        #expect(error?.kind == .alreadyExists && error?.errno == EEXIST)
        #expect(
            error?.description == "\(path): already exists; pass --force to overwrite it, or choose another --out")
        #expect(try WAVFixtures.bytes(path) == original)
        #expect(throws: WAVError.self) { try WAVFileSink(path: path, channels: 1) }
        #expect(try WAVFixtures.bytes(path) == original)
    }

    @Test func overwriteReplacesAnExistingFile() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("take1.wav")
        try WAVFixtures.setBytes([UInt8](repeating: 7, count: 100_000), path)
        let input = fullScaleNoise(960)
        try WAVFixtures.write(input, channels: 1, to: path, options: testOptions { $0.overwrite = true })
        let (file, samples) = try WAVFile.readSamples(path: path)
        #expect(samples == input && file.fileSize == file.dataOffset + 1920)
    }

    @Test func aMissingDirectoryIsNamed() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("no/such/dir/a.wav")
        let error = #expect(throws: WAVError.self) { try WAVWriter(path: path, channels: 1) }
        #expect(error?.kind == .cannotOpen && error?.errno == ENOENT)
        #expect(error?.message.hasPrefix("cannot create: No such file or directory; create the directory ") == true)
        #expect(error?.message.contains(dir.file("no/such/dir")) == true)
    }

    @Test func anUnwritableDirectoryIsReported() throws {
        let dir = try TemporaryDirectory()
        let locked = dir.file("locked")
        try FileManager.default.createDirectory(atPath: locked, withIntermediateDirectories: false)
        chmod(locked, 0o555)
        defer { chmod(locked, 0o755) }
        // root ignores directory permissions; /sys refuses new files even to root.
        let path = geteuid() == 0 ? "/sys/roomtap-test.wav" : locked + "/a.wav"
        let error = #expect(throws: WAVError.self) { try WAVWriter(path: path, channels: 1) }
        #expect(error?.kind == .cannotOpen)
        #expect(
            error?.description == "\(path): cannot create: Permission denied; choose a writable directory with --out")
    }

    @Test func aDirectoryOrADeviceIsNotAFileToWrite() throws {
        let dir = try TemporaryDirectory()
        let asDirectory = #expect(throws: WAVError.self) {
            try WAVWriter(path: dir.path, channels: 1, options: testOptions { $0.overwrite = true })
        }
        #expect(asDirectory?.kind == .cannotOpen && asDirectory?.message.contains("not a directory") == true)
        let device = #expect(throws: WAVError.self) {
            try WAVWriter(path: "/dev/null", channels: 1, options: testOptions { $0.overwrite = true })
        }
        #expect(device?.message == "is not a regular file; choose a file path for --out")
        // A FIFO must be refused, not block the open waiting for a peer.
        let fifo = dir.file("pipe.wav")
        #expect(mkfifo(fifo, 0o644) == 0)
        let readFIFO = #expect(throws: WAVError.self) { try WAVFile.inspect(path: fifo) }
        #expect(readFIFO?.kind == .cannotOpen)
        #expect(throws: WAVError.self) { try WAVRepair.repair(path: fifo) }
        #expect(throws: WAVError.self) {
            try WAVWriter(path: fifo, channels: 1, options: testOptions { $0.overwrite = true })
        }
    }

    @Test func onlyMonoAndStereoAreWritten() throws {
        let dir = try TemporaryDirectory()
        let error = #expect(throws: WAVError.self) { try WAVWriter(path: dir.file("x.wav"), channels: 3) }
        #expect(error?.kind == .invalidArgument)
        #expect(!FileManager.default.fileExists(atPath: dir.file("x.wav")))
    }

    @Test func readersRejectWhatIsNotA16BitPCMWAVClearly() throws {
        let dir = try TemporaryDirectory()
        let text = dir.file("notes.wav")
        try WAVFixtures.setBytes(Array("RIFF....WAVX".utf8), text)
        #expect(throws: WAVError.self) { try WAVFile.inspect(path: text) }

        // A float WAV: a proper file, but not what roomtap reads.
        let float = dir.file("float.wav")
        var b: [UInt8] = Array("RIFF".utf8) + [36, 0, 0, 0] + Array("WAVEfmt ".utf8) + [16, 0, 0, 0]
        b += [3, 0, 1, 0, 0x80, 0xBB, 0, 0, 0, 0xEE, 2, 0, 4, 0, 32, 0] + Array("data".utf8) + [0, 0, 0, 0]
        try WAVFixtures.setBytes(b, float)
        let unsupported = #expect(throws: WAVError.self) { try WAVFile.inspect(path: float) }
        #expect(unsupported?.kind == .unsupportedFormat)

        // 16-bit PCM, but no data chunk: cut inside the header.
        let cut = dir.file("cut.wav")
        b[20] = 1  // PCM
        b[32] = 2  // block align
        b[34] = 16  // 16 bits
        try WAVFixtures.setBytes(Array(b.prefix(36)), cut)
        let damaged = #expect(throws: WAVError.self) { try WAVFile.inspect(path: cut) }
        #expect(damaged?.kind == .damaged && damaged?.message.contains("roomtap repair") == true)
    }

    @Test func everyMessageIsOneLine() throws {
        let error = WAVError(path: "a\nb.wav", message: "first line\nsecond line", kind: .damaged)
        #expect(error.description == "a b.wav: first line second line")
        let dir = try TemporaryDirectory()
        try WAVFixtures.setBytes([1, 2, 3], dir.file("exists.wav"))
        func failure(_ body: () throws -> Void) -> WAVError? {
            do { try body() } catch { return error as? WAVError }
            return nil
        }
        let errors = [
            failure { _ = try WAVWriter(path: dir.file("exists.wav"), channels: 1) },
            failure { _ = try WAVWriter(path: dir.file("missing/a.wav"), channels: 1) },
            failure { _ = try WAVWriter(path: dir.file("b.wav"), channels: 5) },
            failure { _ = try WAVFile.inspect(path: dir.file("exists.wav")) },
            failure { _ = try WAVFile.inspect(path: dir.path) },
            failure { _ = try WAVRepair.repair(path: dir.file("exists.wav")) },
        ].compactMap { $0 }
        #expect(errors.count == 6)
        for error in errors {
            #expect(!error.description.contains("\n") && error.description.hasPrefix(error.path + ": "))
        }
    }
}
