package wal

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// DefaultChannelPrefix is the pchannel name prefix Milvus uses by default.
const DefaultChannelPrefix = "by-dev"

// ErrBadVChannel reports a name that is not a vchannel name.
var ErrBadVChannel = errors.New("wal: malformed vchannel name")

// PChannelName returns the name of the i-th pchannel:
// "{prefix}-rootcoord-dml_{i}". An empty prefix means DefaultChannelPrefix.
func PChannelName(prefix string, i int) string {
	if prefix == "" {
		prefix = DefaultChannelPrefix
	}
	return prefix + "-rootcoord-dml_" + strconv.Itoa(i)
}

// VChannelName returns the vchannel of a collection's shard on pchannel:
// "{pchannel}_{collectionID}v{shard}".
func VChannelName(pchannel string, collectionID int64, shard int) string {
	return pchannel + "_" + strconv.FormatInt(collectionID, 10) + "v" + strconv.Itoa(shard)
}

// splitVChannel splits a vchannel name into its pchannel, collection ID and shard.
func splitVChannel(vchannel string) (string, int64, int, bool) {
	i := strings.LastIndexByte(vchannel, '_')
	if i <= 0 {
		return "", 0, 0, false
	}
	coll, shard, ok := strings.Cut(vchannel[i+1:], "v")
	if !ok || !digits(coll) || !digits(shard) {
		return "", 0, 0, false
	}
	c, err := strconv.ParseInt(coll, 10, 64)
	if err != nil {
		return "", 0, 0, false
	}
	s, err := strconv.Atoi(shard)
	if err != nil {
		return "", 0, 0, false
	}
	return vchannel[:i], c, s, true
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// PChannelOf returns the pchannel a vchannel lives on. A name that is not a
// vchannel (such as a pchannel) is returned unchanged.
func PChannelOf(vchannel string) string {
	p, _, _, ok := splitVChannel(vchannel)
	if !ok {
		return vchannel
	}
	return p
}

// CollectionIDOf returns the collection ID encoded in a vchannel name.
func CollectionIDOf(vchannel string) (int64, error) {
	_, c, _, ok := splitVChannel(vchannel)
	if !ok {
		return 0, fmt.Errorf("%w: %q", ErrBadVChannel, vchannel)
	}
	return c, nil
}
