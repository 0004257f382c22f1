// Swift 6.3.1 (swift-6.3.1-RELEASE, x86_64 Debian 12): a static stored property of the imported C
// struct `termios` (60 bytes: MemoryLayout<termios>.size == 60, as in C) gets 57 bytes of storage,
// so writing a whole `termios` into it (as tcgetattr does, or Swift's own assignment) overwrites the
// next 3 bytes of .bss: here the two statics declared after it. A top-level global of the same
// type gets its 60 bytes. Found by roomtap's AddressSanitizer debug pass (`roomtap watch`).
//
//   swiftc -O -parse-as-library StaticImportedStructStorage.swift -o repro   (-Onone: the same)
//   nm -S -n repro | grep ' [bB] '
//     ... 0000000000000039 b $s5repro6HolderC5savedSo7termiosVvpZ     <- 0x39 = 57 bytes
//     ... 0000000000000001 b $s5repro6HolderC4flagSbvpZ               <- at saved + 57
//     ... 0000000000000002 b $s5repro6HolderC5counts6UInt16VvpZ       <- at saved + 58
//   ./repro
//     termios size 60 flag true count 43947       (expected: flag false count 0)
//
// roomtap keeps no static stored C struct (RawTerminal keeps its termios in a heap allocation).
import Glibc

final class Holder {
    nonisolated(unsafe) static var saved = termios()
    nonisolated(unsafe) static var flag = false
    nonisolated(unsafe) static var count: UInt16 = 0
}

@inline(never) func fill(_ p: UnsafeMutablePointer<termios>) {
    memset(p, 0xAB, MemoryLayout<termios>.size)  // what tcgetattr does: a whole termios
}

@main enum Main {
    static func main() {
        Holder.flag = false
        Holder.count = 0
        fill(&Holder.saved)
        print("termios size", MemoryLayout<termios>.size, "flag", Holder.flag, "count", Holder.count)
    }
}
