package importer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
)

// decodeJSON decodes b into v keeping numbers exact (json.Number).
func decodeJSON(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

// jsonSource is a row-based JSON file: {"rows": [{...}, ...]}, as
// LocalBulkWriter writes it, or a plain list of row objects.
type jsonSource struct {
	schema *schemapb.CollectionSchema
	rows   []json.RawMessage
}

func newJSONSource(schema *schemapb.CollectionSchema, data []byte) (*jsonSource, error) {
	data = bytes.TrimSpace(data)
	s := &jsonSource{schema: schema}
	switch {
	case len(data) > 0 && data[0] == '[':
		if err := json.Unmarshal(data, &s.rows); err != nil {
			return nil, fmt.Errorf("not a JSON list of rows: %w", err)
		}
	case len(data) > 0 && data[0] == '{':
		var top map[string]json.RawMessage
		if err := json.Unmarshal(data, &top); err != nil {
			return nil, fmt.Errorf("not valid JSON: %w", err)
		}
		raw, ok := top["rows"]
		if !ok {
			return nil, errors.New(`a JSON import file is a list of rows or an object with a "rows" list`)
		}
		if err := json.Unmarshal(raw, &s.rows); err != nil {
			return nil, fmt.Errorf(`"rows" is not a list of rows: %w`, err)
		}
	default:
		return nil, errors.New(`not valid JSON: a JSON import file is a list of rows or an object with a "rows" list`)
	}
	return s, nil
}

// newJSONLinesSource reads a JSON Lines file: one row object per line
// (blank lines skipped).
func newJSONLinesSource(schema *schemapb.CollectionSchema, data []byte) (*jsonSource, error) {
	s := &jsonSource{schema: schema}
	for line := range bytes.SplitSeq(data, []byte("\n")) {
		if line = bytes.TrimSpace(line); len(line) > 0 {
			s.rows = append(s.rows, json.RawMessage(line))
		}
	}
	return s, nil
}

func (s *jsonSource) numRows() int { return len(s.rows) }

func (s *jsonSource) read(lo, hi int) (*batch, error) {
	b, err := newBatch(s.schema, nil)
	if err != nil {
		return nil, err
	}
	for i := lo; i < hi; i++ {
		var row map[string]any
		if err := decodeJSON(s.rows[i], &row); err != nil || row == nil {
			return nil, &rowError{row: i, err: errors.New("the row is not a JSON object")}
		}
		if err := b.addRow(row); err != nil {
			return nil, &rowError{row: i, err: err}
		}
	}
	return b, nil
}

// rowError names the row (0-based, in the file) a bad value is in.
type rowError struct {
	row int
	err error
}

func (e *rowError) Error() string { return fmt.Sprintf("row %d: %v", e.row, e.err) }
func (e *rowError) Unwrap() error { return e.err }
