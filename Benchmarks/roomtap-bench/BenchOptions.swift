import Foundation

struct BenchOptions {
    var seconds: Double = 60
    var repeats = 5
    /// Only run the bare decode loop once over these files (for `valgrind --tool=callgrind`).
    var bareOnly: [String] = []

    static func parse() -> BenchOptions {
        var options = BenchOptions()
        var args = CommandLine.arguments.dropFirst().makeIterator()
        while let arg = args.next() {
            switch arg {
            case "--seconds": options.seconds = Double(args.next() ?? "") ?? options.seconds
            case "--repeats": options.repeats = Int(args.next() ?? "") ?? options.repeats
            case "--bare-only": while let file = args.next() { options.bareOnly.append(file) }
            default:
                FileHandle.standardError.write(
                    Data("usage: roomtap-bench [--seconds S] [--repeats N] | --bare-only FILE...\n".utf8))
                exit(64)
            }
        }
        return options
    }
}
