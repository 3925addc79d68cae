package datacoord

import (
	"context"
	"fmt"
	"maps"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/metastore"
)

// AlterIndex sets and deletes properties of the live index named name in a
// collection and persists the new definition. Only keys
// catalog.IsConfigurableIndexParam allows may change; the caller checks
// their values.
func (c *Coordinator) AlterIndex(ctx context.Context, collectionID int64, name string, set map[string]string, deleteKeys []string) error {
	c.mu.Lock()
	var idx catalog.IndexInfo
	found := false
	for _, x := range c.indexes {
		if x.CollectionID == collectionID && !x.Deleted && x.Name == name {
			idx, found = x, true
		}
	}
	c.mu.Unlock()
	if !found {
		return errcode.New(errcode.IndexNotFound, "index not found[indexName=%s]", name)
	}
	params := maps.Clone(idx.Params)
	if params == nil {
		params = map[string]string{}
	}
	for k, v := range set {
		if !catalog.IsConfigurableIndexParam(k) {
			return errcode.Invalid("%s is not a configable index property", k)
		}
		params[k] = v
	}
	for _, k := range deleteKeys {
		if !catalog.IsConfigurableIndexParam(k) {
			return errcode.Invalid("%s is not a configable index property", k)
		}
		delete(params, k)
	}
	idx.Params = params
	b, err := catalog.Marshal(&idx)
	if err != nil {
		return err
	}
	if err := c.kv.Txn(ctx, metastore.Put(catalog.IndexKey(idx.CollectionID, idx.ID), b)); err != nil {
		return fmt.Errorf("datacoord: alter index: %w", err)
	}
	c.mu.Lock()
	if cur, ok := c.indexes[idx.ID]; ok && !cur.Deleted {
		c.indexes[idx.ID] = idx
	}
	c.mu.Unlock()
	return nil
}
