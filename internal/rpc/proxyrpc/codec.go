package proxyrpc

import (
	"encoding/json"
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/rpc/coordrpc"
)

// encodeJSON marshals an importer record into its JSON.
func encodeJSON(what string, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("proxyrpc: encode %s: %w", what, err)
	}
	return b, nil
}

// decodeJSON unmarshals an importer record from its JSON.
func decodeJSON[T any](what string, b []byte) (T, error) {
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		return v, fmt.Errorf("proxyrpc: decode %s: %w", what, err)
	}
	return v, nil
}

// encodeCollections marshals collections as they travel
// (coordrpc.EncodeCollection).
func encodeCollections(cols []*catalog.Collection) ([][]byte, error) {
	out := make([][]byte, len(cols))
	for i, c := range cols {
		b, err := coordrpc.EncodeCollection(c)
		if err != nil {
			return nil, err
		}
		out[i] = b
	}
	return out, nil
}

// decodeCollections unmarshals what encodeCollections encoded.
func decodeCollections(bs [][]byte) ([]*catalog.Collection, error) {
	out := make([]*catalog.Collection, len(bs))
	for i, b := range bs {
		c, err := coordrpc.DecodeCollection(b)
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	return out, nil
}

// unmarshal decodes a serialized Milvus message of a request; a message
// that does not decode is code 1100.
func unmarshal[T proto.Message](what string, b []byte, m T) (T, error) {
	if err := proto.Unmarshal(b, m); err != nil {
		return m, errcode.Invalid("proxyrpc: decode %s: %v", what, err)
	}
	return m, nil
}

// marshal encodes a Milvus message.
func marshal(what string, m proto.Message) ([]byte, error) {
	b, err := proto.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("proxyrpc: encode %s: %w", what, err)
	}
	return b, nil
}

// invalid is a request that cannot be decoded: code 1100, never retried.
func invalid(err error) error { return errcode.Invalid("%v", err) }
