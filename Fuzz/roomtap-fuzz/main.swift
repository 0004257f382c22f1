@main struct Fuzz { static func main() {} }
