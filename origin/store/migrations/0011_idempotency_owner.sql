-- The owner of an Idempotency-Key claim: the instance id of the origin
-- process that made it, the second key of that process's liveness lock
-- (pg_advisory_lock(<class>, owner), held on a connection of its own for the
-- process's life). A claim in flight whose owner's lock is free is taken over
-- at once by a retry; NULL (claims made before this migration, or while the
-- process did not hold its lock) falls back on the lease alone.
ALTER TABLE idempotency_keys ADD COLUMN owner integer;
