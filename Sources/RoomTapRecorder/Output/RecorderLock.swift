import Foundation
import Glibc

/// `DIR/.roomtap.lock`: held with flock(2) `LOCK_EX` by the recorder that writes into DIR, from
/// before it removes or creates anything there until its room.json is final; it holds the
/// recorder's pid. Another `record` (even with `--force`), `repair` and `export` refuse a DIR
/// whose lock is held ("recorder pid N is recording into DIR"). The kernel drops a lock when its
/// process dies, even by SIGKILL, so a crashed recorder never leaves DIR refused: the file it
/// leaves behind is only a name.
///
/// Thread: any; each call blocks briefly on the file system.
final class RecorderLock: Sendable {
    static let fileName = ".roomtap.lock"

    private let fd: Int32
    private let path: String

    private init(fd: Int32, path: String) {
        self.fd = fd
        self.path = path
    }

    /// The pid of the recorder recording into `directory` now, nil when none (0 when the lock is
    /// held but its file does not say by whom). Never blocks on the lock.
    static func holder(of directory: String) -> Int32? {
        let fd = open(RecordingPlan.join(directory, fileName), O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        if flock(fd, LOCK_SH | LOCK_NB) == 0 {
            flock(fd, LOCK_UN)
            return nil
        }
        return errno == EWOULDBLOCK ? pid(in: fd) : nil
    }

    /// The one-line refusal when `directory` has a live recorder; `what` says what was refused.
    static func refusal(_ directory: String, _ what: String) -> RuntimeError? {
        guard let pid = holder(of: directory) else { return nil }
        let who = pid > 0 ? "recorder pid \(pid)" : "a recorder"
        return RuntimeError(description: "\(who) is recording into \(directory); \(what)")
    }

    /// Takes the lock of `directory` (which exists) for this process, or throws the refusal.
    static func acquire(directory: String) throws -> RecorderLock {
        let path = RecordingPlan.join(directory, fileName)
        for _ in 0..<3 {
            let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o644)
            guard fd >= 0 else {
                throw RuntimeError(
                    description: "cannot create \(path): \(String(cString: strerror(errno))); choose another --out")
            }
            guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
                let pid = pid(in: fd)
                close(fd)
                let who = pid > 0 ? "recorder pid \(pid)" : "a recorder"
                throw RuntimeError(
                    description: "\(who) is recording into \(directory); stop it first (roomtap stop) "
                        + "or choose another --out")
            }
            // The file may have been removed by the recorder that held it just before: lock the
            // file that is at the path, not an unlinked one.
            var held = stat()
            var named = stat()
            guard fstat(fd, &held) == 0, lstat(path, &named) == 0, held.st_ino == named.st_ino,
                held.st_dev == named.st_dev
            else {
                close(fd)
                continue
            }
            let text = Array("\(getpid())\n".utf8)
            _ = ftruncate(fd, 0)
            _ = pwrite(fd, text, text.count, 0)
            return RecorderLock(fd: fd, path: path)
        }
        throw RuntimeError(description: "\(directory) is being taken by another recorder; choose another --out")
    }

    /// Removes the lock file and drops the lock. Once.
    func release() {
        unlink(path)
        close(fd)
    }

    private static func pid(in fd: Int32) -> Int32 {
        var buffer = [UInt8](repeating: 0, count: 32)
        let n = pread(fd, &buffer, buffer.count, 0)
        guard n > 0 else { return 0 }
        return Int32(String(decoding: buffer[0..<n], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
            ?? 0
    }
}
