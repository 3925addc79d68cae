package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/strata-db/strata/internal/app"
)

// fileConfig is the JSON document --config reads. Every field is optional;
// an absent field keeps its default. Durations are Go duration strings
// ("500ms", "2m"), sizes are bytes. Unknown fields are an error.
type fileConfig struct {
	DataCoord *struct {
		SegmentMaxSize     *int64    `json:"segmentMaxSize"`
		SealProportion     *float64  `json:"sealProportion"`
		MaxIdle            *duration `json:"maxIdle"`
		CheckInterval      *duration `json:"checkInterval"`
		GCInterval         *duration `json:"gcInterval"`
		DroppedRetention   *duration `json:"droppedRetention"`
		OrphanRetention    *duration `json:"orphanRetention"`
		GrowingMemoryLimit *int64    `json:"growingMemoryLimit"`
		Compaction         *struct {
			L0Count          *int      `json:"l0Count"`
			L0MaxAge         *duration `json:"l0MaxAge"`
			SmallProportion  *float64  `json:"smallProportion"`
			MinSmallSegments *int      `json:"minSmallSegments"`
			DeletedRatio     *float64  `json:"deletedRatio"`
		} `json:"compaction"`
	} `json:"dataCoord"`
	DataNode *struct {
		SegmentBufferSize *int64    `json:"segmentBufferSize"`
		SyncPeriod        *duration `json:"syncPeriod"`
	} `json:"dataNode"`
	WAL *struct {
		SegmentSize *int64 `json:"segmentSize"`
	} `json:"wal"`
}

// duration is a time.Duration written as a Go duration string.
type duration time.Duration

func (d *duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration must be a string such as \"500ms\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = duration(v)
	return nil
}

// loadConfigFile applies the JSON configuration file at path to cfg.
func loadConfigFile(path string, cfg *app.Config) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var fc fileConfig
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&fc); err != nil {
		return fmt.Errorf("config %s: %w", path, err)
	}
	setI := func(dst *int64, v *int64) {
		if v != nil {
			*dst = *v
		}
	}
	setF := func(dst *float64, v *float64) {
		if v != nil {
			*dst = *v
		}
	}
	setD := func(dst *time.Duration, v *duration) {
		if v != nil {
			*dst = time.Duration(*v)
		}
	}
	if dc := fc.DataCoord; dc != nil {
		c := &cfg.DataCoord
		setI(&c.SegmentMaxSize, dc.SegmentMaxSize)
		setF(&c.SealProportion, dc.SealProportion)
		setD(&c.MaxIdle, dc.MaxIdle)
		setD(&c.CheckInterval, dc.CheckInterval)
		setD(&c.GCInterval, dc.GCInterval)
		setD(&c.DroppedRetention, dc.DroppedRetention)
		setD(&c.OrphanRetention, dc.OrphanRetention)
		setI(&c.GrowingMemoryLimit, dc.GrowingMemoryLimit)
		if cc := dc.Compaction; cc != nil {
			if cc.L0Count != nil {
				c.Compaction.L0Count = *cc.L0Count
			}
			setD(&c.Compaction.L0MaxAge, cc.L0MaxAge)
			setF(&c.Compaction.SmallProportion, cc.SmallProportion)
			if cc.MinSmallSegments != nil {
				c.Compaction.MinSmallSegments = *cc.MinSmallSegments
			}
			setF(&c.Compaction.DeletedRatio, cc.DeletedRatio)
		}
	}
	if dn := fc.DataNode; dn != nil {
		setI(&cfg.DataNode.SegmentBufferSize, dn.SegmentBufferSize)
		setD(&cfg.DataNode.SyncPeriod, dn.SyncPeriod)
	}
	if w := fc.WAL; w != nil {
		setI(&cfg.WAL.SegmentSize, w.SegmentSize)
	}
	return nil
}
