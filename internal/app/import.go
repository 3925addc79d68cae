package app

import (
	"context"
	"log/slog"
	"slices"

	"github.com/strata-db/strata/internal/auth"
	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/datacoord"
	"github.com/strata-db/strata/internal/datanode"
	"github.com/strata-db/strata/internal/importer"
	"github.com/strata-db/strata/internal/objstore"
	"github.com/strata-db/strata/internal/proxy"
	"github.com/strata-db/strata/internal/rest"
	"github.com/strata-db/strata/internal/rootcoord"
)

// importConfig is the importer's configuration: its segments are as large
// as the data coordinator seals growing ones.
func (c Config) importConfig() importer.Config {
	ic := c.Import
	ic.SegmentBytes = max(int64(float64(c.DataCoord.SegmentMaxSize)*c.DataCoord.SealProportion), 1)
	return ic
}

// newImporter wires the bulk-import job runner: files from the object store
// (or local paths, when allowed), rows checked and routed by the proxy,
// segments written by the data node and committed by the data coordinator.
func newImporter(ctx context.Context, cfg Config, meta importer.KV, ids, clock importer.Allocator, objects objstore.Store,
	px *proxy.Proxy, qn proxy.Loader, dn *datanode.Node, data *datacoord.Coordinator, root *rootcoord.Core, logger *slog.Logger,
) (*importer.Manager, error) {
	files := importer.StoreFiles{Objects: objects, AllowLocal: cfg.Import.AllowLocalPaths}
	return importer.New(ctx, cfg.importConfig(), importer.Deps{
		KV: meta, IDs: ids, TSO: clock,
		Files: files, Lister: files,
		Rows: px, Writer: dn, Committer: data, Collections: root,
		Remover: objects, RootPath: cfg.RootPath, Logger: logger, Serving: served{qn},
	})
}

// served tells the importer whether the query side (the query node, or
// the query coordinator) serves segments.
type served struct{ qn proxy.Loader }

// Serves implements importer.Serving. A query side that cannot answer
// does not serve them yet: the importer asks again.
func (s served) Serves(collectionID int64, segs []catalog.SegmentInfo) bool {
	ctx := context.Background() // the query side runs in this process
	loading, err := s.qn.Loading(ctx, collectionID)
	if err != nil || loading {
		// A load in progress may have read its view before these segments
		// existed: ask again once it has ended.
		return false
	}
	loaded, parts, err := s.qn.Loaded(ctx, collectionID)
	if err != nil {
		return false
	}
	if !loaded {
		return true
	}
	served, err := s.qn.Segments(ctx, collectionID)
	if err != nil {
		return false
	}
	have := map[int64]bool{}
	for _, x := range served {
		have[x.ID] = true
	}
	for _, seg := range segs {
		if !have[seg.ID] && (parts == nil || slices.Contains(parts, seg.PartitionID)) {
			return false
		}
	}
	return true
}

// importAuthorizer checks REST import requests with the gRPC guard's rules
// (nil when authorization is off).
func importAuthorizer(g *auth.Guard) rest.Authorizer {
	if !g.Enabled() {
		return nil
	}
	return g.Check
}
