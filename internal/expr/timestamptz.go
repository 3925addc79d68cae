package expr

import (
	"strconv"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/column"
)

// Timestamptz literals.
//
// A Timestamptz field compares as an integer (microseconds since the Unix
// epoch, UTC). Two literal forms produce such integers:
//
//	ISO '2025-01-01T00:00:00+08:00'   an instant; a string without an
//	                                  offset is read in the filter's time zone
//	INTERVAL 'P1DT2H'                 an ISO-8601 duration of weeks, days,
//	                                  hours, minutes and seconds, in microseconds
//
// so `ts - INTERVAL 'P3D' >= ISO '1970-01-01T00:00:00Z'` is integer
// arithmetic. Calendar units (years, months) have no fixed length and are
// refused.

// CompileTZ is Compile with the time zone that ISO literals without an
// offset are read in (UTC when empty).
func CompileTZ(src string, schema *schemapb.CollectionSchema, templates map[string]*schemapb.TemplateValue, tz string) (*Expr, error) {
	return compile(src, schema, templates, tz)
}

// timeLiteral parses `ISO '…'` or `INTERVAL '…'` when t starts one.
func (p *parser) timeLiteral(t token) (node, bool, error) {
	var iso bool
	switch t.text {
	case "ISO", "iso":
		iso = true
	case "INTERVAL", "interval":
	default:
		return nil, false, nil
	}
	if p.peek().kind != tString {
		return nil, false, nil
	}
	s := p.next()
	if iso {
		tz := p.tz
		if tz == "" {
			tz = column.DefaultTimezone
		}
		v, err := column.ParseTimestamptz(s.str, tz)
		if err != nil {
			return nil, true, errAt(s.pos, "%v", err)
		}
		return &litNode{pos: t.pos, v: intVal(v)}, true, nil
	}
	v, err := parseISODuration(s.str)
	if err != nil {
		return nil, true, errAt(s.pos, "invalid interval %q: %v", s.str, err)
	}
	return &litNode{pos: t.pos, v: intVal(v)}, true, nil
}

// parseISODuration returns the microseconds of an ISO-8601 duration
// "P[nW][nD][T[nH][nM][n[.f]S]]".
func parseISODuration(s string) (int64, error) {
	if len(s) < 2 || s[0] != 'P' {
		return 0, strconv.ErrSyntax
	}
	const us = int64(1_000_000)
	var total float64
	inTime, seen := false, false
	num := ""
	for _, c := range s[1:] {
		switch {
		case c >= '0' && c <= '9' || c == '.':
			num += string(c)
			continue
		case c == 'T' && !inTime && num == "":
			inTime = true
			continue
		}
		if num == "" {
			return 0, strconv.ErrSyntax
		}
		n, err := strconv.ParseFloat(num, 64)
		if err != nil {
			return 0, err
		}
		num, seen = "", true
		var unit int64
		switch {
		case !inTime && c == 'W':
			unit = 7 * 86400 * us
		case !inTime && c == 'D':
			unit = 86400 * us
		case inTime && c == 'H':
			unit = 3600 * us
		case inTime && c == 'M':
			unit = 60 * us
		case inTime && c == 'S':
			unit = us
		default:
			return 0, errUnit(c)
		}
		total += n * float64(unit)
	}
	if num != "" || !seen {
		return 0, strconv.ErrSyntax
	}
	return int64(total), nil
}

type errUnit rune

func (e errUnit) Error() string {
	return "duration unit " + strconv.QuoteRune(rune(e)) + " is not supported (years and months have no fixed length)"
}
