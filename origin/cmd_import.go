package main

import (
	"context"
	"fmt"
	"github.com/listgate/listgate/origin/store"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/listgate/listgate/origin/ingest"
)

// importSummary is the output of import reaxml (DESIGN.md §6): the counts
// over all files and the listing errors, each naming its file. Its "errors"
// is the list; the error count is its length.
type importSummary struct {
	ingest.Counts
	Errors []fileListingError `json:"errors"`
}

type fileListingError struct {
	File string `json:"file"`
	ingest.ListingError
}

func cmdImport(ctx context.Context, args []string, e *env) error {
	if len(args) == 0 || args[0] != "reaxml" {
		return fmt.Errorf("%w: import takes a format: origin import reaxml --site SITE_ID FILE...", errUsage)
	}
	fs := newFlags("import reaxml", e)
	site := fs.String("site", "", "site id")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args[1:]); err != nil {
		return parseErr(fs, err)
	}
	if err := required(fs, "site", *site); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return fmt.Errorf("%w: import reaxml needs at least one FILE", errUsage)
	}
	return withDB(ctx, e, func(db *store.DB) error {
		im := ingest.New(db, newLogger(io.Discard, "error"))
		var sum importSummary
		sum.Errors = []fileListingError{}
		for _, path := range fs.Args() {
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			bar := newProgressBar(e.stderr, filepath.Base(path), f)
			res, err := im.Import(ctx, *site, f, ingest.Options{Progress: bar.update})
			f.Close()
			bar.done()
			addCounts(&sum.Counts, res.Counts)
			for _, le := range res.Errors {
				sum.Errors = append(sum.Errors, fileListingError{File: path, ListingError: le})
			}
			if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
		}
		if *asJSON {
			return printJSON(e.stdout, sum)
		}
		c := sum.Counts
		fmt.Fprintf(e.stdout, "created %d, updated %d, unchanged %d, deleted %d, skipped %d, errors %d\n",
			c.Created, c.Updated, c.Unchanged, c.Deleted, c.Skipped, c.Errors)
		for _, le := range sum.Errors {
			fmt.Fprintf(e.stdout, "  %s:%d %s: %s\n", le.File, le.Line, le.ListingID, le.Message)
		}
		return nil
	})
}

func addCounts(dst *ingest.Counts, c ingest.Counts) {
	dst.Created += c.Created
	dst.Updated += c.Updated
	dst.Unchanged += c.Unchanged
	dst.Deleted += c.Deleted
	dst.Skipped += c.Skipped
	dst.Errors += c.Errors
}

// progressBar draws one line on a terminal, at most ten times a second; on
// anything but a terminal it draws nothing.
type progressBar struct {
	w     io.Writer
	name  string
	total int64
	on    bool
	last  time.Time
}

func newProgressBar(w io.Writer, name string, f *os.File) *progressBar {
	b := &progressBar{w: w, name: name}
	if fi, err := f.Stat(); err == nil {
		b.total = fi.Size()
	}
	if out, ok := w.(*os.File); ok {
		if fi, err := out.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			b.on = true
		}
	}
	return b
}

func (b *progressBar) update(c ingest.Counts, read int64) {
	if !b.on || time.Since(b.last) < 100*time.Millisecond {
		return
	}
	b.last = time.Now()
	const width = 30
	frac := 0.0
	if b.total > 0 {
		frac = min(float64(read)/float64(b.total), 1)
	}
	filled := int(frac * width)
	n := c.Created + c.Updated + c.Unchanged + c.Deleted + c.Skipped + c.Errors
	fmt.Fprintf(b.w, "\r%s [%s%s] %3.0f%%  %d listings, %d errors ", b.name,
		strings.Repeat("=", filled), strings.Repeat(" ", width-filled), frac*100, n, c.Errors)
}

func (b *progressBar) done() {
	if b.on {
		fmt.Fprint(b.w, "\r\033[K")
	}
}
