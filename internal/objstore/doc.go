// Package objstore is Strata's object-storage port: a flat namespace of
// immutable-once-written blobs addressed by slash-separated keys, as in S3.
// Binlogs, stats logs, delta logs and index files live here.
//
// Implementations: objstore/local (a directory in the data directory, for
// standalone) and objstore/s3 (S3 or MinIO, for cluster). Every
// implementation passes the conformance suite in objstore/objtest.
//
// # Keys
//
// A key is a non-empty sequence of non-empty segments joined by "/", for
// example "files/insert_log/1/2/3/100/7". A key has no leading or trailing
// "/", no empty segment ("a//b"), no "." or ".." segment and no NUL byte;
// other keys fail with ErrInvalidKey. Keys compare bytewise.
//
// A key must not also be a proper prefix-directory of another key: "a/b" and
// "a/b/c" cannot both exist (S3 allows it, a file system does not). The
// paths Strata writes never do this; an implementation may fail such a Put.
//
// # Contract
//
//   - Put is atomic: a concurrent or later reader sees either the previous
//     object or the whole new one, never a partial one. It returns once the
//     object is durable. Overwriting an existing key replaces it.
//   - Get and Stat fail with ErrNotFound when the key is absent.
//   - List returns every object whose key starts with prefix (a plain byte
//     prefix, recursive, so "a/1" matches "a/1/x" and "a/10"), sorted by key.
//     The prefix "" lists everything. A prefix's complete segments (those
//     before its last "/") must be valid key segments.
//   - Delete removes an object; deleting an absent key is not an error.
//   - All methods are safe for concurrent use and honour ctx cancellation.
package objstore
