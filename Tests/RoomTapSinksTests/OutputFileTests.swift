import Foundation
import Glibc
import RoomTapFiles
import RoomTapSinks
import RoomTapTestSupport
import Testing

/// Output files are created exclusively and never through a link, replaced atomically (the old
/// bytes or the new, never half), and their failures are one-line ``OutputFileError``s.
@Suite struct OutputFileTests {
    private func bytes(_ path: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) }
    private func setBytes(_ bytes: [UInt8], _ path: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }
    private func listing(_ dir: TemporaryDirectory) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
    }

    @Test func exclusiveCreateRefusesAnExistingFile() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("take.flac")
        try setBytes(Array("precious".utf8), path)
        let error = #expect(throws: OutputFileError.self) { try OutputFile.create(path: path, overwrite: false) }
        #expect(error?.kind == .alreadyExists && error?.errno == EEXIST)
        #expect(error?.description == "\(path): already exists; pass --force to overwrite it, or choose another --out")
        #expect(try bytes(path) == Array("precious".utf8))
    }

    @Test func createNeverWritesThroughASymbolicLink() throws {
        let dir = try TemporaryDirectory()
        let target = dir.file("target")
        let link = dir.file("link.wav")
        try setBytes(Array("target".utf8), target)
        #expect(symlink(target, link) == 0)
        let exclusive = #expect(throws: OutputFileError.self) { try OutputFile.create(path: link, overwrite: false) }
        #expect(exclusive?.kind == .alreadyExists)
        let overwriting = #expect(throws: OutputFileError.self) { try OutputFile.create(path: link, overwrite: true) }
        #expect(overwriting?.kind == .cannotOpen && overwriting?.errno == ELOOP)
        #expect(try bytes(target) == Array("target".utf8))
    }

    @Test func createRefusesADirectoryAndADevice() throws {
        let dir = try TemporaryDirectory()
        let directory = #expect(throws: OutputFileError.self) { try OutputFile.create(path: dir.path, overwrite: true) }
        #expect(directory?.kind == .cannotOpen && directory?.description.hasPrefix(dir.path + ": ") == true)
        let device = #expect(throws: OutputFileError.self) { try OutputFile.create(path: "/dev/null", overwrite: true) }
        #expect(device?.message == "is not a regular file; choose a file path for --out")
    }

    @Test func atomicReplaceWritesTheNewBytesAndLeavesNoTemporaryFile() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("room.json")
        try setBytes(Array("old".utf8), path)
        try OutputFile.writeAtomically(path: path, bytes: Array("new contents".utf8))
        #expect(try bytes(path) == Array("new contents".utf8))
        try OutputFile.writeAtomically(path: path, bytes: [])
        #expect(try bytes(path) == [])
        #expect(try listing(dir) == ["room.json"])
    }

    @Test func atomicReplaceWithoutOverwriteKeepsTheOldFile() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("room.json")
        try setBytes(Array("old".utf8), path)
        let error = #expect(throws: OutputFileError.self) {
            try OutputFile.writeAtomically(path: path, bytes: Array("new".utf8), overwrite: false)
        }
        #expect(error?.kind == .alreadyExists)
        #expect(try bytes(path) == Array("old".utf8) && (try listing(dir)) == ["room.json"])
    }

    @Test func atomicReplaceThatCannotRenameFailsCleanly() throws {
        // A directory where the file should be: the rename fails (EISDIR); what was there stays.
        let dir = try TemporaryDirectory()
        let path = dir.file("report")
        #expect(mkdir(path, 0o755) == 0)
        try setBytes(Array("inside".utf8), path + "/keep")
        let error = #expect(throws: OutputFileError.self) {
            try OutputFile.writeAtomically(path: path, bytes: Array("new".utf8))
        }
        #expect(error?.kind == .writeFailed && error?.errno == EISDIR)
        #expect(error?.description.hasPrefix("\(path): renaming the new file into place failed: ") == true)
        #expect(error?.description.contains(".tmp") == false)
        #expect(try bytes(path + "/keep") == Array("inside".utf8))
        #expect(try listing(dir) == ["report"])
    }

    @Test func atomicReplaceIntoAMissingDirectoryNamesIt() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("no/such/room.json")
        let error = #expect(throws: OutputFileError.self) { try OutputFile.writeAtomically(path: path, bytes: [1]) }
        #expect(error?.kind == .cannotOpen && error?.errno == ENOENT)
        #expect(
            error?.description.hasPrefix("\(path): cannot create: No such file or directory; create the directory ")
                == true)
    }

    @Test func atomicReplaceReplacesALinkRatherThanItsTarget() throws {
        let dir = try TemporaryDirectory()
        let target = dir.file("target")
        let link = dir.file("room.json")
        try setBytes(Array("target".utf8), target)
        #expect(symlink(target, link) == 0)
        try OutputFile.writeAtomically(path: link, bytes: Array("new".utf8))
        var info = stat()
        #expect(lstat(link, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG)
        #expect(try bytes(link) == Array("new".utf8) && (try bytes(target)) == Array("target".utf8))
    }

    @Test func anAbandonedReplacementLeavesTheOldFile() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("seg.wav")
        try setBytes(Array("old".utf8), path)
        let replacement = try OutputFile.Replacement.begin(path: path, overwrite: true)
        let code = Array("half".utf8).withUnsafeBytes {
            OutputFile.writeAll(fd: replacement.fd, $0.baseAddress!, count: 4)
        }
        #expect(code == 0)
        #expect(try listing(dir).count == 2)
        replacement.abandon()
        #expect(try bytes(path) == Array("old".utf8) && (try listing(dir)) == ["seg.wav"])
    }

    @Test func writeFailuresAreOneLineAndSayWhatToDo() {
        var byte: UInt8 = 1
        #expect(OutputFile.writeAll(fd: -1, &byte, count: 1) == EBADF)
        #expect(OutputFile.writeAll(fd: -1, &byte, count: 1, at: 0) == EBADF)
        #expect(OutputFile.sync(fd: -1) == EBADF)
        let full = OutputFileError.failed(ENOSPC, path: "/rec/a.flac", doing: "writing")
        #expect(full.description == "/rec/a.flac: writing failed: No space left on device; free disk space")
        #expect(full.errno == ENOSPC && full.kind == .writeFailed)
        let other = OutputFileError.failed(EIO, path: "/rec/a\nb.opus", doing: "fsync")
        #expect(other.description == "/rec/a b.opus: fsync failed: Input/output error; check the disk")
    }

    @Test(arguments: [AudioFileFormat.flac, .opus, .wav])
    func anEncodedFileFailureIsNotAWAVErrorAndNamesTheFile(format: AudioFileFormat) throws {
        let dir = try TemporaryDirectory()
        var options = EncodedFileWriter.Options()
        options.format = format
        // A directory in place of the file (overwriting: open(2) says EISDIR).
        options.overwrite = true
        let path = dir.file("track.\(format.rawValue)")
        #expect(mkdir(path, 0o755) == 0)
        var failure: (any Error)?
        do { _ = try EncodedFileWriter(path: path, channels: 1, options: options) } catch { failure = error }
        #expect(failure != nil && !(failure is WAVError))
        #expect((failure as? OutputFileError)?.kind == .cannotOpen)
        #expect("\(failure.map { "\($0)" } ?? "")".hasPrefix(path + ": "))
        // An existing file, not overwritten.
        options.overwrite = false
        let existing = dir.file("old.\(format.rawValue)")
        try setBytes(Array("precious".utf8), existing)
        do { _ = try EncodedFileWriter(path: existing, channels: 1, options: options) } catch { failure = error }
        #expect((failure as? OutputFileError)?.kind == .alreadyExists && !(failure is WAVError))
        #expect(try bytes(existing) == Array("precious".utf8))
    }
}
