/// The Lua scripts that change a job (run with EVAL: atomic on the server). Every write of a
/// running job is *fenced*: it names the lease token `WORKER/EPOCH` it holds, and the script
/// refuses it (returns 0) unless the lease key still holds that token and the job's epoch is that
/// epoch. A worker that lost its lease (it stalled, Redis dropped it, another worker reclaimed the
/// room) can therefore never change the job again: not its state, its listen address, its outputs
/// nor its acknowledgement (a late XACK of an old owner is otherwise accepted: operations-notes).
enum FleetScripts {
    /// KEYS: job, index, stream. ARGV: id, now, group, then field/value pairs.
    /// Returns the entry id, or 0 when the id exists.
    static let submit = """
        if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
        pcall(redis.call, 'XGROUP', 'CREATE', KEYS[3], ARGV[3], '0', 'MKSTREAM')
        redis.call('HSET', KEYS[1], 'id', ARGV[1], 'state', 'queued', 'created', ARGV[2], 'epoch', '0')
        for i = 4, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
        redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
        local entry = redis.call('XADD', KEYS[3], '*', 'id', ARGV[1])
        redis.call('HSET', KEYS[1], 'entry', entry)
        return entry
        """

    /// KEYS: job, lease. ARGV: worker, ttl ms, now, entry.
    /// Returns {'claimed', epoch, previous worker, previous state} | {'finished', state} |
    /// {'held', token} | {'stale'} (an old delivery of a job handed out again) | {'missing'}.
    static let claim = """
        local state = redis.call('HGET', KEYS[1], 'state')
        if not state then return {'missing'} end
        if state == 'done' or state == 'failed' or state == 'cancelled' then return {'finished', state} end
        if redis.call('HGET', KEYS[1], 'entry') ~= ARGV[4] then return {'stale'} end
        local holder = redis.call('GET', KEYS[2])
        if holder then return {'held', holder} end
        if redis.call('HGET', KEYS[1], 'cancel') == '1' then
          redis.call('HSET', KEYS[1], 'state', 'cancelled', 'ended', ARGV[3])
          return {'finished', 'cancelled'}
        end
        local previous = redis.call('HGET', KEYS[1], 'worker') or ''
        local epoch = redis.call('HINCRBY', KEYS[1], 'epoch', 1)
        redis.call('SET', KEYS[2], ARGV[1] .. '/' .. epoch, 'PX', ARGV[2])
        redis.call('HSET', KEYS[1], 'state', 'running', 'worker', ARGV[1], 'claimed', ARGV[3], 'listen', '')
        if not redis.call('HGET', KEYS[1], 'started') then redis.call('HSET', KEYS[1], 'started', ARGV[3]) end
        return {'claimed', tostring(epoch), previous, state}
        """

    /// KEYS: job, lease. ARGV: token, ttl ms. Returns {1, cancel flag} or {0}.
    static let renew = """
        if redis.call('GET', KEYS[2]) ~= ARGV[1] then return {0} end
        redis.call('PEXPIRE', KEYS[2], ARGV[2])
        return {1, redis.call('HGET', KEYS[1], 'cancel') or '0'}
        """

    /// The fence every write below starts with (ARGV[1] token, ARGV[2] epoch).
    private static let fence = """
        if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
        if redis.call('HGET', KEYS[1], 'epoch') ~= ARGV[2] then return 0 end

        """

    /// KEYS: job, lease. ARGV: token, epoch, field/value pairs. Returns 1, or 0 when fenced off.
    static let update =
        fence + """
            for i = 3, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
            return 1
            """

    /// KEYS: job, lease, stream. ARGV: token, epoch, group, state, now, field/value pairs.
    /// Ends the job: its state, the lease deleted, the delivery acknowledged. 1, or 0 when fenced off.
    static let finish =
        fence + """
            redis.call('HSET', KEYS[1], 'state', ARGV[4], 'ended', ARGV[5])
            for i = 6, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
            redis.call('DEL', KEYS[2])
            redis.call('XACK', KEYS[3], ARGV[3], redis.call('HGET', KEYS[1], 'entry'))
            return 1
            """

    /// KEYS: job. ARGV: outputDir, upload location, now. A room whose upload failed (the job
    /// `failed` with that `outputDir`) uploaded later by the worker that owns that directory: the
    /// job becomes `done`. 1; 0 when the job is not that failed room (nothing changed).
    static let uploadedLater = """
        if redis.call('HGET', KEYS[1], 'state') ~= 'failed' then return 0 end
        if redis.call('HGET', KEYS[1], 'outputDir') ~= ARGV[1] then return 0 end
        redis.call('HSET', KEYS[1], 'state', 'done', 'upload', ARGV[2], 'error', '', 'uploaded', ARGV[3])
        return 1
        """

    /// KEYS: job, lease, stream. ARGV: token, epoch, group, id, state ('moving' or 'queued').
    /// Hands the job over at once: the lease released, the old delivery acknowledged and a new one
    /// added, which any free worker reads next. 1, or 0 when fenced off.
    static let handOver =
        fence + """
            redis.call('DEL', KEYS[2])
            redis.call('XACK', KEYS[3], ARGV[3], redis.call('HGET', KEYS[1], 'entry'))
            local entry = redis.call('XADD', KEYS[3], '*', 'id', ARGV[4])
            redis.call('HSET', KEYS[1], 'state', ARGV[5], 'entry', entry)
            return 1
            """

    /// KEYS: job, stream, lease. ARGV: group, entry, id. Puts back a delivery this worker read but
    /// will not claim (it would exceed its capacity): a new entry replaces it. 1; 0 when the entry
    /// is no longer the job's (then acknowledged) or the job is held (then left pending: its
    /// holder's renewals claim it back).
    static let putBack = """
        if redis.call('HGET', KEYS[1], 'entry') ~= ARGV[2] then
          redis.call('XACK', KEYS[2], ARGV[1], ARGV[2])
          return 0
        end
        if redis.call('EXISTS', KEYS[3]) == 1 then return 0 end
        redis.call('XACK', KEYS[2], ARGV[1], ARGV[2])
        local entry = redis.call('XADD', KEYS[2], '*', 'id', ARGV[3])
        redis.call('HSET', KEYS[1], 'entry', entry)
        return 1
        """

    /// KEYS: job, lease, stream. ARGV: group, now. Cancels: a queued job at once (its delivery
    /// acknowledged), a running one by a flag its worker reads at the next renewal. Returns the
    /// state after: 'cancelled', 'cancelling', 'ended:STATE' for a job that had ended; 'missing'.
    static let cancel = """
        local state = redis.call('HGET', KEYS[1], 'state')
        if not state then return 'missing' end
        if state == 'done' or state == 'failed' or state == 'cancelled' then return 'ended:' .. state end
        if state == 'queued' and redis.call('EXISTS', KEYS[2]) == 0 then
          redis.call('HSET', KEYS[1], 'state', 'cancelled', 'ended', ARGV[2], 'cancel', '1')
          redis.call('XACK', KEYS[3], ARGV[1], redis.call('HGET', KEYS[1], 'entry'))
          return 'cancelled'
        end
        redis.call('HSET', KEYS[1], 'cancel', '1')
        return 'cancelling'
        """
}
