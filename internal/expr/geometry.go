package expr

import (
	"fmt"
	"math"

	sf "github.com/peterstace/simplefeatures/geom"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/column"
)

// Spatial filters on Geometry fields, as Milvus 2.6 spells them:
//
//	ST_EQUALS | ST_TOUCHES | ST_OVERLAPS | ST_CROSSES | ST_CONTAINS | ST_INTERSECTS | ST_WITHIN
//	    "(" geometry_field "," wkt ")"       wkt: a string constant or a {template}
//	ST_DWITHIN "(" geometry_field "," point_wkt "," distance_in_meters ")"
//	ST_ISVALID "(" geometry_field ")"
//
// Names are all upper or all lower case. The field is the first operand:
// ST_CONTAINS(geo, q) holds where the row geometry contains q, ST_WITHIN(geo,
// q) where it lies within q (the OGC DE-9IM predicates, evaluated exactly by
// simplefeatures after a bounding-box test). ST_DWITHIN measures the
// great-circle (haversine, earth radius 6371 km) distance in meters
// from the query point to the row geometry, coordinates read as (longitude latitude).
// A null row is null (so false).

// spatialOp is one binary spatial predicate.
type spatialOp uint8

const (
	stEquals spatialOp = iota
	stTouches
	stOverlaps
	stCrosses
	stContains
	stIntersects
	stWithin
	stDWithin
	stIsValid
)

var spatialNames = map[string]spatialOp{
	"st_equals": stEquals, "st_touches": stTouches, "st_overlaps": stOverlaps, "st_crosses": stCrosses,
	"st_contains": stContains, "st_intersects": stIntersects, "st_within": stWithin,
	"st_dwithin": stDWithin, "st_isvalid": stIsValid,
}

func (o spatialOp) String() string {
	return [...]string{
		"ST_EQUALS", "ST_TOUCHES", "ST_OVERLAPS", "ST_CROSSES", "ST_CONTAINS",
		"ST_INTERSECTS", "ST_WITHIN", "ST_DWITHIN", "ST_ISVALID",
	}[o]
}

// earthRadius is the mean earth radius in meters used by ST_DWITHIN.
const earthRadius = 6371000.0

// GeoQuery is a compiled spatial predicate against one query geometry. It is
// exported for index implementations (an R-tree narrows candidates by
// Envelope, then calls Match on each).
type GeoQuery struct {
	op       spatialOp
	wkt      string
	q        sf.Geometry
	qEnv     sf.Envelope
	distance float64 // meters, ST_DWITHIN only
}

// geoPred evaluates a GeoQuery over a Geometry column.
type geoPred struct {
	fid  int64
	name string
	gq   *GeoQuery
}

func (p *geoPred) addFields(add func(int64)) { add(p.fid) }

func (p *geoPred) String() string {
	switch p.gq.op {
	case stIsValid:
		return "ST_ISVALID(" + p.name + ")"
	case stDWithin:
		return fmt.Sprintf("ST_DWITHIN(%s, %q, %v)", p.name, p.gq.wkt, p.gq.distance)
	}
	return fmt.Sprintf("%s(%s, %q)", p.gq.op, p.name, p.gq.wkt)
}

func (p *geoPred) eval(c *evalCtx) (boolVec, error) {
	col, err := c.column(p.fid, p.name)
	if err != nil {
		return boolVec{}, err
	}
	g, ok := col.(*column.Geometries)
	if !ok {
		return boolVec{}, fmt.Errorf("expr: field %s holds %T, want a Geometry column", p.name, col)
	}
	cand := p.candidates(c)
	out := make([]bool, c.n)
	for i, b := range g.Data {
		if g.IsNull(i) || cand != nil && !cand[i] {
			continue
		}
		out[i] = p.gq.MatchWKB(b)
	}
	return mask(out, g.Valid), nil
}

// geoNullPred is "geo is [not] null" on a Geometry field.
type geoNullPred struct {
	fid  int64
	name string
	not  bool
}

func (p *geoNullPred) addFields(add func(int64)) { add(p.fid) }
func (p *geoNullPred) String() string {
	if p.not {
		return p.name + " is not null"
	}
	return p.name + " is null"
}

func (p *geoNullPred) eval(c *evalCtx) (boolVec, error) {
	col, err := c.column(p.fid, p.name)
	if err != nil {
		return boolVec{}, err
	}
	out := make([]bool, c.n)
	for i := range out {
		out[i] = col.IsNull(i) != p.not
	}
	return boolVec{val: out}, nil
}

// geoField returns the Geometry field n names, or nil.
func (c *checker) geoField(n node) *schemapb.FieldSchema {
	id, ok := n.(*identNode)
	if !ok || len(id.path) > 0 {
		return nil
	}
	f := c.byName[id.name]
	if f == nil || f.GetDataType() != schemapb.DataType_Geometry {
		return nil
	}
	return f
}

// checkSpatial compiles an ST_* call. The messages follow Milvus's.
func (c *checker) checkSpatial(n *callNode, op spatialOp) (operand, error) {
	want := 2
	switch op {
	case stDWithin:
		want = 3
	case stIsValid:
		want = 1
	}
	if len(n.args) != want {
		return operand{}, errAt(n.pos, "function %s takes %d argument(s), got %d", op, want, len(n.args))
	}
	f := c.geoField(n.args[0])
	if f == nil {
		return operand{}, errAt(n.args[0].position(), "spatial operation are only supported on geometry fields now, got: %s", op)
	}
	gq := &GeoQuery{op: op}
	if op != stIsValid {
		a, err := c.check(n.args[1])
		if err != nil {
			return operand{}, err
		}
		if a.c == nil || a.c.k != vkString {
			return operand{}, errAt(a.pos, "%s needs a WKT string as its second argument, got %s", op, describe(a))
		}
		if err := gq.setGeometry(a.c.s); err != nil {
			return operand{}, errAt(a.pos, "%v", err)
		}
	}
	if op == stDWithin {
		if !gq.q.IsPoint() || gq.q.IsEmpty() {
			return operand{}, errAt(n.args[1].position(), "ST_DWITHIN needs a POINT as the query geometry, got %s", gq.wkt)
		}
		d, err := c.check(n.args[2])
		if err != nil {
			return operand{}, err
		}
		if d.c == nil || !d.c.isNumber() {
			return operand{}, errAt(d.pos, "distance parameter must be a constant numeric value, got %s", describe(d))
		}
		dist := d.c.asFloat()
		if dist < 0 || math.IsNaN(dist) {
			return operand{}, errAt(d.pos, "distance parameter must be non-negative, got: %f", dist)
		}
		gq.distance = dist
	}
	return operand{pos: n.pos, p: &geoPred{fid: f.GetFieldID(), name: f.GetName(), gq: gq}}, nil
}

// setGeometry parses the query WKT (as Milvus does, with the same parser
// that checks inserted values).
func (q *GeoQuery) setGeometry(s string) error {
	b, err := column.ParseWKT(s)
	if err != nil {
		return fmt.Errorf("invalid WKT %q: %w", s, err)
	}
	g, err := sf.UnmarshalWKB(b, sf.NoValidate{})
	if err != nil {
		return fmt.Errorf("invalid WKT %q: %w", s, err)
	}
	q.wkt, q.q, q.qEnv = s, g.Force2D(), g.Envelope()
	return nil
}

// Envelope returns the box a row's bounding box must meet for the row to
// match (the query's box, grown by the search radius for ST_DWITHIN), and
// whether there is one: bounded is false when rows anywhere may match
// (ST_ISVALID, an empty query geometry, a radius that wraps the globe).
func (q *GeoQuery) Envelope() (minX, minY, maxX, maxY float64, bounded bool) {
	lo, hi, ok := q.qEnv.MinMaxXYs()
	if q.op == stIsValid || !ok {
		return 0, 0, 0, 0, false
	}
	if q.op == stDWithin {
		// 5% slack covers the spherical excess of the flat bound.
		dLat := 1.05*q.distance/earthRadius*180/math.Pi + 1e-9
		latMax := math.Max(math.Abs(lo.Y-dLat), math.Abs(hi.Y+dLat))
		if latMax >= 89.9 {
			return 0, 0, 0, 0, false
		}
		dLon := dLat / math.Cos(latMax*math.Pi/180)
		if lo.X-dLon < -180 || hi.X+dLon > 180 {
			return 0, 0, 0, 0, false
		}
		return lo.X - dLon, lo.Y - dLat, hi.X + dLon, hi.Y + dLat, true
	}
	return lo.X, lo.Y, hi.X, hi.Y, true
}

// GeoIndex is a spatial index over a Geometry field (the RTREE index):
// MarkBox sets out[r] for every row whose bounding box meets the box and
// reports ok = false when it cannot answer. Rows it does not mark are
// never tested; marked rows still get the exact predicate.
type GeoIndex interface {
	MarkBox(minX, minY, maxX, maxY float64, out []bool) (n int, ok bool)
}

// candidates returns the rows worth testing exactly (nil: every row).
func (p *geoPred) candidates(c *evalCtx) []bool {
	ib, ok := c.b.(IndexedBatch)
	if !ok {
		return nil
	}
	gi, ok := ib.Index(p.fid).(GeoIndex)
	if !ok {
		return nil
	}
	minX, minY, maxX, maxY, bounded := p.gq.Envelope()
	if !bounded {
		return nil
	}
	out := make([]bool, c.n)
	if _, ok := gi.MarkBox(minX, minY, maxX, maxY, out); !ok {
		return nil
	}
	return out
}

// MatchWKB evaluates the predicate on one row geometry in WKB. A row that
// does not decode matches nothing.
func (q *GeoQuery) MatchWKB(b []byte) bool {
	if q.op == stIsValid {
		_, err := sf.UnmarshalWKB(b)
		return err == nil
	}
	g, err := sf.UnmarshalWKB(b, sf.NoValidate{})
	if err != nil {
		return false
	}
	return q.match(g.Force2D())
}

// match evaluates the predicate on one decoded row geometry. Topology
// errors inside the relate algorithm (possible on invalid input) count as
// no match rather than failing the whole query.
func (q *GeoQuery) match(g sf.Geometry) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	if q.op == stDWithin {
		return q.distanceTo(g) <= q.distance
	}
	env := g.Envelope()
	if g.IsEmpty() || q.q.IsEmpty() {
		if q.op == stEquals {
			return g.IsEmpty() && q.q.IsEmpty()
		}
		return false
	}
	if !env.Intersects(q.qEnv) {
		return false
	}
	var res bool
	var err error
	switch q.op {
	case stEquals:
		if pa, pb := pointXY(g), pointXY(q.q); pa != nil && pb != nil {
			return *pa == *pb
		}
		res, err = sf.Equals(g, q.q)
	case stTouches:
		res, err = sf.Touches(g, q.q)
	case stOverlaps:
		res, err = sf.Overlaps(g, q.q)
	case stCrosses:
		res, err = sf.Crosses(g, q.q)
	case stContains:
		if !env.Covers(q.qEnv) {
			return false
		}
		res, err = sf.Contains(g, q.q)
	case stIntersects:
		res = sf.Intersects(g, q.q)
	case stWithin:
		if !q.qEnv.Covers(env) {
			return false
		}
		res, err = sf.Within(g, q.q)
	}
	return err == nil && res
}

func pointXY(g sf.Geometry) *sf.XY {
	p, ok := g.AsPoint()
	if !ok {
		return nil
	}
	xy, ok := p.XY()
	if !ok {
		return nil
	}
	return &xy
}

// distanceTo is the great-circle distance in meters from the query point to
// g: zero when g covers the point, else the least distance to g's vertices
// and to the nearest point of each of its edges (found in the plane, then
// measured on the sphere).
func (q *GeoQuery) distanceTo(g sf.Geometry) float64 {
	qp := pointXY(q.q)
	if qp == nil || g.IsEmpty() {
		return math.Inf(1)
	}
	if p := pointXY(g); p != nil {
		return haversine(*qp, *p)
	}
	if g.Dimension() == 2 && sf.Intersects(g, q.q) {
		return 0
	}
	best := math.Inf(1)
	for _, part := range g.Dump() {
		var seqs []sf.Sequence
		switch part.Type() {
		case sf.TypePoint:
			if p := pointXY(part); p != nil {
				best = math.Min(best, haversine(*qp, *p))
			}
			continue
		case sf.TypeLineString:
			seqs = append(seqs, part.MustAsLineString().Coordinates())
		case sf.TypePolygon:
			seqs = part.MustAsPolygon().Coordinates()
		}
		for _, s := range seqs {
			for i := 0; i < s.Length(); i++ {
				a := s.GetXY(i)
				best = math.Min(best, haversine(*qp, a))
				if i+1 < s.Length() {
					best = math.Min(best, haversine(*qp, nearestOnSegment(*qp, a, s.GetXY(i+1))))
				}
			}
		}
	}
	return best
}

func nearestOnSegment(p, a, b sf.XY) sf.XY {
	dx, dy := b.X-a.X, b.Y-a.Y
	l := dx*dx + dy*dy
	if l == 0 {
		return a
	}
	t := ((p.X-a.X)*dx + (p.Y-a.Y)*dy) / l
	t = math.Max(0, math.Min(1, t))
	return sf.XY{X: a.X + t*dx, Y: a.Y + t*dy}
}

// haversine is the great-circle distance in meters between two
// (longitude, latitude) points in degrees.
func haversine(a, b sf.XY) float64 {
	rad := math.Pi / 180
	lat1, lat2 := a.Y*rad, b.Y*rad
	dLat, dLon := (b.Y-a.Y)*rad, (b.X-a.X)*rad
	h := math.Sin(dLat/2)*math.Sin(dLat/2) + math.Cos(lat1)*math.Cos(lat2)*math.Sin(dLon/2)*math.Sin(dLon/2)
	return 2 * earthRadius * math.Asin(math.Min(1, math.Sqrt(h)))
}
