// Package e2e holds the end-to-end tests of Listgate: the real edge and
// origin binaries on loopback, in front of a throwaway Postgres and Redis.
// It has no code of its own.
package e2e
