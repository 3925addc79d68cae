package metastore

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors shared by every KV implementation.
var (
	// ErrNotFound is returned by Get when the key is absent.
	ErrNotFound = errors.New("metastore: not found")
	// ErrConflict is returned by Txn when one of its guards is false.
	ErrConflict = errors.New("metastore: conflict")
	// ErrInvalidTxn is returned by Txn for a malformed operation list
	// (empty key, the same key mutated twice).
	ErrInvalidTxn = errors.New("metastore: invalid transaction")
	// ErrClosed is returned by operations on a closed KV.
	ErrClosed = errors.New("metastore: closed")
	// ErrCorrupt is wrapped by every error that reports damaged stored data
	// (a checksum mismatch, a broken page); implementations return typed
	// errors that name what is damaged and wrap it.
	ErrCorrupt = errors.New("metastore: corrupt")
	// ErrFenced is returned by Txn on a fenced KV (metastore/etcd.Fenced)
	// once the leadership term that fences it has ended: this process no
	// longer leads, another may, and nothing was applied. It is final: the
	// KV refuses every later Txn too.
	ErrFenced = errors.New("metastore: fenced: no longer the leader")
)

// KV is the meta-store port: a transactional, durable, sorted key-value
// store. See the package documentation for the full contract.
type KV interface {
	// Get returns the value stored at key, or ErrNotFound.
	Get(ctx context.Context, key string) ([]byte, error)
	// Scan returns every key-value pair whose key starts with prefix, sorted by key.
	Scan(ctx context.Context, prefix string) ([]KeyValue, error)
	// Txn applies ops atomically and durably; a false guard fails it with ErrConflict.
	Txn(ctx context.Context, ops ...Op) error
	// Close releases the store. It is idempotent.
	Close() error
}

// KeyValue is one entry returned by Scan.
type KeyValue struct {
	// Key is the entry's key.
	Key string
	// Value is the entry's value; the caller owns it.
	Value []byte
}

// OpKind says what an Op does.
type OpKind uint8

// The kinds of Op.
const (
	// OpPut stores Value at Key.
	OpPut OpKind = iota + 1
	// OpDelete removes Key; an absent key is not an error.
	OpDelete
	// OpDeletePrefix removes every key that starts with Key.
	OpDeletePrefix
	// OpIfAbsent is a guard: true when Key is absent.
	OpIfAbsent
	// OpIfEquals is a guard: true when Key is present and holds exactly Value.
	OpIfEquals
)

// String returns the kind's name.
func (k OpKind) String() string {
	switch k {
	case OpPut:
		return "put"
	case OpDelete:
		return "delete"
	case OpDeletePrefix:
		return "delete-prefix"
	case OpIfAbsent:
		return "if-absent"
	case OpIfEquals:
		return "if-equals"
	default:
		return fmt.Sprintf("op(%d)", uint8(k))
	}
}

// Op is one operation of a Txn: a mutation or a guard. Build it with Put,
// Delete, DeletePrefix, IfAbsent or IfEquals.
type Op struct {
	kind  OpKind
	key   string
	value []byte
}

// Put returns an Op that stores value at key.
func Put(key string, value []byte) Op { return Op{kind: OpPut, key: key, value: value} }

// Delete returns an Op that removes key; deleting an absent key is not an error.
func Delete(key string) Op { return Op{kind: OpDelete, key: key} }

// DeletePrefix returns an Op that removes every key starting with prefix.
func DeletePrefix(prefix string) Op { return Op{kind: OpDeletePrefix, key: prefix} }

// IfAbsent returns a guard that holds when key is absent.
func IfAbsent(key string) Op { return Op{kind: OpIfAbsent, key: key} }

// IfEquals returns a guard that holds when key is present with exactly value.
func IfEquals(key string, value []byte) Op { return Op{kind: OpIfEquals, key: key, value: value} }

// Kind returns what the Op does.
func (o Op) Kind() OpKind { return o.kind }

// Key returns the Op's key (the prefix for OpDeletePrefix).
func (o Op) Key() string { return o.key }

// Value returns the Op's value (OpPut and OpIfEquals only).
func (o Op) Value() []byte { return o.value }

// IsGuard reports whether the Op is a guard rather than a mutation.
func (o Op) IsGuard() bool { return o.kind == OpIfAbsent || o.kind == OpIfEquals }

// String describes the Op for errors and logs (values are not printed).
func (o Op) String() string { return fmt.Sprintf("%s(%q)", o.kind, o.key) }

// ValidateOps checks an operation list against the Txn contract: known kinds,
// non-empty keys, no key mutated twice, and no Put or Delete under one of the
// transaction's own DeletePrefix ranges. Failures wrap ErrInvalidTxn.
// Implementations call it before touching storage.
func ValidateOps(ops []Op) error {
	var prefixes []string
	written := make(map[string]struct{}, len(ops))
	for i, op := range ops {
		if op.kind < OpPut || op.kind > OpIfEquals {
			return fmt.Errorf("%w: op %d has unknown kind %d", ErrInvalidTxn, i, op.kind)
		}
		if op.key == "" {
			return fmt.Errorf("%w: op %d (%s) has an empty key", ErrInvalidTxn, i, op.kind)
		}
		switch op.kind {
		case OpPut, OpDelete:
			if _, dup := written[op.key]; dup {
				return fmt.Errorf("%w: key %q mutated twice", ErrInvalidTxn, op.key)
			}
			written[op.key] = struct{}{}
		case OpDeletePrefix:
			prefixes = append(prefixes, op.key)
		}
	}
	for _, p := range prefixes {
		for k := range written {
			if strings.HasPrefix(k, p) {
				return fmt.Errorf("%w: key %q mutated under its own delete-prefix %q", ErrInvalidTxn, k, p)
			}
		}
	}
	return nil
}
