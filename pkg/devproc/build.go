package devproc

import (
	"fmt"
	"os/exec"
	"path"
	"path/filepath"
)

// Origin and Edge are the import paths of Listgate's two programs, for
// Build.
const (
	Origin = "github.com/listgate/listgate/origin"
	Edge   = "github.com/listgate/listgate/edge"
)

// Build compiles each main package (an import path of this module, such as
// Origin) into dir with `go build`, named after its last element, and
// returns the binaries' paths in the order given. It must run inside the
// module's tree.
func Build(dir string, pkgs ...string) ([]string, error) {
	bins := make([]string, len(pkgs))
	for i, pkg := range pkgs {
		bins[i] = filepath.Join(dir, path.Base(pkg))
		if out, err := exec.Command("go", "build", "-o", bins[i], pkg).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("devproc: build %s: %v\n%s", pkg, err, out)
		}
	}
	return bins, nil
}
