import CAllocationCounter
import Foundation
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
///
/// The suites always run: under AddressSanitizer or ThreadSanitizer (`make sanitize`) they drive
/// the real-time paths like any other test. Only the counts are then not asserted (see
/// ``allocationCountsAsserted``).
@Suite("Heap allocations on real-time paths", .serialized)
enum AllocationCounting {}

/// True when the allocation counts are asserted: an optimised build (`make test`), the counter
/// owning malloc (not a sanitizer's build) and `ROOMTAP_ALLOCATION_COUNTING` not set to `0`.
let allocationCountsAsserted =
    isOptimizedBuild && roomtap_allocation_counting_available() == 1
    && ProcessInfo.processInfo.environment["ROOMTAP_ALLOCATION_COUNTING"] != "0"
