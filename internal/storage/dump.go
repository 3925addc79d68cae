package storage

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/strata-db/strata/internal/column"
)

// dumpVectorElems is how many vector elements Dump prints before eliding.
const dumpVectorElems = 8

// Dump writes a human-readable description of a binlog, delta log or stats
// log to w. For binlogs it prints the magic, the descriptor, each event and
// up to maxRows rows (maxRows < 0 prints all); for delta logs the (pk, ts)
// pairs; for stats logs (files starting with '{' or '[') a summary.
func Dump(w io.Writer, data []byte, maxRows int) error {
	bw := bufio.NewWriter(w)
	err := dump(bw, data, maxRows)
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	return err
}

func dump(w *bufio.Writer, data []byte, maxRows int) error {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') {
		return dumpStats(w, trimmed)
	}
	b, err := DecodeBinlog(data)
	if err != nil {
		if errors.Is(err, ErrEncrypted) {
			if pf, perr := parseFrameHeaderOnly(data); perr == nil {
				dumpDescriptor(w, data, pf)
			}
		}
		return err
	}
	dumpDescriptor(w, data, &parsedFrame{
		desc: b.Descriptor, descHeader: b.DescriptorHeader, postHeader: b.PostHeaderLengths,
		extrasRaw: extrasOf(data, b.DescriptorHeader),
	})
	for _, ev := range b.Events {
		fmt.Fprintf(w, "event @%d: type=%s(%d) ts=%d length=%d next_position=%d start_ts=%d end_ts=%d payload=%dB rows=%d\n",
			ev.Offset, ev.Type, int8(ev.Type), ev.Timestamp, ev.EventLength, ev.NextPosition,
			ev.StartTimestamp, ev.EndTimestamp, len(ev.Payload), ev.Rows)
	}
	fmt.Fprintf(w, "columns: %s\n", strings.Join(b.ColumnNames, ", "))
	if b.EventType() == DeleteEventType {
		pks, tss, err := deltaRecords(b)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "deletes: %d\n", len(tss))
		for i := range tss {
			if maxRows >= 0 && i >= maxRows {
				fmt.Fprintf(w, "... %d more\n", len(tss)-i)
				break
			}
			fmt.Fprintf(w, "%d\tpk=%s\tts=%d\n", i, formatRow(pks, i), tss[i])
		}
		return nil
	}
	col := b.Column()
	if col == nil {
		return nil
	}
	fmt.Fprintf(w, "rows: %d\n", col.Len())
	for i := 0; i < col.Len(); i++ {
		if maxRows >= 0 && i >= maxRows {
			fmt.Fprintf(w, "... %d more\n", col.Len()-i)
			break
		}
		fmt.Fprintf(w, "%d\t%s\n", i, formatRow(col, i))
	}
	return nil
}

// parseFrameHeaderOnly reads the descriptor of a file whose events cannot be parsed.
func parseFrameHeaderOnly(data []byte) (*parsedFrame, error) {
	if len(data) < 4+EventHeaderSize {
		return nil, ErrCorrupt
	}
	h := readHeader(data[4:])
	end := 4 + int(h.EventLength)
	if end > len(data) || end < 4 {
		return nil, ErrCorrupt
	}
	// Parse only the descriptor by truncating after it; extras with edek fail
	// parseFrame, so decode the fixed part here.
	pf := &parsedFrame{descHeader: h}
	p := data[4+EventHeaderSize : end]
	if len(p) < DescriptorFixedSize+PostHeaderLengthsSize+4 {
		return nil, ErrCorrupt
	}
	pf.desc.CollectionID = int64(binary.LittleEndian.Uint64(p[0:]))
	pf.desc.PartitionID = int64(binary.LittleEndian.Uint64(p[8:]))
	pf.desc.SegmentID = int64(binary.LittleEndian.Uint64(p[16:]))
	pf.desc.FieldID = int64(binary.LittleEndian.Uint64(p[24:]))
	pf.desc.StartTimestamp = binary.LittleEndian.Uint64(p[32:])
	pf.desc.EndTimestamp = binary.LittleEndian.Uint64(p[40:])
	pf.desc.PayloadType = schemapb.DataType(int32(binary.LittleEndian.Uint32(p[48:])))
	pf.postHeader = p[DescriptorFixedSize : DescriptorFixedSize+PostHeaderLengthsSize]
	pf.extrasRaw = extrasOf(data, h)
	return pf, nil
}

// extrasOf returns the raw extras JSON of a well-formed descriptor.
func extrasOf(data []byte, h EventHeader) []byte {
	start := 4 + EventHeaderSize + DescriptorFixedSize + PostHeaderLengthsSize
	if len(data) < start+4 {
		return nil
	}
	n := int(int32(binary.LittleEndian.Uint32(data[start:])))
	if n < 0 || start+4+n > len(data) || start+4+n > 4+int(h.EventLength) {
		return nil
	}
	return data[start+4 : start+4+n]
}

func dumpDescriptor(w *bufio.Writer, data []byte, pf *parsedFrame) {
	d := pf.desc
	fmt.Fprintf(w, "magic: %X\n", data[:4])
	fmt.Fprintf(w, "descriptor: ts=%d length=%d next_position=%d\n", pf.descHeader.Timestamp, pf.descHeader.EventLength, pf.descHeader.NextPosition)
	fmt.Fprintf(w, "  collection=%d partition=%d segment=%d field=%d\n", d.CollectionID, d.PartitionID, d.SegmentID, d.FieldID)
	fmt.Fprintf(w, "  payload_type=%s(%d) start_ts=%d end_ts=%d\n", d.PayloadType, int32(d.PayloadType), d.StartTimestamp, d.EndTimestamp)
	fmt.Fprintf(w, "  post_header_lengths=%v\n", pf.postHeader)
	fmt.Fprintf(w, "  extras=%s\n", pf.extrasRaw)
}

// formatRow renders row i of col on one line.
func formatRow(col column.Column, i int) string {
	if col.IsNull(i) {
		return "null"
	}
	switch c := col.(type) {
	case *column.Bools:
		return strconv.FormatBool(c.Data[i])
	case *column.Ints:
		return strconv.FormatInt(c.Data[i], 10)
	case *column.Floats:
		return strconv.FormatFloat(c.Data[i], 'g', -1, 64)
	case *column.Strings:
		return strconv.Quote(c.Data[i])
	case *column.JSONs:
		return string(c.Data[i])
	case *column.Geometries:
		if s, err := column.WKBToWKT(c.Data[i]); err == nil {
			return s
		}
		return fmt.Sprintf("%x", c.Data[i])
	case *column.Arrays:
		b, err := protojson.MarshalOptions{}.Marshal(c.Data[i])
		if err != nil {
			return "<" + err.Error() + ">"
		}
		return string(b)
	case *column.FloatVectors:
		row := c.Row(i)
		parts := make([]string, 0, min(len(row), dumpVectorElems))
		for k, v := range row {
			if k == dumpVectorElems {
				break
			}
			parts = append(parts, strconv.FormatFloat(float64(v), 'g', 6, 32))
		}
		return vectorString(parts, len(row))
	case *column.ByteVectors:
		row := c.Row(i)
		parts := make([]string, 0, min(len(row), dumpVectorElems))
		for k, v := range row {
			if k == dumpVectorElems {
				break
			}
			parts = append(parts, fmt.Sprintf("%02x", v))
		}
		return vectorString(parts, len(row))
	case *column.SparseVectors:
		row := c.Data[i]
		n := len(row) / 8
		parts := make([]string, 0, min(n, dumpVectorElems))
		for k := 0; k < n && k < dumpVectorElems; k++ {
			idx := binary.LittleEndian.Uint32(row[k*8:])
			val := math.Float32frombits(binary.LittleEndian.Uint32(row[k*8+4:]))
			parts = append(parts, fmt.Sprintf("%d:%s", idx, strconv.FormatFloat(float64(val), 'g', 6, 32)))
		}
		return vectorString(parts, n)
	}
	return fmt.Sprintf("%v", col)
}

func vectorString(parts []string, total int) string {
	s := "[" + strings.Join(parts, ", ")
	if total > len(parts) {
		s += fmt.Sprintf(", … (%d total)", total)
	}
	return s + "]"
}

func dumpStats(w *bufio.Writer, data []byte) error {
	stats, err := UnmarshalStats(data)
	if err != nil {
		return err
	}
	kind := "stats log"
	if data[0] == '[' {
		kind = "compound stats log"
	}
	fmt.Fprintf(w, "%s: %d entries\n", kind, len(stats))
	for i, s := range stats {
		bf := "none (always true)"
		if s.BF != nil {
			bf = fmt.Sprintf("m=%d bits k=%d (%d bytes)", s.BF.Cap(), s.BF.K(), (s.BF.Cap()+7)/8)
		}
		fmt.Fprintf(w, "%d\tfield=%d pk_type=%s min=%v max=%v bf_type=%s bf=%s\n",
			i, s.FieldID, s.PKType, s.Min(), s.Max(), s.BFType, bf)
	}
	return nil
}

// String returns the Milvus name of the bloom filter type.
func (t BloomFilterType) String() string {
	switch t {
	case UnsupportedBF:
		return "Unsupported"
	case AlwaysTrueBF:
		return "AlwaysTrue"
	case BasicBF:
		return "BasicBF"
	case BlockedBF:
		return "BlockedBF"
	}
	return fmt.Sprintf("BloomFilterType(%d)", int(t))
}
