package devproctest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/listgate/listgate/pkg/devproc"
)

func TestStartStopsTheProcessWhenTheTestEnds(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "prog")
	script := "#!/bin/sh\necho '{\"msg\":\"edge listening\",\"addr\":\"127.0.0.1:4321\"}' >&2\nwhile true; do sleep 0.05; done\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	var p *devproc.Process
	t.Run("running", func(t *testing.T) {
		p = Start(t, "prog", bin, devproc.Options{})
		if p.Addr != "127.0.0.1:4321" {
			t.Errorf("addr %q", p.Addr)
		}
	})
	if p == nil {
		return // Start failed the subtest
	}
	select {
	case <-p.Done():
	default:
		t.Fatal("the process still runs after its test ended")
	}
}
