// Placeholder until the core benchmarks land.
enum CoreBenchmarks {
    static func run(arguments: [String]) throws {}
    static func loadChild() throws {}
}
