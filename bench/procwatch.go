package main

import (
	"bytes"
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// This file watches processes from outside, as an operator would, through
// /proc (Linux): a process's resident set size (VmRSS) and the CPU time
// processes use.

// rssSampler reads a process's VmRSS every 100 ms and keeps the largest
// since it started or restarted. Safe for concurrent use.
type rssSampler struct {
	pid        int
	done       chan struct{}
	wg         sync.WaitGroup
	mu         sync.Mutex
	last, peak int64
	n          int
	err        error // the first failed read: the process is gone
}

func startRSSSampler(pid int) *rssSampler {
	s := &rssSampler{pid: pid, done: make(chan struct{})}
	s.sample()
	s.wg.Go(func() {
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-s.done:
				return
			case <-t.C:
				s.sample()
			}
		}
	})
	return s
}

func (s *rssSampler) sample() {
	v, err := vmRSS(s.pid)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.err = cmp.Or(s.err, err)
		return
	}
	s.last, s.peak, s.n = v, max(s.peak, v), s.n+1
}

// restart takes a sample and returns it: the peak is counted from it on.
func (s *rssSampler) restart() int64 {
	s.sample()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.peak = s.last
	return s.last
}

// stop takes a last sample and returns the peak, the number of samples and
// the first read that failed.
func (s *rssSampler) stop() (peak int64, samples int, err error) {
	close(s.done)
	s.wg.Wait()
	s.sample()
	return s.peak, s.n, s.err
}

// vmRSS is VmRSS of /proc/PID/status, in bytes.
func vmRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("edge RSS: %w", err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("edge RSS: no VmRSS in /proc/%d/status", pid)
}

// pidRunning finds the process running the executable at path. Each
// system builds its binaries into a directory of its own, so with one edge
// there is one such process.
func pidRunning(path string) (int, error) {
	path, err := filepath.EvalSymlinks(path)
	if err != nil {
		return 0, err
	}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		if exe, err := os.Readlink("/proc/" + p.Name() + "/exe"); err == nil && exe == path {
			return pid, nil
		}
	}
	return 0, fmt.Errorf("no process runs %s", path)
}

// cpuMeter tells the cores each of a few processes used between readings.
type cpuMeter struct {
	pids []int
	at   time.Time
	cpu  []time.Duration
}

func newCPUMeter(pids ...int) *cpuMeter {
	m := &cpuMeter{pids: pids}
	m.cores()
	return m
}

// cores returns the cores each process used since the last reading (1.0:
// one core all the time) and takes a new reading. A process that cannot be
// read counts as having used none.
func (m *cpuMeter) cores() []float64 {
	now := time.Now()
	used := make([]float64, len(m.pids))
	cpu := make([]time.Duration, len(m.pids))
	for i, pid := range m.pids {
		cpu[i], _ = cpuTime(pid)
		if m.cpu != nil {
			used[i] = (cpu[i] - m.cpu[i]).Seconds() / now.Sub(m.at).Seconds()
		}
	}
	m.at, m.cpu = now, cpu
	return used
}

// cpuTime is the user and system CPU time of a process so far, from
// /proc/PID/stat (in clock ticks, 100 a second on Linux).
func cpuTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name, in parentheses, may hold spaces: fields count
	// from after it, the state being field 3.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond, cmp.Or(err1, err2)
}
