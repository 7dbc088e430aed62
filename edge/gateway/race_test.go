//go:build race

package gateway

// raceEnabled: the race detector makes sync.Pool drop items, which shows as
// allocations; allocation tests skip under it.
const raceEnabled = true
