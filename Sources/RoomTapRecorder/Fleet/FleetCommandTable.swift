/// The fleet's commands (docs/OPERATIONS.md): `worker`, `submit`, `jobs`, `cancel`.
extension CommandTable {
    static let redisOption = OptionSpec(
        "--redis", .value, "URL", help: "The fleet's Redis: redis://HOST:PORT[/DB] (or unix:///PATH).")
    static let prefixOption = OptionSpec(
        "--redis-prefix", .value, "PREFIX", help: "The prefix of every key (default roomtap:; one per fleet).")

    static let fleetCommands: [CommandSpec] = [
        CommandSpec(
            "worker", group: .fleet, summary: "Record rooms from the fleet's queue, each as its own recorder",
            options: [
                redisOption, prefixOption,
                OptionSpec(
                    "--name", .value, "NAME", help: "This worker's name (default HOST-PID); unique in the fleet."),
                OptionSpec(
                    "--spool", .value, "DIR",
                    help: "Where rooms are recorded (default /var/spool/roomtap as root,\n"
                        + "else ~/.local/state/roomtap/spool): DIR/ID/room/ when done."),
                OptionSpec(
                    "--upload", .value, "s3://BUCKET/PREFIX",
                    help: "Upload each finished room to PREFIX/ID/; live rooms upload their\n"
                        + "segments to PREFIX/ID/parts/ as they record, so a room whose\n"
                        + "machine dies is finished whole elsewhere (docs/OPERATIONS.md)."),
                OptionSpec(
                    "--segment-seconds", .value, "N",
                    help: "Seconds per segment of a live room, 1-3600 (default 10): what a\n"
                        + "dead machine can cost a room beyond its lease."),
                OptionSpec(
                    "--capacity", .value, "TRACKS",
                    help: "Tracks recorded at once at most (default 32 per core; see\ndocs/OPERATIONS.md, Capacity)."),
                OptionSpec(
                    "--failover-reserve", .value, "TRACKS",
                    help: "Tracks of --capacity kept for live rooms taken over from another\n"
                        + "worker (default an eighth, at least 3): new jobs leave it free."),
                OptionSpec(
                    "--lease-seconds", .value, "S",
                    help: "A room's lease (default 10, 1-300): a dead worker's rooms are\ntaken over after this long."),
                OptionSpec(
                    "--metrics", .value, "HOST:PORT",
                    help: "Serve /metrics (Prometheus), /healthz and /readyz (port 0: any)."),
                OptionSpec(
                    "--webhook", .value, "URL",
                    help: "POST job.started, room.listening, room.moved, job.done, job.failed\n"
                        + "(signed with ROOMTAP_WEBHOOK_SECRET)."),
            ], helpIntro: FleetHelp.workerIntro, run: { try WorkerCommand.run($0, $1) }),
        CommandSpec(
            "submit", group: .fleet, summary: "Queue a room for the fleet: roomtap submit --redis URL -- record ARGS",
            options: [
                redisOption, prefixOption,
                OptionSpec(
                    "--id", .value, "ID", help: "The job's id (default job-DATE-TIME-RANDOM); A-Z a-z 0-9 . _ -"),
                OptionSpec(
                    "--tracks", .value, "N",
                    help: "Tracks the room will have, for capacity (default: its --file\ncount, or 3 for a live room)."),
            ], takesPositionals: true, helpIntro: FleetHelp.submitIntro, run: { try SubmitCommand.run($0, $1) }),
        CommandSpec(
            "jobs", group: .fleet, summary: "List the fleet's jobs: state, worker, attempt, listen address, error",
            options: [
                redisOption, prefixOption,
                OptionSpec(
                    "--json", .flag,
                    help: "Print one JSON array of jobs (id, state, worker, epoch, listen, error, ...)."),
            ], takesPositionals: true, helpIntro: FleetHelp.jobsIntro, run: { try JobsCommand.run($0, $1) }),
        CommandSpec(
            "cancel", group: .fleet, summary: "Cancel a job (a running room stops and keeps what it recorded)",
            options: [redisOption, prefixOption], takesPositionals: true, helpIntro: FleetHelp.cancelIntro,
            run: { try JobsCommand.cancel($0, $1) }),
    ]
}

enum FleetHelp {
    static let workerIntro = """
        OVERVIEW: Take room jobs from the fleet's Redis stream (roomtap:jobs, group roomtap-workers)
        and record each as its own `roomtap record`, holding a lease per room. A worker that dies
        loses its rooms for at most a lease: another worker takes them over (a live room listens
        again, its files joined with a gap; an offline room starts again). SIGTERM drains: no new
        work, offline rooms finish, live rooms are handed over at once; a second SIGTERM or SIGINT
        ends at once.

        USAGE: roomtap worker --redis URL [--name NAME] [--spool DIR] [--capacity TRACKS]
                              [--lease-seconds S] [--metrics HOST:PORT] [--webhook URL]


        """
    static let submitIntro = """
        OVERVIEW: Queue a room: the arguments of `roomtap record` after `--`, without --out (the
        worker chooses the directory: SPOOL/ID/room/). Relative paths are made absolute here.
        Prints the job id.

        USAGE: roomtap submit --redis URL [--id ID] [--tracks N] -- record ARGS...

        EXAMPLES:
          roomtap submit --redis redis://10.0.0.5:6379 --id standup -- record \\
              --file alice=/data/alice.opus --file bob=/data/bob.opus --mix
          roomtap submit --redis redis://10.0.0.5:6379 -- record --listen 0.0.0.0:0 --duration 3600


        """
    static let jobsIntro = """
        OVERVIEW: Every job with its state (queued, running, moving, uploading, done, failed,
        cancelled), worker, attempt (epoch), the listen address of a live room, times, outputs and
        last error; or one job (ID).

        USAGE: roomtap jobs --redis URL [--json] [ID]


        """
    static let cancelIntro = """
        OVERVIEW: Cancel a job: a queued job never runs; a running room stops as with Ctrl-C (its
        files are kept, state cancelled).

        USAGE: roomtap cancel --redis URL ID


        """
}
