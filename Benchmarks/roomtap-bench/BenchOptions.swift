import Foundation

struct BenchOptions {
    var seconds: Double = 60
    var repeats = 3

    static func parse() -> BenchOptions {
        var options = BenchOptions()
        var args = CommandLine.arguments.dropFirst().makeIterator()
        while let arg = args.next() {
            switch arg {
            case "--seconds": options.seconds = Double(args.next() ?? "") ?? options.seconds
            case "--repeats": options.repeats = Int(args.next() ?? "") ?? options.repeats
            default:
                FileHandle.standardError.write(Data("usage: roomtap-bench [--seconds S] [--repeats N]\n".utf8))
                exit(64)
            }
        }
        return options
    }
}
