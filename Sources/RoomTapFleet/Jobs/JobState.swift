/// Where a job is in its life. Stored as its raw value in the job's hash.
public enum JobState: String, Sendable, CaseIterable {
    /// Submitted, waiting for a worker.
    case queued
    /// A worker holds its lease and records it.
    case running
    /// Its worker is gone or handing it over; the next worker to claim it continues it.
    case moving
    /// Recorded; its files are going to storage.
    case uploading
    case done
    case failed
    case cancelled

    /// True when nothing more will happen to the job.
    public var isFinished: Bool { self == .done || self == .failed || self == .cancelled }
}
