import CAllocationCounter
import Testing

/// The parent of every allocation-counting suite: the counter is one process-wide number, so these
/// suites run one at a time (`.serialized` applies to everything nested here).
@Suite(
    "Heap allocations on real-time paths", .serialized,
    .enabled(if: roomtap_allocation_counting_available() == 1, "a sanitizer owns malloc in this build"))
enum AllocationCounting {}
