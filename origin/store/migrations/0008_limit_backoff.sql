-- Sign-in back-off (store.BackoffLimiter) and remembered sign-in addresses
-- (store.RecentKeys) keep their rows in limit_windows beside the fixed
-- windows: they need the time of a key's last event, from which its wait
-- is counted. NULL on the rows of fixed windows, which do not use it.
ALTER TABLE limit_windows ADD COLUMN last_at timestamptz;
