public import Foundation
import RoomTapSync

#if canImport(Glibc)
    import Glibc
#endif

/// The directory a test process writes its files under, `/tmp/roomtap-tests/PID/`: removed with
/// everything in it when the process exits (`atexit`), so a run of `make test` leaves nothing
/// behind (a full run writes about 1 GB). `ROOMTAP_KEEP_TEST_FILES=1` keeps it for a look after a
/// failure. A process that died before its exit handler (killed, crashed) leaves its directory;
/// the next test process removes the directories of processes that no longer run. Short enough
/// for Unix socket paths (107 bytes). Thread: any; made once per process.
public enum TestScratch {
    /// `/tmp/roomtap-tests/PID`, created on first use.
    public static let root: String = {
        let base = "/tmp/roomtap-tests"
        mkdir(base, 0o1777)
        removeLeftovers(in: base)
        let root = "\(base)/\(getpid())"
        try? FileManager.default.removeItem(atPath: root)  // a dead process's, with this pid
        mkdir(root, 0o700)
        if ProcessInfo.processInfo.environment["ROOMTAP_KEEP_TEST_FILES"] != "1" {
            atexit { try? FileManager.default.removeItem(atPath: TestScratch.root) }
        }
        return root
    }()

    /// A fresh directory `root/LABEL-N` (LABEL: the letters and digits of `label`).
    public static func directory(_ label: String) throws -> URL {
        let n = counter.withLock { n -> Int in
            n += 1
            return n
        }
        let url = URL(fileURLWithPath: "\(root)/\(label.filter { $0.isLetter || $0.isNumber })-\(n)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    private static let counter = Locked(0)

    /// Removes `base/PID` of every PID that no longer runs.
    private static func removeLeftovers(in base: String) {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: base)) ?? [] {
            guard let pid = pid_t(name), pid != getpid() else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH { try? FileManager.default.removeItem(atPath: "\(base)/\(name)") }
        }
    }
}
