package placement

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// ChannelOwner is a data node as the applier tells it which vchannels to
// consume: datanoderpc.Client over the internal RPC, or the in-process
// datanode.Node. Both methods are idempotent.
type ChannelOwner interface {
	// WatchChannel starts consuming vchannel under the assignment epoch,
	// from the data coordinator's recovery information.
	WatchChannel(ctx context.Context, vchannel string, epoch int64) error
	// ReleaseChannel syncs what the node buffered of vchannel, waits for
	// the report and stops consuming it.
	ReleaseChannel(ctx context.Context, vchannel string) error
}

// Fencer raises a vchannel's assignment epoch in the data coordinator, so
// that reports of older epochs are refused (datacoord.Coordinator.Fence).
type Fencer interface {
	Fence(ctx context.Context, vchannel string, epoch int64) error
}

// Dialer returns the data node serving the internal RPC at address (a
// datanoderpc.Client over an rpc.Pool connection, typically).
type Dialer func(address string) (ChannelOwner, error)

// ApplierConfig configures a ChannelApplier.
type ApplierConfig struct {
	// ReleaseTimeout bounds the release on a live previous owner (its
	// last sync included). When it passes, or the release fails, the
	// move goes on: the fence keeps the old owner from writing after the
	// new one started, and the new one replays what the old one had
	// buffered. Default 1m.
	ReleaseTimeout time.Duration `json:"releaseTimeout"`
}

// DefaultApplierConfig returns the default configuration.
func DefaultApplierConfig() ApplierConfig { return ApplierConfig{ReleaseTimeout: time.Minute} }

// Validate reports a configuration that cannot work.
func (c ApplierConfig) Validate() error {
	if c.ReleaseTimeout <= 0 {
		return fmt.Errorf("placement: releaseTimeout %v: want > 0", c.ReleaseTimeout)
	}
	return nil
}

// ChannelApplier carries out a channel move (ChannelBalancer's apply):
//
//  1. a live previous owner (a balance move) releases the channel: it
//     syncs what it buffered, and ReleaseChannel returns once the data
//     coordinator recorded that sync; a dead owner is skipped;
//  2. the data coordinator is fenced to the move's epoch: from then on a
//     report of the previous owner (declared dead, but still running) is
//     refused and changes nothing;
//  3. the new owner watches the channel under the epoch, reading the
//     recovery information (checkpoint, unflushed segments) only now, so
//     it starts from the previous owner's last word.
//
// Every step is idempotent, so a failed move is simply applied again.
type ChannelApplier struct {
	cfg    ApplierConfig
	dial   Dialer
	fence  Fencer
	logger *slog.Logger
}

// NewChannelApplier returns an applier that reaches the data nodes through
// dial and fences through fence.
func NewChannelApplier(cfg ApplierConfig, dial Dialer, fence Fencer, logger *slog.Logger) (*ChannelApplier, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if dial == nil || fence == nil {
		return nil, errors.New("placement: a channel applier needs a dialer and a fencer")
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &ChannelApplier{cfg: cfg, dial: dial, fence: fence, logger: logger}, nil
}

// Apply carries out one move (see ChannelApplier); it fails when the fence
// or the new owner's watch fails, and is safe to call again.
func (a *ChannelApplier) Apply(ctx context.Context, h Handoff) error {
	if h.To == 0 || h.ToAddress == "" || h.Epoch <= 0 {
		return fmt.Errorf("placement: move of %s: no new owner address (node %d) or epoch (%d)", h.Channel, h.To, h.Epoch)
	}
	if h.From != 0 && h.From != h.To && h.FromAddress != "" {
		if err := a.release(ctx, h); err != nil {
			a.logger.Warn("the previous owner did not release the channel; fencing it", "vchannel", h.Channel,
				"from", h.From, "err", err)
		}
	}
	if err := a.fence.Fence(ctx, h.Channel, h.Epoch); err != nil {
		return fmt.Errorf("placement: fence %s at epoch %d: %w", h.Channel, h.Epoch, err)
	}
	to, err := a.dial(h.ToAddress)
	if err != nil {
		return fmt.Errorf("placement: dial data node %d at %s: %w", h.To, h.ToAddress, err)
	}
	if err := to.WatchChannel(ctx, h.Channel, h.Epoch); err != nil {
		return fmt.Errorf("placement: data node %d watch %s: %w", h.To, h.Channel, err)
	}
	return nil
}

func (a *ChannelApplier) release(ctx context.Context, h Handoff) error {
	from, err := a.dial(h.FromAddress)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, a.cfg.ReleaseTimeout)
	defer cancel()
	return from.ReleaseChannel(ctx, h.Channel)
}
