package proxy

import (
	"google.golang.org/protobuf/proto"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/quota"
)

// SetQuotas gives the proxy the quotas and limits (Milvus's
// quotaAndLimits) its inserts, upserts, deletes, searches and queries are
// admitted by; without it every request is admitted.
func (p *Proxy) SetQuotas(q *quota.Quotas) { p.quotas = q }

// admit checks a request of kind on col costing n (bytes of the request for
// DML, query vectors for a search, 1 for a query) against the quotas, as
// Milvus's rate-limit interceptor does once the collection is known: code 8
// (retriable) when a rate is exhausted, code 9 when writes or reads are
// denied.
func (p *Proxy) admit(kind quota.Kind, col *catalog.Collection, n int) error {
	if p.quotas == nil {
		return nil
	}
	var dbProps map[string]string
	if db, err := p.meta.Database(col.DBName); err == nil {
		dbProps = db.Properties
	}
	return p.quotas.Check(quota.Request{
		Kind: kind, DB: col.DBName, DBProperties: dbProps,
		Collection: col.ID, Properties: col.Properties, N: n,
	})
}

// admitWrite admits an insert or upsert (or, with del, a delete) by the
// size of its request message, as Milvus counts DML.
func (p *Proxy) admitWrite(col *catalog.Collection, req proto.Message, del bool) error {
	if p.quotas == nil {
		return nil
	}
	kind := quota.Insert
	if del {
		kind = quota.Delete
	}
	return p.admit(kind, col, proto.Size(req))
}

// admitSearch admits a search of nq query vectors.
func (p *Proxy) admitSearch(col *catalog.Collection, nq int) error {
	return p.admit(quota.Search, col, nq)
}

// admitQuery admits a query (Milvus counts each as 1).
func (p *Proxy) admitQuery(col *catalog.Collection) error {
	return p.admit(quota.Query, col, 1)
}
