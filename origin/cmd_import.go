package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/listgate/listgate/origin/ingest"
	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/pkg/apierror"
	"github.com/listgate/listgate/pkg/reaxml"
)

// importSummary is the output of import reaxml (DESIGN.md §6): the counts
// over all files, the listing errors, each naming its file, and each file's
// outcome. Its "errors" is the list of listing errors (those not imported,
// and those imported without some of their media).
// "status" is ok (everything imported), partial (some listings or files
// failed, the rest were imported: exit status 3) or failed (nothing was
// imported: exit status 1).
type importSummary struct {
	Status string `json:"status"`
	ingest.Counts
	Errors []fileListingError `json:"errors"`
	Files  []fileOutcome      `json:"files"`
}

type fileListingError struct {
	File string `json:"file"`
	ingest.ListingError
}

// fileOutcome is one file of an import: ok, partial (some of its listings
// failed) or failed (error says why; the listings before the failure may
// have been imported).
type fileOutcome struct {
	File   string `json:"file"`
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
}

func cmdImportReaxml(ctx context.Context, args []string, e *env) error {
	fs := newFlags("import reaxml", e)
	site := fs.String("site", "", "the site the listings belong to")
	asJSON := fs.Bool("json", false, "print JSON")
	paths, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if err := required(fs, "site", *site); err != nil {
		return err
	}
	if len(paths) == 0 {
		return fmt.Errorf("%w: import reaxml needs at least one FILE", errUsage)
	}
	// Every file is opened before any is imported: a mistyped name fails
	// the command with nothing changed.
	files := make([]*os.File, 0, len(paths))
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	var unreadable []string
	for _, path := range paths {
		f, err := openFeed(path)
		if err != nil {
			unreadable = append(unreadable, err.Error())
			continue
		}
		files = append(files, f)
	}
	if len(unreadable) > 0 {
		return fmt.Errorf("%s\nnothing was imported: fix the file names and run the command again", strings.Join(unreadable, "\n"))
	}
	return withDB(ctx, e, func(db *store.DB) error {
		if _, err := db.GetSite(ctx, *site); err != nil {
			var ae *apierror.Error
			if errors.As(err, &ae) && ae.Code == apierror.CodeNotFound {
				return fmt.Errorf("%s: no such site (origin sites list shows them); nothing was imported", *site)
			}
			return err
		}
		im := ingest.New(db, newLogger(io.Discard, "error"))
		sum := importSummary{Errors: []fileListingError{}, Files: []fileOutcome{}}
		imported, failedFiles := 0, 0
		for i, f := range files {
			path := paths[i]
			bar := newProgressBar(e.stderr, filepath.Base(path), f)
			res, err := im.Import(ctx, *site, f, ingest.Options{Progress: bar.update})
			bar.done()
			addCounts(&sum.Counts, res.Counts)
			imported += res.Counts.Created + res.Counts.Updated + res.Counts.Unchanged + res.Counts.Deleted
			for _, le := range res.Errors {
				sum.Errors = append(sum.Errors, fileListingError{File: path, ListingError: le})
			}
			out := fileOutcome{File: path, Status: "ok"}
			switch {
			case err != nil && ctx.Err() != nil:
				return fmt.Errorf("interrupted while importing %s: the files before it were imported, the rest were not", path)
			case err != nil:
				var ae *apierror.Error
				if errors.As(err, &ae) && ae.Code == apierror.CodeNotFound {
					// The site: no file can be imported.
					return fmt.Errorf("%s: no such site (origin sites list shows them)", *site)
				}
				out.Status, out.Error = "failed", importError(err)
				failedFiles++
			case res.Counts.Errors > 0:
				out.Status = "partial"
			}
			sum.Files = append(sum.Files, out)
		}
		switch {
		case failedFiles == len(files) && imported == 0:
			sum.Status = "failed"
		case failedFiles > 0 || sum.Counts.Errors > 0:
			sum.Status = "partial"
		default:
			sum.Status = "ok"
		}
		if *asJSON {
			if err := printJSON(e.stdout, sum); err != nil {
				return err
			}
		} else {
			c := sum.Counts
			fmt.Fprintf(e.stdout, "created %d, updated %d, unchanged %d, deleted %d, skipped %d, errors %d\n",
				c.Created, c.Updated, c.Unchanged, c.Deleted, c.Skipped, c.Errors)
			for _, le := range sum.Errors {
				fmt.Fprintf(e.stdout, "  %s:%d %s: %s\n", le.File, le.Line, le.ListingID, le.Message)
			}
			for _, fo := range sum.Files {
				if fo.Status == "failed" {
					fmt.Fprintf(e.stdout, "  %s: not imported: %s\n", fo.File, fo.Error)
				}
			}
		}
		switch sum.Status {
		case "failed":
			return fmt.Errorf("nothing was imported: %d of %d file(s) failed (see above); fix them and run the command again", failedFiles, len(files))
		case "partial":
			return &partialError{msg: fmt.Sprintf("partly imported: %d listing(s) not imported, %d of %d file(s) failed (see above); fix them and import those files again", sum.Counts.Errors, failedFiles, len(files))}
		}
		return nil
	})
}

// openFeed opens a feed file, or says why it cannot be read.
func openFeed(path string) (*os.File, error) {
	f, err := os.Open(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s: no such file", path)
	case errors.Is(err, fs.ErrPermission):
		return nil, fmt.Errorf("%s: permission denied", path)
	case err != nil:
		return nil, fmt.Errorf("%s: cannot read: %v", path, err)
	}
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		f.Close()
		return nil, fmt.Errorf("%s: is a directory, not a feed file", path)
	}
	return f, nil
}

// importError says why a file was not imported, without package prefixes.
func importError(err error) string {
	msg := plainError(err)
	if errors.Is(err, reaxml.ErrNotREAXML) || strings.Contains(msg, "XML syntax") || strings.Contains(msg, "feed ends early") {
		msg += " (is it a REAXML feed? the listings before the error were imported)"
	}
	return msg
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
