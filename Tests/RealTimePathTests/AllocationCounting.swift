import CAllocationCounter
import Testing

/// True in optimised builds: Swift's debug code allocates where optimised code does not (about 3
/// times per tick per track), so the counts mean something only in the build users run.
#if DEBUG
    let isOptimizedBuild = false
#else
    let isOptimizedBuild = true
#endif

/// The parent of every allocation-counting suite: the counter is one process-wide number, so these
/// suites run one at a time (`.serialized` applies to everything nested here). `make test` runs
/// them on the release build.
@Suite(
    "Heap allocations on real-time paths", .serialized,
    .enabled(if: isOptimizedBuild, "allocation counts are meaningful in optimised builds only (make test)"),
    .enabled(if: roomtap_allocation_counting_available() == 1, "a sanitizer owns malloc in this build"))
enum AllocationCounting {}
