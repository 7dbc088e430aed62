//go:build !race

package keycache

const raceEnabled = false
