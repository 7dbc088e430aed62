package devdb

import "context"

// For the tests in package devdb_test, which start servers through
// devdbtest; devdbtest imports devdb, so tests inside package devdb cannot.

// PostgresDir is the cluster's temporary directory.
func PostgresDir(p *Postgres) string { return p.dir }

// Ping sends PING to r and expects PONG.
func Ping(ctx context.Context, r *Redis) error { return r.ping(ctx) }
