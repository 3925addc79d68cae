package storage

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/bits-and-blooms/bloom/v3"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
)

// BloomFilterType is the "bfType" of a stats log.
type BloomFilterType int

// Bloom filter types (Milvus bloomfilter.BFType).
const (
	// UnsupportedBF marks an unknown filter.
	UnsupportedBF BloomFilterType = 1
	// AlwaysTrueBF is a filter that matches every key.
	AlwaysTrueBF BloomFilterType = 2
	// BasicBF is bits-and-blooms/bloom/v3, JSON {"m","k","b"}.
	BasicBF BloomFilterType = 3
	// BlockedBF is the blocked filter (read as always-true here).
	BlockedBF BloomFilterType = 4
)

// DefaultBloomFPR is Milvus' default bloom filter false-positive rate (common.maxBloomFalsePositive).
const DefaultBloomFPR = 0.001

// ErrBadStats reports a stats log that cannot be parsed.
var ErrBadStats = errors.New("storage: bad stats log")

// PKStats is a primary-key stats record (Milvus PrimaryKeyStats): min/max key
// and a bloom filter over the keys of one sync batch.
type PKStats struct {
	// FieldID is the primary-key field.
	FieldID int64
	// PKType is Int64 or VarChar.
	PKType schemapb.DataType
	// BFType is the bloom filter type; the builder writes BasicBF.
	BFType BloomFilterType
	// BF is the filter when BFType is BasicBF; nil means every key may be present.
	BF *bloom.BloomFilter
	// MinInt64 and MaxInt64 bound Int64 keys (HasKeys false ⇒ meaningless).
	MinInt64, MaxInt64 int64
	// MinString and MaxString bound VarChar keys.
	MinString, MaxString string
	// HasKeys reports whether min/max are set.
	HasKeys bool

	rawBF json.RawMessage // an undecodable filter, kept for re-marshalling
}

// NewPKStats returns an empty stats builder with a BasicBF sized for
// capacity keys at DefaultBloomFPR.
func NewPKStats(fieldID int64, pkType schemapb.DataType, capacity uint) *PKStats {
	return &PKStats{
		FieldID: fieldID,
		PKType:  pkType,
		BFType:  BasicBF,
		BF:      bloom.NewWithEstimates(max(capacity, 1), DefaultBloomFPR),
	}
}

// int64Key is the bytes hashed for an Int64 key: 8 bytes little-endian.
func int64Key(pk int64) []byte {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(pk))
	return b[:]
}

// AddInt64 adds an Int64 key.
func (s *PKStats) AddInt64(pk int64) {
	if s.BF != nil {
		s.BF.Add(int64Key(pk))
	}
	if !s.HasKeys || pk < s.MinInt64 {
		s.MinInt64 = pk
	}
	if !s.HasKeys || pk > s.MaxInt64 {
		s.MaxInt64 = pk
	}
	s.HasKeys = true
}

// AddString adds a VarChar key.
func (s *PKStats) AddString(pk string) {
	if s.BF != nil {
		s.BF.AddString(pk)
	}
	if !s.HasKeys || pk < s.MinString {
		s.MinString = pk
	}
	if !s.HasKeys || pk > s.MaxString {
		s.MaxString = pk
	}
	s.HasKeys = true
}

// Add adds an int64 or string key matching PKType.
func (s *PKStats) Add(pk any) error {
	switch v := pk.(type) {
	case int64:
		if s.PKType != schemapb.DataType_Int64 {
			return fmt.Errorf("%w: int64 key for a %s primary key", ErrTypeMismatch, s.PKType)
		}
		s.AddInt64(v)
	case string:
		if s.PKType != schemapb.DataType_VarChar {
			return fmt.Errorf("%w: string key for a %s primary key", ErrTypeMismatch, s.PKType)
		}
		s.AddString(v)
	default:
		return fmt.Errorf("%w: key of type %T", ErrTypeMismatch, pk)
	}
	return nil
}

// MayContain reports whether pk may be among the added keys (false means
// certainly not). Keys outside [min, max] are rejected before the filter.
func (s *PKStats) MayContain(pk any) bool {
	switch v := pk.(type) {
	case int64:
		if s.PKType != schemapb.DataType_Int64 || (s.HasKeys && (v < s.MinInt64 || v > s.MaxInt64)) {
			return false
		}
		return s.BF == nil || s.BF.Test(int64Key(v))
	case string:
		if s.PKType != schemapb.DataType_VarChar || (s.HasKeys && (v < s.MinString || v > s.MaxString)) {
			return false
		}
		return s.BF == nil || s.BF.TestString(v)
	}
	return false
}

// Min returns the smallest key (int64 or string), or nil before any Add.
func (s *PKStats) Min() any {
	if !s.HasKeys {
		return nil
	}
	if s.PKType == schemapb.DataType_VarChar {
		return s.MinString
	}
	return s.MinInt64
}

// Max returns the largest key (int64 or string), or nil before any Add.
func (s *PKStats) Max() any {
	if !s.HasKeys {
		return nil
	}
	if s.PKType == schemapb.DataType_VarChar {
		return s.MaxString
	}
	return s.MaxInt64
}

// MarshalJSON writes the Milvus PrimaryKeyStats layout, keys in the order
// fieldID, max, min, bfType, bf, pkType, maxPk, minPk.
func (s *PKStats) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	legacyMax, legacyMin := int64(0), int64(0)
	if s.PKType != schemapb.DataType_VarChar && s.HasKeys {
		legacyMax, legacyMin = s.MaxInt64, s.MinInt64
	}
	buf.WriteString(`{"fieldID":` + strconv.FormatInt(s.FieldID, 10))
	buf.WriteString(`,"max":` + strconv.FormatInt(legacyMax, 10))
	buf.WriteString(`,"min":` + strconv.FormatInt(legacyMin, 10))
	buf.WriteString(`,"bfType":` + strconv.Itoa(int(s.BFType)))
	buf.WriteString(`,"bf":`)
	switch {
	case s.BF != nil:
		bf, err := json.Marshal(s.BF)
		if err != nil {
			return nil, fmt.Errorf("storage: encode bloom filter: %w", err)
		}
		buf.Write(bf)
	case s.rawBF != nil:
		buf.Write(s.rawBF)
	default:
		buf.WriteString("null")
	}
	buf.WriteString(`,"pkType":` + strconv.Itoa(int(s.PKType)))
	if s.HasKeys {
		maxPk, err := json.Marshal(s.Max())
		if err != nil {
			return nil, fmt.Errorf("storage: encode maxPk: %w", err)
		}
		minPk, err := json.Marshal(s.Min())
		if err != nil {
			return nil, fmt.Errorf("storage: encode minPk: %w", err)
		}
		buf.WriteString(`,"maxPk":`)
		buf.Write(maxPk)
		buf.WriteString(`,"minPk":`)
		buf.Write(minPk)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// UnmarshalJSON reads a PrimaryKeyStats object with Milvus' defaults:
// pkType absent or ≤ 0 ⇒ Int64, bfType absent ⇒ BasicBF, min/max from the
// legacy keys when maxPk/minPk are absent; an undecodable filter becomes
// always-true, as in Milvus.
func (s *PKStats) UnmarshalJSON(data []byte) error {
	var raw struct {
		FieldID int64           `json:"fieldID"`
		Max     *int64          `json:"max"`
		Min     *int64          `json:"min"`
		BFType  *int            `json:"bfType"`
		BF      json.RawMessage `json:"bf"`
		PKType  int64           `json:"pkType"`
		MaxPk   json.RawMessage `json:"maxPk"`
		MinPk   json.RawMessage `json:"minPk"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return fmt.Errorf("%w: %w", ErrBadStats, err)
	}
	*s = PKStats{FieldID: raw.FieldID, PKType: schemapb.DataType(raw.PKType), BFType: BasicBF}
	if raw.PKType <= 0 {
		s.PKType = schemapb.DataType_Int64
	}
	if raw.BFType != nil {
		s.BFType = BloomFilterType(*raw.BFType)
	}
	if s.BFType == BasicBF && len(raw.BF) > 0 && string(raw.BF) != "null" {
		bf := &bloom.BloomFilter{}
		if err := json.Unmarshal(raw.BF, bf); err == nil && bf.Cap() > 0 && bf.BitSet() != nil {
			s.BF = bf
		} else {
			s.rawBF = raw.BF
		}
	} else if len(raw.BF) > 0 && string(raw.BF) != "null" {
		s.rawBF = raw.BF
	}
	switch s.PKType {
	case schemapb.DataType_VarChar:
		if raw.MaxPk != nil && raw.MinPk != nil {
			if err := json.Unmarshal(raw.MaxPk, &s.MaxString); err != nil {
				return fmt.Errorf("%w: maxPk: %w", ErrBadStats, err)
			}
			if err := json.Unmarshal(raw.MinPk, &s.MinString); err != nil {
				return fmt.Errorf("%w: minPk: %w", ErrBadStats, err)
			}
			s.HasKeys = true
		}
	default:
		switch {
		case raw.MaxPk != nil && raw.MinPk != nil:
			if err := json.Unmarshal(raw.MaxPk, &s.MaxInt64); err != nil {
				return fmt.Errorf("%w: maxPk: %w", ErrBadStats, err)
			}
			if err := json.Unmarshal(raw.MinPk, &s.MinInt64); err != nil {
				return fmt.Errorf("%w: minPk: %w", ErrBadStats, err)
			}
			s.HasKeys = true
		case raw.Max != nil && raw.Min != nil:
			s.MaxInt64, s.MinInt64 = *raw.Max, *raw.Min
			s.HasKeys = true
		}
	}
	return nil
}

// MarshalStats encodes one per-sync stats log (a JSON object).
func MarshalStats(s *PKStats) ([]byte, error) {
	return s.MarshalJSON()
}

// MarshalCompoundStats encodes the merged stats log: a JSON array, even for one element.
func MarshalCompoundStats(stats []*PKStats) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('[')
	for i, s := range stats {
		if i > 0 {
			buf.WriteByte(',')
		}
		b, err := s.MarshalJSON()
		if err != nil {
			return nil, err
		}
		buf.Write(b)
	}
	buf.WriteByte(']')
	return buf.Bytes(), nil
}

// UnmarshalStats decodes a stats log: a single object or an array of them.
func UnmarshalStats(data []byte) ([]*PKStats, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, fmt.Errorf("%w: empty", ErrBadStats)
	}
	if trimmed[0] == '[' {
		var out []*PKStats
		if err := json.Unmarshal(trimmed, &out); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadStats, err)
		}
		return out, nil
	}
	s := &PKStats{}
	if err := json.Unmarshal(trimmed, s); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadStats, err)
	}
	return []*PKStats{s}, nil
}
