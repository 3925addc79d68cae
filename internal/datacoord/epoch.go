package datacoord

import (
	"context"
	"fmt"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/metastore"
)

// Channel epochs fence data nodes that lost a vchannel. In cluster mode
// the placement raises a vchannel's assignment epoch each time it gives the
// channel to a data node, and the new owner sends that epoch with every
// sync report. Before the new owner reads the channel's recovery
// information the coordinator fences the channel (Fence): from then on a
// report with an older epoch, from a node that was declared dead but still
// runs, is refused with catalog.StaleEpoch and changes nothing, so the
// checkpoint and the segment records the new owner started from stay the
// last word of the old owner. Epoch 0 is unfenced (the standalone data
// node, which owns every vchannel); the epochs are stored at
// catalog.EpochKey.

// loadEpochs reads the stored epochs.
func (c *Coordinator) loadEpochs(ctx context.Context) error {
	kvs, err := c.kv.Scan(ctx, catalog.EpochPrefix)
	if err != nil {
		return fmt.Errorf("datacoord: load channel epochs: %w", err)
	}
	for _, e := range kvs {
		var rec catalog.ChannelEpoch
		if err := catalog.Unmarshal(e.Value, &rec); err != nil {
			return fmt.Errorf("datacoord: decode %s: %w", e.Key, err)
		}
		c.epochs[rec.VChannel] = rec.Epoch
	}
	return nil
}

func epochPut(vchannel string, epoch int64) (metastore.Op, error) {
	b, err := catalog.Marshal(catalog.ChannelEpoch{VChannel: vchannel, Epoch: epoch})
	if err != nil {
		return metastore.Op{}, err
	}
	return metastore.Put(catalog.EpochKey(vchannel), b), nil
}

// checkEpoch decides on a report's epoch (c.mu held): an error when it is
// stale, raise when it is newer than the channel's and must be stored.
func (c *Coordinator) checkEpoch(r catalog.SyncReport) (raise bool, err error) {
	if r.Epoch == 0 {
		return false, nil
	}
	cur := c.epochs[r.VChannel]
	if r.Epoch < cur {
		return false, catalog.StaleEpoch(r.VChannel, r.Epoch, cur)
	}
	return r.Epoch > cur, nil
}

// Fence raises a vchannel's assignment epoch to epoch (persisted before it
// returns): every later sync report of an older epoch is refused. The
// channel's new owner must be told to watch it only after Fence returned,
// so that the recovery information it reads is final for the old owner.
// Fencing to the current epoch or an older one does nothing (retries are
// safe); epoch must be positive.
func (c *Coordinator) Fence(ctx context.Context, vchannel string, epoch int64) error {
	if vchannel == "" || epoch <= 0 {
		return fmt.Errorf("datacoord: fence %q to epoch %d: want a vchannel and a positive epoch", vchannel, epoch)
	}
	// metaMu orders the fence against Synced: a report either completed
	// before (and the new owner's recovery includes it) or is refused.
	c.metaMu.Lock()
	defer c.metaMu.Unlock()
	c.mu.Lock()
	cur := c.epochs[vchannel]
	c.mu.Unlock()
	if epoch <= cur {
		return nil
	}
	op, err := epochPut(vchannel, epoch)
	if err != nil {
		return err
	}
	if err := c.kv.Txn(ctx, op); err != nil {
		return fmt.Errorf("datacoord: fence %s: %w", vchannel, err)
	}
	c.mu.Lock()
	c.epochs[vchannel] = max(c.epochs[vchannel], epoch)
	c.mu.Unlock()
	c.logger.Info("datacoord: channel fenced", "vchannel", vchannel, "epoch", epoch)
	return nil
}

// Epoch returns a vchannel's current assignment epoch (0: never fenced).
func (c *Coordinator) Epoch(vchannel string) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.epochs[vchannel]
}
