package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/listgate/listgate/pkg/logctx"
	"github.com/listgate/listgate/pkg/logfmt"
)

// serveLogger is the logger of `origin serve` and `origin dev`: the format
// of LISTGATE_LOG_FORMAT (json unless set), at level; in dev, successful
// requests are left out below debug.
func serveLogger(e *env, level string) (*slog.Logger, error) {
	var v string
	if e.getenv != nil {
		v, _ = e.getenv(logfmt.Env)
	}
	format, err := logfmt.Parse(v, logfmt.JSON)
	if err != nil {
		return nil, err
	}
	var l slog.Level
	_ = l.UnmarshalText([]byte(level))
	h := logfmt.NewHandler(e.stderr, format, &slog.HandlerOptions{Level: l}).WithAttrs([]slog.Attr{slog.String("service", "origin")})
	if e.quietRequests {
		h = quietRequests{h}
	}
	// Request paths log with their context: request and trace ids.
	return slog.New(logctx.NewHandler(h)), nil
}

// quietRequests drops the per-request line of a request answered below
// 400 unless the level is debug: in `origin dev`, a terminal shows
// start-up, warnings and failed requests, not every page view.
type quietRequests struct{ slog.Handler }

func (h quietRequests) Handle(ctx context.Context, r slog.Record) error {
	if r.Level == slog.LevelInfo && r.Message == "request" && !h.Handler.Enabled(ctx, slog.LevelDebug) {
		status := int64(0)
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "status" {
				status = a.Value.Int64()
				return false
			}
			return true
		})
		if status > 0 && status < 400 {
			return nil
		}
	}
	return h.Handler.Handle(ctx, r)
}

func (h quietRequests) WithAttrs(attrs []slog.Attr) slog.Handler {
	return quietRequests{h.Handler.WithAttrs(attrs)}
}

func (h quietRequests) WithGroup(name string) slog.Handler {
	return quietRequests{h.Handler.WithGroup(name)}
}

// bannerMark is how the banner of `origin dev` begins.
const bannerMark = "Listgate is running."

// bannerHint ends every banner.
const bannerHint = "Press Enter here (or run `origin dev --banner`, or `kill -USR1 %d`) to show this again.\n\n"

// devSession is what `origin dev` adds around serve: text logs that record
// when they were last written, the banner kept to print again (on Enter,
// SIGUSR1, `origin dev --banner`, and once when start-up logs settle), and
// its copy in a file only this user can read.
type devSession struct {
	env   *env // for serve: stdout keeps the banner, stderr notes activity
	out   io.Writer
	logs  *devLogs
	file  string
	shown atomic.Int64 // unix nanoseconds of the banner's first print

	mu     sync.Mutex
	banner string

	first chan struct{} // closed when the banner is first printed
	once  sync.Once
	stop  chan struct{}
	wg    sync.WaitGroup
}

// devLogs is the log writer of `origin dev`: it passes lines on, notes
// when it last did, and in the text format rewrites the JSON lines of the
// edge (which logs JSON under dev: devproc reads its listening line).
type devLogs struct {
	w      io.Writer
	format string
	last   atomic.Int64 // unix nanoseconds of the last write
}

func (l *devLogs) Write(p []byte) (int, error) {
	l.last.Store(time.Now().UnixNano())
	out := p
	if l.format == logfmt.Text {
		out = logfmt.Retext(p)
	}
	if _, err := l.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// bannerFile is where `origin dev` keeps its banner for `origin dev
// --banner`: LISTGATE_DEV_BANNER_FILE, or listgate-dev-UID.banner in
// XDG_RUNTIME_DIR (private to the user) or else the temporary directory.
func bannerFile(getenv func(string) (string, bool)) string {
	if f, _ := getenv("LISTGATE_DEV_BANNER_FILE"); f != "" {
		return f
	}
	dir, _ := getenv("XDG_RUNTIME_DIR")
	if dir == "" {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "listgate-dev-"+strconv.Itoa(os.Getuid())+".banner")
}

// newDevSession wraps e for serve in `origin dev`; get is dev's view of the
// environment. close stops it.
func newDevSession(e *env, get func(string) (string, bool)) (*devSession, error) {
	v, _ := get(logfmt.Env)
	format, err := logfmt.Parse(v, logfmt.Text)
	if err != nil {
		return nil, err
	}
	s := &devSession{out: e.stdout, logs: &devLogs{w: e.stderr, format: format}, file: bannerFile(get),
		first: make(chan struct{}), stop: make(chan struct{})}
	// e.getenv, not get: get reads the env cmdDev has then (this one).
	getenv := e.getenv
	s.env = &env{stdin: e.stdin, stdout: bannerWriter{s}, stderr: s.logs, quietRequests: true,
		getenv: func(k string) (string, bool) {
			if k == logfmt.Env {
				return format, true
			}
			return getenv(k)
		}}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGUSR1)
	s.wg.Add(2)
	go func() {
		defer s.wg.Done()
		defer signal.Stop(sig)
		for {
			select {
			case <-s.stop:
				return
			case <-sig:
				s.reprint()
			}
		}
	}()
	go func() {
		defer s.wg.Done()
		s.reprintWhenSettled()
	}()
	if e.stdin != nil {
		// Not waited for: a read of a terminal cannot be cancelled, and
		// the process ends with it.
		go func() {
			sc := bufio.NewScanner(e.stdin)
			for sc.Scan() {
				select {
				case <-s.stop:
					return
				default:
					s.reprint()
				}
			}
		}()
	}
	return s, nil
}

// bannerWriter is dev's stdout while serving: the banner it is given is
// kept, saved to the banner file and printed with the hint.
type bannerWriter struct{ s *devSession }

func (w bannerWriter) Write(p []byte) (int, error) {
	if !strings.Contains(string(p), bannerMark) {
		return w.s.out.Write(p)
	}
	text := strings.TrimRight(string(p), "\n") + "\n\n" + fmt.Sprintf(bannerHint, os.Getpid())
	w.s.mu.Lock()
	w.s.banner = text
	w.s.mu.Unlock()
	if err := writePrivate(w.s.file, text); err != nil {
		fmt.Fprintf(w.s.out, "(origin dev --banner will not work: %v)\n", err)
	}
	if _, err := io.WriteString(w.s.out, text); err != nil {
		return 0, err
	}
	w.s.once.Do(func() {
		w.s.shown.Store(time.Now().UnixNano())
		close(w.s.first)
	})
	return len(p), nil
}

// reprint prints the banner again, when there is one.
func (s *devSession) reprint() {
	s.mu.Lock()
	text := s.banner
	s.mu.Unlock()
	if text != "" {
		io.WriteString(s.out, "\n"+text)
	}
}

// bannerSettle is how long the logs that followed the banner must have
// been quiet for it to be printed again.
var bannerSettle = time.Second

// reprintWhenSettled prints the banner once more after the first, when
// logs written after it have been quiet for bannerSettle (at most a minute
// after it): start-up lines that followed it have pushed it up.
func (s *devSession) reprintWhenSettled() {
	settle := bannerSettle
	select {
	case <-s.stop:
		return
	case <-s.first:
	}
	shown := s.shown.Load()
	deadline := time.Now().Add(time.Minute)
	t := time.NewTicker(settle / 4)
	defer t.Stop()
	for time.Now().Before(deadline) {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		last := s.logs.last.Load()
		if last > shown && time.Since(time.Unix(0, last)) >= settle {
			s.reprint()
			return
		}
	}
}

// close stops the session and removes the banner file.
func (s *devSession) close() {
	close(s.stop)
	s.wg.Wait()
	if err := os.Remove(s.file); err != nil && !errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(s.logs, "origin dev: %v\n", err)
	}
}

// writePrivate replaces path with text, readable by this user alone,
// without following a link planted at path.
func writePrivate(path, text string) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".listgate-dev-*")
	if err != nil {
		return err
	}
	_, err = f.WriteString(text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// printDevBanner is `origin dev --banner`: the banner of the origin dev
// running as this user.
func printDevBanner(e *env) error {
	path := bannerFile(e.getenv)
	fi, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return errors.New("no origin dev is running as this user (start one with make run)")
	}
	if err != nil {
		return err
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !fi.Mode().IsRegular() || fi.Mode().Perm()&0o077 != 0 || (ok && int(st.Uid) != os.Getuid()) {
		return fmt.Errorf("%s is not a banner file of this user's origin dev: remove it", path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	_, err = e.stdout.Write(b)
	return err
}
