package fsck

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/strata-db/strata/internal/metastore/embedded"
)

// MetaChecker verifies the embedded meta store file (DIR/meta.db) with
// embedded.Verify: bbolt's pages and every value's checksum, read-only.
// Every other checker reads the metadata too, so damage here means what
// they report may be incomplete.
func MetaChecker() Checker {
	return Checker{Name: "meta", Check: func(_ context.Context, dir string) (Result, error) {
		path := filepath.Join(dir, MetaFile)
		found, err := embedded.Verify(path)
		if err != nil {
			return Result{}, err
		}
		var res Result
		for _, d := range found {
			res.Damage = append(res.Damage, Damage{
				Kind: KindMeta, File: path, Problem: d.String(),
				Affects: metaAffects(d),
			})
		}
		return res, nil
	}}
}

// metaAffects says what a meta-store damage does: the server refuses to
// start on a damaged meta store.
func metaAffects(d embedded.Damage) string {
	what := "the file's structure"
	if d.Key != "" {
		what = fmt.Sprintf("the record %q", d.Key)
	}
	return what + " cannot be trusted; the server refuses to start on this meta store"
}
