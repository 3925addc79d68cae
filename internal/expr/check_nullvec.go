package expr

import "github.com/strata-db/strata/internal/column"

// checkNullOnVector refuses "v is null" and "v is not null" on a vector
// field with Milvus 2.6's message: a nullable vector field may hold nulls,
// but filters never test them (search skips null vectors by itself).
func (c *checker) checkNullOnVector(n *nullNode) error {
	id, ok := n.x.(*identNode)
	if !ok || len(id.path) > 0 {
		return nil
	}
	if f := c.byName[id.name]; f != nil && column.IsVector(f.GetDataType()) {
		// Milvus words it "cannot parse expression: …, error: IsNull/…"; the
		// "error: " part is kept so its message is a substring of Strata's.
		return errAt(n.pos, "cannot test vector field %s for null, error: IsNull/IsNotNull operations are not supported on vector fields", id.name)
	}
	return nil
}
