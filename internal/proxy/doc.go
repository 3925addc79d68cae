// Package proxy implements the Milvus MilvusService semantics: it validates
// requests against collection schemas, routes rows to shards by primary-key
// hash, gets segment assignments and one timestamp per request while
// appending to the WAL, and fans reads out to query nodes. Errors are turned
// into Milvus Status values here, at the API boundary, and nowhere else.
//
// # Validate before the append
//
// A write is acknowledged once it is in the WAL, and the data node and the
// query node apply it from there, on every replay. So everything they would
// reject is rejected here first: rows are checked value by value against the
// schema (validateRows), and every insert message built from them is decoded
// with column.InsertColumns, the very function both consumers apply insert
// messages with, before the append. An auto-ID primary key is generated in
// the field's own type: int64 IDs, or for a VarChar key the same IDs as
// decimal text (as Milvus does), returned as string IDs.
//
// # One primary key twice
//
// Rows of the same primary key written by separate requests all stay stored;
// query, get and search serve the one inserted last (the highest timestamp),
// and count(*) counts every visible row, as Milvus does (an upsert or a
// delete is the way to replace a key). Within one request every row has the
// same timestamp, so the proxy decides:
//
//   - Insert keeps the last row of each key in the request and drops the
//     earlier ones before the append, so the later row wins, as a later
//     request would, and count(*) counts the key once. The response's IDs,
//     succ_index and insert_cnt describe the rows stored.
//   - Upsert refuses a request that holds a key twice with code 1100 and
//     "duplicate primary keys are not allowed in the same batch", as
//     Milvus 2.6 does; nothing of it is applied.
//
// Since the dropped rows are never written, every read agrees before and
// after flush and compaction.
//
// # Partial update
//
// An upsert with partial_update, or with an ARRAY_APPEND / ARRAY_REMOVE
// field op (which implies it), sends only the fields to change. The proxy
// reads the stored rows of its keys with a Strong query in the target
// partition, merges them with the request (fields not sent keep their stored
// values, dynamic keys merge, array ops edit the stored arrays, new keys must
// send every required field) and writes the result as an ordinary upsert, one
// delete and insert WAL batch. Concurrent partial updates of one key are last
// writer wins at the row level, as in Milvus. The rules are in partial.go.
//
// # Reads: resolve, parse, execute
//
// A search or query is read in three steps. The collection is resolved;
// parseSearch (search_parse.go) or parseQuery (query_parse.go) then parses
// and validates the whole request against it, reporting the first problem
// in Milvus's order, and yields the query node's request with what shaping
// the answer needs. The parsers do no I/O and read no proxy state: the
// clock, the Bounded staleness and the collection's index parameters come
// in a readEnv, so table tests drive them directly. Execution then runs the
// request; only a search by primary keys reads first, the stored vectors of
// its keys (bindPKVectors). Hybrid search parses each sub-search the same
// way. Every index-specific search parameter (ef, nprobe, refine_k,
// rbq_bits_query, the sparse index's, radius and range_filter) is read in
// parseIndexSearchParams (search_params.go), which keeps each number as
// the client wrote it: a refused ef, nprobe, refine_k or rbq_bits_query is
// worded as Milvus's index library words it ("Type conflict in json: param
// 'ef' (32.0) should be integer") with the code Milvus's suite shows for
// the index type (65535 on HNSW_SQ and the other quantized HNSW types,
// 999 elsewhere).
//
// # Request limits
//
// Requests are bounded at Milvus 2.6's defaults and refused with Milvus's
// codes and messages (limits.go): nq, topk, offset and offset+topk of a
// search ≤ 16384, offset+limit of a query ≤ 16384, group_size ≤ 10, ≤ 1024
// sub-searches in a hybrid search (code 1100), and writes over
// Config.MaxRequestBytes, 64 MiB (code 1102). Schema and catalog limits are
// the root coordinator's (internal/rootcoord).
//
// # Load state
//
// Loads are synchronous, so GetLoadState answers NotLoad or Loaded. As in
// Milvus 2.6, a collection counts as Loaded while any of its partitions is
// (after load_partitions of some), and NotLoad once the last is released;
// named partitions are Loaded only when all of them are. A read naming a
// partition that is not loaded gets 201 "partition not loaded".
//
// # ignore_growing
//
// The search parameter or query parameter "ignore_growing" ("True"/"False",
// as strconv.ParseBool reads it; anything else is refused with "parse ignore
// growing field failed") makes the read skip growing segments: only rows in
// segments the query node holds sealed are returned or counted.
//
// # Partition-key collections
//
// A collection with a partition-key field has num_partitions partitions
// (internal/rootcoord); insert and upsert route each row to the partition its
// key hashes to, with Milvus's hash (partitionkey.go). Partition DDL and
// partition names on writes and reads are refused there, in Milvus's words.
// Reads need no routing: a key filter matches in whichever partition the
// rows are.
//
// # Names before lookups
//
// As in Milvus 2.6, a call checks the form of the names it is given
// (catalog.ValidateName) before it looks them up, so a malformed name is
// answered with code 1100 and Milvus's reason ("Invalid collection name: 12-s.
// the first character of a collection name must be an underscore or letter:
// invalid parameter"), not with "collection not found" (100). Collection
// names are checked by describe, has (an error, not a false), load, release,
// load state and progress, statistics, insert, upsert, delete, query, flush,
// describe, alter and drop index, compaction, segment info and every
// partition and alias call; partition names by create, drop, has and release
// partitions and by writes that name a partition (load and search only look
// partitions up); alias names by the alias calls; database names by
// drop_database (create_database's check is the root coordinator's). The
// calls Milvus answers with a bare lookup keep doing so: drop_collection (a
// missing collection drops successfully, whatever its name),
// alter_collection, search, hybrid_search, create_index and rename's old name.
//
// # Array of Structs
//
// The proxy is the only component that sees struct fields (structarray.go).
// A struct column of an insert or upsert is split into its sub-field
// columns "struct[sub]" (every sub-field present, the same element count in
// each per row, at most max_capacity), which the rest of the system stores
// as ordinary Array and ArrayOfVector fields; output fields join them back
// into one ArrayOfStruct column per struct. A search on a vector sub-field
// is an embedding-list search (EmbListFloatVector queries, a MAX_SIM
// metric) or, with plain float queries and L2/IP/COSINE, an element-level
// search whose hits are elements (element_indices), collapsed to their
// row's best in a hybrid search. Both are exact scans on the query node.
package proxy
