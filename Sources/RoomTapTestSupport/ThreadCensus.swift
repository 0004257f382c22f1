import Foundation

/// This process's threads as the kernel names them (`/proc/self/task/*/comm`, at most 15 bytes of
/// a name), for tests that count threads: one receive thread per room, a few writers for many
/// files. Linux only. Thread: any.
public enum ThreadCensus {
    /// The kernel's name of thread `tid` of this process; nil once it has gone.
    public static func name(of tid: Int) -> String? {
        (try? String(contentsOfFile: "/proc/self/task/\(tid)/comm", encoding: .utf8))?.trimmingCharacters(
            in: .newlines)
    }

    /// Thread ids of the threads whose name, as Linux keeps it (its first 15 bytes), is `name`
    /// (or, with `prefix`, starts with it).
    public static func ids(named name: String, prefix: Bool = false) -> Set<Int> {
        let kept = String(decoding: Array(name.utf8.prefix(15)), as: UTF8.self)
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return Set(
            tasks.compactMap { Int($0) }.filter { tid in
                guard let comm = Self.name(of: tid) else { return false }
                return prefix ? comm.hasPrefix(kept) : comm == kept
            })
    }

    /// How many threads are named `name`.
    public static func count(named name: String) -> Int { ids(named: name).count }

    /// Waits (up to 10 s, a loaded machine) until `count(named:)` is `expected`; whether it was.
    public static func waitFor(named name: String, count expected: Int) -> Bool {
        waitUntil { count(named: name) == expected }
    }
}
