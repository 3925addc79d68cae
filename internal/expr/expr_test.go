package expr

import (
	"strings"
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/strata-db/strata/internal/column"
	"github.com/stretchr/testify/require"
)

// rows builds an expected row list.
func rows(i ...int) []int {
	if i == nil {
		return []int{}
	}
	return i
}

func all() []int { return []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9} }

func except(x ...int) []int {
	out := []int{}
	for i := range 10 {
		skip := false
		for _, y := range x {
			skip = skip || y == i
		}
		if !skip {
			out = append(out, i)
		}
	}
	return out
}

type evalCase struct {
	expr string
	want []int
}

type errCase struct {
	expr string
	msg  string // substring of Msg
	pos  int
}

func runEval(t *testing.T, cases []evalCase, schema *schemapb.CollectionSchema, tmpl map[string]*schemapb.TemplateValue) {
	t.Helper()
	b := testBatch()
	for _, tc := range cases {
		t.Run(tc.expr, func(t *testing.T) {
			e, err := Compile(tc.expr, schema, tmpl)
			require.NoError(t, err)
			got, err := e.Eval(b)
			require.NoError(t, err)
			require.Len(t, got, b.Len())
			require.Equal(t, tc.want, matching(got), "canonical form: %s", e.String())
		})
	}
}

func runErr(t *testing.T, cases []errCase, schema *schemapb.CollectionSchema, tmpl map[string]*schemapb.TemplateValue) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.expr, func(t *testing.T) {
			_, err := Compile(tc.expr, schema, tmpl)
			require.Error(t, err)
			var e *Error
			require.ErrorAs(t, err, &e)
			require.Contains(t, err.Error(), tc.msg)
			require.Equal(t, tc.pos, e.Pos, "error: %v", err)
			require.Equal(t, tc.expr, e.Src)
			require.Contains(t, err.Error(), "position")
		})
	}
}

func TestEvalLiterals(t *testing.T) {
	runEval(t, []evalCase{
		{"", all()},
		{"   ", all()},
		{"id == 3", rows(3)},
		{"id == 0", rows(0)},
		{"id == 0x3", rows(3)},
		{"id == 0X3", rows(3)},
		{"id == 0xA - 1", rows(9)},
		{"id == 0o7", rows(7)},
		{"id == 0O7", rows(7)},
		{"id == 07", rows(7)},
		{"id == 010", rows(8)},
		{"id == 0b101", rows(5)},
		{"id == 0B11", rows(3)},
		{"id == 3.0", rows(3)},
		{"id < 2.5", rows(0, 1, 2)},
		{"id <= 2.5", rows(0, 1, 2)},
		{"id > 2.5", rows(3, 4, 5, 6, 7, 8, 9)},
		{"id >= 2.5", rows(3, 4, 5, 6, 7, 8, 9)},
		{"id == 2.5", rows()},
		{"id != 2.5", all()},
		{"id <= 1e0", rows(0, 1)},
		{"id >= 8E0", rows(8, 9)},
		{"id < .5e1", rows(0, 1, 2, 3, 4)},
		{"id > 1.e0", rows(2, 3, 4, 5, 6, 7, 8, 9)},
		{"id < 3e-1", rows(0)},
		{"id > 0x1p2", rows(5, 6, 7, 8, 9)},
		{"id > -1", all()},
		{"id >= -0x1", all()},
		{"id == -9223372036854775808", rows()},
		{"id > -9223372036854775808", all()},
		{"id < 9223372036854775807", all()},
		{"id < 1e300", all()},
		{"id > -1e300", all()},
		{"d == 0.25", rows(1)},
		{"d > 1", rows(5, 6, 7, 8, 9)},
		{"d >= 1", rows(4, 5, 6, 7, 8, 9)},
		{"f == 1.5", rows(1)},
		{"f > 2", rows(2, 3, 4, 5, 6, 7, 8, 9)},
		{"f < 1", rows(0)},
		{"b == true", rows(0, 2, 4, 6, 8)},
		{"b == True", rows(0, 2, 4, 6, 8)},
		{"b == TRUE", rows(0, 2, 4, 6, 8)},
		{"b == false", rows(1, 3, 5, 7, 9)},
		{"b == False", rows(1, 3, 5, 7, 9)},
		{"b == FALSE", rows(1, 3, 5, 7, 9)},
		{"b != true", rows(1, 3, 5, 7, 9)},
		{"b != false", rows(0, 2, 4, 6, 8)},
		{"true == b", rows(0, 2, 4, 6, 8)},
		{"b", rows(0, 2, 4, 6, 8)},
		{"not b", rows(1, 3, 5, 7, 9)},
		{"!b", rows(1, 3, 5, 7, 9)},
		{"NOT b", rows(1, 3, 5, 7, 9)},
		{`s == "apple"`, rows(0)},
		{`s == 'apple'`, rows(0)},
		{`s == "apple pie"`, rows(7)},
		{`s == ""`, rows(8)},
		{`s == ''`, rows(8)},
		{`s == "ab%c"`, rows(9)},
		{`s == "ab\x25c"`, rows(9)},
		{`s == "ab\045c"`, rows(9)},
		{`s == "\u0061pple"`, rows(0)},
		{`s == "\U00000061pple"`, rows(0)},
		{`s == 'a\u0070ple'`, rows(0)},
		{`s == "apple\tpie"`, rows()},
		{`s == "apple\u0020pie"`, rows(7)},
		{`s == r"ab%c"`, rows(9)},
		{`s == R'apple'`, rows(0)},
		{`s == r"ab\%c"`, rows()},
		{`s == "it\'s"`, rows()},
		{`s == 'say "hi"'`, rows()},
		{`s == "say \"hi\""`, rows()},
		{`s > "e"`, rows(4, 5, 6)},
		{`s < "b"`, rows(0, 7, 8, 9)},
		{`s >= "fig"`, rows(5, 6)},
		{`s <= ""`, rows(8)},
		{`s != "apple"`, except(0)},
		{"s == s", all()},
		{"true", all()},
		{"TRUE", all()},
		{"false", rows()},
		{"False", rows()},
		{"1 == 1", all()},
		{"1 < 0", rows()},
		{"1.5 > 1", all()},
		{`"a" < "b"`, all()},
		{"true != false", all()},
		{"(true)", all()},
		{"((id == 1))", rows(1)},
		{"id==1", rows(1)},
		{"id\t==\n1", rows(1)},
		{"id > 1e308 * 10 - 1e308 * 10", rows()},
		{"id != 1e308 * 10 - 1e308 * 10", all()},
		{"f < 1e308 * 10 - 1e308 * 10", rows()},
		{`meta["a"] > 1e308 * 10 - 1e308 * 10`, rows()},
		{`meta["a"] != 1e308 * 10 - 1e308 * 10`, all()},
		{"1e308 * 10 > 1e308 * 10 - 1e308 * 10", rows()},
		{"id < 1e308 * 10", all()},
	}, testSchema(true), nil)
}

func TestEvalComparisons(t *testing.T) {
	runEval(t, []evalCase{
		{"id < 3", rows(0, 1, 2)},
		{"id <= 3", rows(0, 1, 2, 3)},
		{"id > 7", rows(8, 9)},
		{"id >= 7", rows(7, 8, 9)},
		{"id != 3", except(3)},
		{"3 < id", rows(4, 5, 6, 7, 8, 9)},
		{"3 <= id", rows(3, 4, 5, 6, 7, 8, 9)},
		{"3 > id", rows(0, 1, 2)},
		{"3 >= id", rows(0, 1, 2, 3)},
		{"3 == id", rows(3)},
		{"3 != id", except(3)},
		{"5.5 > f", rows(0, 1, 2, 3, 4)},
		{"1 < id <= 5", rows(2, 3, 4, 5)},
		{"1 <= id < 3", rows(1, 2)},
		{"1 < id < 2", rows()},
		{"10 > id > 7", rows(8, 9)},
		{"10 >= id >= 9", rows(9)},
		{"5 >= id >= 5", rows(5)},
		{"0 < f < 3", rows(0, 1, 2)},
		{"-1 < i8 < 3", rows(2, 3, 4)},
		{`"b" < s < "d"`, rows(1, 2)},
		{"1 < id + 1 < 4", rows(1, 2)},
		{"id < i32", rows(2, 3, 4, 5, 6, 7, 8, 9)},
		{"id == i32", rows(0, 1)},
		{"i32 > id", rows(2, 3, 4, 5, 6, 7, 8, 9)},
		{"i32 <= id", rows(0, 1)},
		{"f > id", all()},
		{"d < f", all()},
		{"id != i32", rows(2, 3, 4, 5, 6, 7, 8, 9)},
		{"i16 >= i8", rows(4, 5, 6, 7, 8, 9)},
		{"b == b", all()},
		{"b != b", rows()},
		{"s < s", rows()},
		{"i8 > 1000", rows()},
		{"i8 < 1000", all()},
		{"i8 != 1000", all()},
		{"i8 == 1000", rows()},
		{"i8 == -129", rows()},
		{"i8 >= -128", all()},
		{"i8 <= 127", all()},
		{"i8 == 127", rows(8)},
		{"i8 == -128", rows(0)},
		{"i16 > 100000", rows()},
		{"i16 < -100000", rows()},
		{"i16 == 0", rows(3)},
		{"i16 > -1500", rows(2, 3, 4, 5, 6, 7, 8, 9)},
		{"i32 < -1e10", rows()},
		{"i32 > -1e10", all()},
		{"i32 > 3000000000", rows()},
		{"i32 == 49", rows(7)},
		{"f == 7.5", rows(7)},
		{"f >= 7.5", rows(7, 8, 9)},
		{"f in [7.5]", rows(7)},
	}, testSchema(true), nil)
}

func TestEvalMembership(t *testing.T) {
	runEval(t, []evalCase{
		{"id in [1, 3, 5]", rows(1, 3, 5)},
		{"id in [1,3,5,]", rows(1, 3, 5)},
		{"id in [5, 3, 1, 3]", rows(1, 3, 5)},
		{"id not in [1, 3, 5]", rows(0, 2, 4, 6, 7, 8, 9)},
		{"id in []", rows()},
		{"id in [ ]", rows()},
		{"id not in []", all()},
		{"id IN [2]", rows(2)},
		{"id NOT IN [2]", except(2)},
		{"not id in [2]", except(2)},
		{"id in [1.0, 2.5]", rows(1)},
		{"id in [-1, 100000000000]", rows()},
		{"id in [0x1, 0b10, 0o3]", rows(1, 2, 3)},
		{"id in [1 + 1, 2 * 3]", rows(2, 6)},
		{"id in [-9223372036854775808, 9223372036854775807, 4]", rows(4)},
		{`s in ["apple", "fig"]`, rows(0, 5)},
		{`s in ['apple', "nope"]`, rows(0)},
		{`s not in ["apple"]`, except(0)},
		{`s in [""]`, rows(8)},
		{"f in [1.5, 2.5]", rows(1, 2)},
		{"f in [1, 2]", rows()},
		{"d in [0, 1]", rows(0, 4)},
		{"d not in [0, 1]", except(0, 4)},
		{"b in [true]", rows(0, 2, 4, 6, 8)},
		{"b in [true, false]", all()},
		{"b not in [false]", rows(0, 2, 4, 6, 8)},
		{"i8 in [-128, 127, 1000]", rows(0, 8)},
		{"i8 in [300]", rows()},
		{"i16 in [-3000, 6000]", rows(0, 9)},
		{"i32 in [81, 64, 49]", rows(7, 8, 9)},
		{"id + 1 in [1, 2]", rows(0, 1)},
		{"3 in [1, 2, 3]", all()},
		{"3 in [1, 2]", rows()},
		{"n in [10, 20, 30]", rows(1, 3)},
		{"n not in [10]", rows(0, 3, 4, 6, 7, 9)},
	}, testSchema(true), nil)
}

func TestEvalLogic(t *testing.T) {
	runEval(t, []evalCase{
		{"id < 3 and b", rows(0, 2)},
		{"id < 3 AND b", rows(0, 2)},
		{"id < 3 && b", rows(0, 2)},
		{"id < 2 or id > 8", rows(0, 1, 9)},
		{"id < 2 OR id > 8", rows(0, 1, 9)},
		{"id < 2 || id > 8", rows(0, 1, 9)},
		{"id < 2 or id > 7 and b", rows(0, 1, 8)},
		{"id > 7 and b or id < 2", rows(0, 1, 8)},
		{"(id < 2 or id > 7) and b", rows(0, 8)},
		{"b and (id < 2 or id > 7)", rows(0, 8)},
		{"not id < 5 and b", rows(6, 8)},
		{"not (id < 5 and b)", rows(1, 3, 5, 6, 7, 8, 9)},
		{"not (id < 5) or b", rows(0, 2, 4, 5, 6, 7, 8, 9)},
		{"!(id == 1)", except(1)},
		{"! (id == 1)", except(1)},
		{"not not (id == 1)", rows(1)},
		{"!!b", rows(0, 2, 4, 6, 8)},
		{"id == 1 or id == 2 or id == 3", rows(1, 2, 3)},
		{"id == 1 and id == 2", rows()},
		{"id > 1 and id > 2 and id > 3 and id < 5", rows(4)},
		{"true and id == 1", rows(1)},
		{"id == 1 and true", rows(1)},
		{"false or id == 1", rows(1)},
		{"false and id == 1", rows()},
		{"true or id == 1", all()},
		{"id == 1 or true", all()},
		{"not true", rows()},
		{"not false", all()},
		{"1 < 2 and id == 4", rows(4)},
		{"b and not b", rows()},
		{"b or not b", all()},
		{"(((id == 2)) or ((id == 3)))", rows(2, 3)},
		{"not (id in [1,2]) and not (s like \"a%\")", rows(3, 4, 5, 6, 8)},
	}, testSchema(true), nil)
}

func TestEvalLike(t *testing.T) {
	runEval(t, []evalCase{
		{`s like "app%"`, rows(0, 7)},
		{`s LIKE "app%"`, rows(0, 7)},
		{`s like 'app%'`, rows(0, 7)},
		{`s like "%e"`, rows(0, 3, 6, 7)},
		{`s like "%an%"`, rows(1)},
		{`s like "%a%"`, rows(0, 1, 3, 6, 7, 9)},
		{`s like "apple"`, rows(0)},
		{`s like "_ig"`, rows(5)},
		{`s like "a%e"`, rows(0, 7)},
		{`s like "%"`, all()},
		{`s like "%%"`, all()},
		{`s like ""`, rows(8)},
		{`s like "ab\%c"`, rows(9)},
		{`s like "ab\\%c"`, rows(9)},
		{`s like "ab%c"`, rows(9)},
		{`s like "%\%%"`, rows(9)},
		{`s like "%pie"`, rows(7)},
		{`s like "____"`, rows(3, 9)},
		{`s like "_____"`, rows(0, 4, 6)},
		{`s like "a_p%"`, rows(0, 7)},
		{`s like "%p_e"`, rows(0, 7)},
		{`s like "b%a"`, rows(1)},
		{`s like "%.%"`, rows()},
		{`s like "(%"`, rows()},
		{`s not like "a%"`, rows(1, 2, 3, 4, 5, 6, 8)},
		{`not s like "a%"`, rows(1, 2, 3, 4, 5, 6, 8)},
		{`s like r"ab\%c"`, rows(9)},
		{`"abc" like "a%"`, all()},
		{`meta["s"] like "x%"`, rows(0, 2, 7)},
		{`meta["s"] like "%c"`, rows(3, 9)},
		{`meta["a"] like "3"`, rows(3)},
		{`name like "u%"`, rows(0, 1, 2, 3, 4, 5, 6, 7, 8)},
		{`$meta["color"] like "bl%"`, rows(5, 6, 7, 8)},
		{`as[0] like "a%"`, rows(0, 3, 6)},
	}, testSchema(true), nil)
}

func TestEvalArithmetic(t *testing.T) {
	runEval(t, []evalCase{
		{"id * 2 > 10", rows(6, 7, 8, 9)},
		{"id + 1 == 5", rows(4)},
		{"id - 1 < 0", rows(0)},
		{"id / 2 == 2", rows(4, 5)},
		{"id % 2 == 0", rows(0, 2, 4, 6, 8)},
		{"id % 3 == 1", rows(1, 4, 7)},
		{"id ** 2 == 16", rows(4)},
		{"2 ** id == 8", rows(3)},
		{"id * 1.5 > 6", rows(5, 6, 7, 8, 9)},
		{"f * 2 == 3", rows(1)},
		{"id * 2 == i32 - 3", rows(3)},
		{"-id < -7", rows(8, 9)},
		{"-id == 0", rows(0)},
		{"+id == 3", rows(3)},
		{"id - -1 == 2", rows(1)},
		{"(id + 1) * 2 == 6", rows(2)},
		{"id + 1 * 2 == 6", rows(4)},
		{"id * (2 + 1) == 9", rows(3)},
		{"2 ** 3 ** 2 == 512", all()},
		{"-2 ** 2 == -4", all()},
		{"10 - 2 - 3 == 5", all()},
		{"2 ** -1 == 0.5", all()},
		{"7 / 2 == 3", all()},
		{"7 % 3 == 1", all()},
		{"7.0 / 2 == 3.5", all()},
		{"id / 2.0 == 1.5", rows(3)},
		{"d * 4 == id", all()},
		{"i8 + 200 > 300", rows(8)},
		{"i8 * 2 == 254", rows(8)},
		{"i8 - 1 == -129", rows(0)},
		{"n + 1 > 0", rows(0, 1, 3, 4, 6, 7, 9)},
		{"n * 0 == 0", rows(0, 1, 3, 4, 6, 7, 9)},
		{"f % 2 == 1.5", rows(1, 3, 5, 7, 9)},
		{"(id & 4) == 4", rows(4, 5, 6, 7)},
		{"(id | 1) == 3", rows(2, 3)},
		{"(id ^ 1) == 0", rows(1)},
		{"(id << 2) == 12", rows(3)},
		{"(id >> 1) == 2", rows(4, 5)},
		{"(id << 64) == 0", all()},
		{"~id == -1", rows(0)},
		{"(id & 1) == 0", rows(0, 2, 4, 6, 8)},
		{"(id & 1) != 0 and id > 5", rows(7, 9)},
		{"(1 << 3) == 8", all()},
		{"id + 0.5 == f", all()},
		{"(id + 1) % 5 == 0", rows(4, 9)},
		{"array_length(ai) * 2 == 6", rows(0, 5)},
		{"ai[0] * 10 == 100", rows(5)},
	}, testSchema(true), nil)
}

func TestEvalNull(t *testing.T) {
	runEval(t, []evalCase{
		{"n is null", rows(2, 5, 8)},
		{"n IS NULL", rows(2, 5, 8)},
		{"n is not null", rows(0, 1, 3, 4, 6, 7, 9)},
		{"n IS NOT NULL", rows(0, 1, 3, 4, 6, 7, 9)},
		{"not (n is null)", rows(0, 1, 3, 4, 6, 7, 9)},
		{"n > 0", rows(1, 3, 4, 6, 7, 9)},
		{"n >= 0", rows(0, 1, 3, 4, 6, 7, 9)},
		{"n != 30", rows(0, 1, 4, 6, 7, 9)},
		{"n == 20", rows()},
		{"not (n > 20)", rows(0, 1)},
		{"n > 20 or id == 2", rows(2, 3, 4, 6, 7, 9)},
		{"n > 20 or id == 5", rows(3, 4, 5, 6, 7, 9)},
		{"not (n > 20 or id == 2)", rows(0, 1)},
		{"not (n > 20 and id == 2)", rows(0, 1, 3, 4, 5, 6, 7, 8, 9)},
		{"n > 20 and id > 0", rows(3, 4, 6, 7, 9)},
		{"not (n > 20 and id > 0)", rows(0, 1)},
		{"n in [0, 10]", rows(0, 1)},
		{"n == n", rows(0, 1, 3, 4, 6, 7, 9)},
		{"n == id * 10", rows(0, 1, 3, 4, 6, 7, 9)},
		{"n is null or n > 60", rows(2, 5, 7, 8, 9)},
		{"s is null", rows()},
		{"s is not null", all()},
		{"id is null", rows()},
		{"b is not null", all()},
		{"meta is null", rows()},
		{"meta is not null", all()},
		{`meta["a"] is null`, rows(4, 5, 8)},
		{`meta["a"] IS NOT NULL`, rows(0, 1, 2, 3, 6, 7, 9)},
		{"ai is null", rows()},
		{"ai is not null", all()},
		{"age is null", rows(9)},
		{"age is not null", rows(0, 1, 2, 3, 4, 5, 6, 7, 8)},
		{`$meta["tags"] is null`, rows(1, 3, 5, 7, 9)},
	}, testSchema(true), nil)
}

func TestEvalJSON(t *testing.T) {
	runEval(t, []evalCase{
		{`meta["a"] == 1`, rows(0)},
		{`meta["arr"] == [1, 2, 3]`, rows(0)},
		{`meta["arr"] == [1.0, 2, 3]`, rows(0)},
		{`meta["arr"] == [1, 2]`, rows()},
		{`meta["arr"] == [1, [1, 2]]`, rows(6)},
		{`meta["arr"] != [4, 5] and meta["a"] <= 2`, rows(0, 7)},
		{`meta["a"] > 1`, rows(1, 2, 6, 9)},
		{`meta["a"] == 3.5`, rows(2)},
		{`meta["a"] == 100`, rows(9)},
		{`meta["a"] >= 2`, rows(1, 2, 6, 9)},
		{`meta["a"] < 0`, rows(7)},
		{`meta["a"] <= -1.0`, rows(7)},
		{`meta["a"] == "3"`, rows(3)},
		{`meta["a"] != 1`, except(0)},
		{`not (meta["a"] == 1)`, except(0)},
		{`1 == meta["a"]`, rows(0)},
		{`1 < meta["a"]`, rows(1, 2, 6, 9)},
		{`meta["b"] == true`, rows(0)},
		{`meta["b"] == false`, rows(1)},
		{`meta["b"] == true`, rows(0)},
		{`not (meta["b"] == true)`, except(0)},
		{`meta["b"] != true`, except(0)},
		{`meta["s"] == "x"`, rows(0)},
		{`meta["s"] == 'x'`, rows(0)},
		{`meta["s"] == "x\"q"`, rows(7)},
		{`meta["s"] > "x"`, rows(1, 2, 7)},
		{`meta["s"] == "ab%c"`, rows(9)},
		{`meta['s'] == "y"`, rows(1)},
		{`meta["o"]["k"] == "v"`, rows(0)},
		{`meta["o"]["n"] > 5`, rows(1, 6)},
		{`meta["arr"][0] == 1`, rows(0, 6)},
		{`meta["arr"][1] == "b"`, rows(2)},
		{`meta["arr"][1][0] == 1`, rows(6)},
		{`meta[0] == 1`, rows(8)},
		{`meta[2] == 3`, rows(8)},
		{`meta["arr"][5] == 1`, rows()},
		{`meta["a"] in [1, "3"]`, rows(0, 3)},
		{`meta["a"] in [2, 3.5, 100]`, rows(1, 2, 9)},
		{`meta["a"] in [true, "zz"]`, rows()},
		{`meta["a"] not in [1]`, except(0)},
		{`meta["arr"] in [[4, 5]]`, rows(1)},
		{`meta["b"] in [false]`, rows(1)},
		{`meta["missing"] == 1`, rows()},
		{`meta["missing"]["deeper"] == 1`, rows()},
		{`meta["a"]["x"] == 1`, rows()},
		{`meta["a"] + 1 == 3`, rows(1)},
		{`meta["a"] * 2 > 10`, rows(6, 9)},
		{`meta["a"] % 2 == 0`, rows(1, 6, 9)},
		{`-meta["a"] == 1`, rows(7)},
		{`meta["a"] > 1 and meta["a"] < 5`, rows(1, 2)},
		{`1 < meta["a"] < 5`, rows(1, 2)},
		{`meta["a"] == true`, rows()},
		{`$meta == 1`, rows()},
		{`age > 50`, rows(6, 7, 8)},
		{`age == 0`, rows(0)},
		{`age >= 0`, rows(0, 1, 2, 3, 4, 5, 6, 7, 8)},
		{`age != 0`, rows(1, 2, 3, 4, 5, 6, 7, 8, 9)},
		{`$meta["age"] > 50`, rows(6, 7, 8)},
		{`$meta['age'] < 20`, rows(0, 1)},
		{`name == "u3"`, rows(3)},
		{`name in ["u3", "u4", "u99"]`, rows(3, 4)},
		{`color == "red" and age > 10`, rows(2, 3, 4)},
		{`age in [10, 20]`, rows(1, 2)},
		{`age % 20 == 0`, rows(0, 2, 4, 6, 8)},
		{`age / 10 == id`, rows(0, 1, 2, 3, 4, 5, 6, 7, 8)},
		{`tags[0] == "t1"`, rows(0, 2, 4, 6, 8)},
		{`tags[1] == "t2"`, rows(0, 2, 4, 6, 8)},
		{`exists age`, rows(0, 1, 2, 3, 4, 5, 6, 7, 8)},
		{`EXISTS name`, rows(0, 1, 2, 3, 4, 5, 6, 7, 8)},
		{`exists $meta["tags"]`, rows(0, 2, 4, 6, 8)},
		{`exists(meta["b"])`, rows(0, 1)},
		{`exists meta["a"]`, rows(0, 1, 2, 3, 4, 6, 7, 9)},
		{`exists meta["o"]["k"]`, rows(0, 1)},
		{`exists meta["arr"][1]`, rows(0, 1, 2, 6)},
		{`not exists age`, rows(9)},
		{`exists age and age > 60`, rows(7, 8)},
	}, testSchema(true), nil)
}

func TestEvalArrays(t *testing.T) {
	runEval(t, []evalCase{
		{"array_contains(ai, 1)", rows(0, 3, 7)},
		{"ai == [1, 2, 3]", rows(0)},
		{"ai != [1, 2, 3]", rows(1, 2, 3, 4, 5, 6, 7, 8, 9)},
		{"[2, 2] == ai", rows(4)},
		{"ai == []", rows(2)},
		{"ai == [1.5]", rows()},
		{"ai == [2.0, 2]", rows(4)},
		{"ARRAY_CONTAINS(ai, 2)", rows(0, 4, 7)},
		{"array_contains(ai, 2.0)", rows(0, 4, 7)},
		{"array_contains(ai, 1.5)", rows()},
		{"array_contains(ai, -0)", rows(9)},
		{"array_contains_all(ai, [1, 2])", rows(0, 7)},
		{"ARRAY_CONTAINS_ALL(ai, [1, 2, 3, 4])", rows(7)},
		{"array_contains_all(ai, [1, 2.5])", rows()},
		{"array_contains_any(ai, [4, 7])", rows(1, 7, 8)},
		{"array_contains_any(ai, [4.0, 7.5])", rows(1, 7)},
		{"array_contains_all(ai, [])", all()},
		{"array_contains_any(ai, [])", rows()},
		{"not array_contains(ai, 1)", rows(1, 2, 4, 5, 6, 8, 9)},
		{`array_contains(as, "a")`, rows(0, 3, 6)},
		{`array_contains_any(as, ["z", "x"])`, rows(5, 8)},
		{`array_contains_all(as, ["a", "c"])`, rows(6)},
		{`array_contains(af, 1.1)`, rows(0, 2)},
		{`array_contains(af, 2.5)`, rows(2)},
		{`array_contains(af, 0)`, rows(9)},
		{"array_length(ai) == 0", rows(2)},
		{"array_length(ai) > 2", rows(0, 5, 7)},
		{"ARRAY_LENGTH(ai) >= 3", rows(0, 5, 7)},
		{"array_length(as) == 1", rows(1, 3, 5, 8, 9)},
		{"array_length(ai) == array_length(as)", rows(1, 2, 4, 8, 9)},
		{"ai[0] == 1", rows(0, 3, 7)},
		{"ai[1] > 2", rows(3, 5)},
		{"ai[3] == 4", rows(7)},
		{"ai[0] != 1", rows(1, 4, 5, 6, 8, 9)},
		{`as[0] == "a"`, rows(0, 3, 6)},
		{`as[1] in ["b", "c"]`, rows(0, 4, 6)},
		{"ai[0] + 1 == 2", rows(0, 3, 7)},
		{"af[0] == 1.1", rows(0)},
		{`array_length(meta["arr"]) == 2`, rows(1, 2, 6)},
		{`array_length(meta) == 3`, rows(8)},
		{`array_length(tags) == 2`, rows(0, 2, 4, 6, 8)},
		{`json_contains(meta["arr"], 1)`, rows(0, 6)},
		{`JSON_CONTAINS(meta["arr"], 1)`, rows(0, 6)},
		{`json_contains(meta["arr"], [1, 2])`, rows(6)},
		{`json_contains_all(meta["arr"], [1, 2])`, rows(0)},
		{`json_contains_any(meta["arr"], [5, "b"])`, rows(1, 2)},
		{`json_contains_all(meta["arr"], [])`, rows(0, 1, 2, 6)},
		{`json_contains_any(meta["arr"], [])`, rows()},
		{`array_contains(meta["arr"], "a")`, rows(2)},
		{`array_contains_any(meta["arr"], [4.0])`, rows(1)},
		{`json_contains(meta, 2)`, rows(8)},
		{`array_contains(tags, "t2")`, rows(0, 2, 4, 6, 8)},
		{`json_contains(tags, "t1")`, rows(0, 2, 4, 6, 8)},
		{`json_contains(meta["s"], "x")`, rows()},
	}, testSchema(true), nil)
}

func tmplVals() map[string]*schemapb.TemplateValue {
	long := func(v ...int64) *schemapb.TemplateValue {
		return &schemapb.TemplateValue{Val: &schemapb.TemplateValue_ArrayVal{ArrayVal: &schemapb.TemplateArrayValue{
			Data: &schemapb.TemplateArrayValue_LongData{LongData: &schemapb.LongArray{Data: v}},
		}}}
	}
	return map[string]*schemapb.TemplateValue{
		"x":    {Val: &schemapb.TemplateValue_Int64Val{Int64Val: 3}},
		"lo":   {Val: &schemapb.TemplateValue_Int64Val{Int64Val: 2}},
		"hi":   {Val: &schemapb.TemplateValue_Int64Val{Int64Val: 5}},
		"v":    {Val: &schemapb.TemplateValue_FloatVal{FloatVal: 8.0}},
		"t":    {Val: &schemapb.TemplateValue_BoolVal{BoolVal: true}},
		"name": {Val: &schemapb.TemplateValue_StringVal{StringVal: "fig"}},
		"p":    {Val: &schemapb.TemplateValue_StringVal{StringVal: "app%"}},
		"ids":  long(1, 2),
		"xs":   long(4, 7),
		"none": long(),
		"names": {Val: &schemapb.TemplateValue_ArrayVal{ArrayVal: &schemapb.TemplateArrayValue{
			Data: &schemapb.TemplateArrayValue_StringData{StringData: &schemapb.StringArray{Data: []string{"apple", "date"}}},
		}}},
		"dbl": {Val: &schemapb.TemplateValue_ArrayVal{ArrayVal: &schemapb.TemplateArrayValue{
			Data: &schemapb.TemplateArrayValue_DoubleData{DoubleData: &schemapb.DoubleArray{Data: []float64{1.0, 2.0}}},
		}}},
		"bls": {Val: &schemapb.TemplateValue_ArrayVal{ArrayVal: &schemapb.TemplateArrayValue{
			Data: &schemapb.TemplateArrayValue_BoolData{BoolData: &schemapb.BoolArray{Data: []bool{false}}},
		}}},
		"js": {Val: &schemapb.TemplateValue_ArrayVal{ArrayVal: &schemapb.TemplateArrayValue{
			Data: &schemapb.TemplateArrayValue_JsonData{JsonData: &schemapb.JSONArray{Data: [][]byte{[]byte(`1`), []byte(`"3"`)}}},
		}}},
		"nested": {Val: &schemapb.TemplateValue_ArrayVal{ArrayVal: &schemapb.TemplateArrayValue{
			Data: &schemapb.TemplateArrayValue_ArrayData{ArrayData: &schemapb.TemplateArrayValueArray{Data: []*schemapb.TemplateArrayValue{
				{Data: &schemapb.TemplateArrayValue_LongData{LongData: &schemapb.LongArray{Data: []int64{1, 2}}}},
			}}},
		}}},
		"empty": {},
	}
}

func TestEvalTemplates(t *testing.T) {
	runEval(t, []evalCase{
		{"id == {x}", rows(3)},
		{"{x} == id", rows(3)},
		{"id in {ids}", rows(1, 2)},
		{"id not in {ids}", except(1, 2)},
		{"id in {none}", rows()},
		{"s == {name}", rows(5)},
		{"f > {v}", rows(8, 9)},
		{"b == {t}", rows(0, 2, 4, 6, 8)},
		{"{t}", all()},
		{"b in {bls}", rows(1, 3, 5, 7, 9)},
		{"s in {names}", rows(0, 3)},
		{"{lo} < id < {hi}", rows(3, 4)},
		{"{ lo } <= id", rows(2, 3, 4, 5, 6, 7, 8, 9)},
		{"id * {lo} == {x} + 1", rows(2)},
		{"array_contains_any(ai, {xs})", rows(1, 7, 8)},
		{"array_contains(ai, {x})", rows(0, 6, 7)},
		{"s like {p}", rows(0, 7)},
		{`meta["a"] in {js}`, rows(0, 3)},
		{`meta["a"] == {x}`, rows()},
		{"id in {dbl}", rows(1, 2)},
		{`json_contains(meta["arr"], [1, 2])`, rows(6)},
		{`json_contains_any(meta["arr"], {nested})`, rows(6)},
		{"age == {x} * 10", rows(3)},
	}, testSchema(true), tmplVals())
}

func TestCompileErrors(t *testing.T) {
	runErr(t, []errCase{
		// syntax
		{"id ==", "unexpected end of expression", 5},
		{"id == 1 and", "unexpected end of expression", 11},
		{"(id == 1", "expected ')'", 8},
		{"id == 1)", `unexpected ")"`, 7},
		{"id = 1", "use == for equality", 3},
		{`id == "abc`, "unterminated string", 6},
		{"id == 'abc\n'", "unterminated string", 6},
		{"id == 1 2", `unexpected "2"`, 8},
		{"id == 0x", "malformed number", 6},
		{"id == 09", "malformed number", 6},
		{"id == 0b102", "malformed number", 6},
		{"id == 1a", "malformed number", 6},
		{"id == 1.2.3", "malformed number", 6},
		{"id == 99999999999999999999", "out of range", 6},
		{"id == -9223372036854775809", "out of range", 7},
		{`s == "\u12"`, "invalid unicode escape", 6},
		{`s == "\xZZ"`, "invalid hex escape", 6},
		{"id == 1 and or id == 2", `unexpected "or"`, 12},
		{"id in [1, 2", "expected ']'", 11},
		{"id in [1 2]", "expected ']'", 9},
		{"@", "unexpected character", 0},
		{"id == 1 =~ \"a\"", "regular expression", 8},
		{"id == $x", "unexpected character '$'", 6},
		{"{x", "expected '}'", 2},
		{"{}", "expected identifier", 1},
		{"id ==== 1", `unexpected "=="`, 5},
		{"1 < id > 0", "same direction", 7},
		{"1 < id < 5 < 7", "at most two", 11},
		{"10 >= id <= 1", "same direction", 9},
		{"id not 5", "expected 'in' or 'like' after 'not'", 3},
		{"id is 5", "expected 'null'", 6},
		{"5[0] == 1", "only a field can be indexed", 1},
		{`meta[-1] == 1`, "expected a string key or an integer index", 5},
		{`meta[x] == 1`, "expected a string key", 5},
		{strings.Repeat("(", 300) + "id == 1" + strings.Repeat(")", 300), "nested too deeply", 256},
		{strings.Repeat("not ", 300) + "b", "nested too deeply", 1024},
		{"id == 1 and", "unexpected end", 11},
		// names and types
		{"vec > 1", "vector field", 0},
		{"vec is null", "error: IsNull/IsNotNull operations are not supported on vector fields", 0},
		{"vec is not null", "error: IsNull/IsNotNull operations are not supported on vector fields", 0},
		{"id > 1 and nope[0] > vec", "vector field", 21},
		{"[1, 2]", "expected a boolean expression, got list [1, 2]", 0},
		{"id", "expected a boolean expression, got Int64 field id", 0},
		{"s", "got VarChar field s", 0},
		{"id + 1", "expected a boolean expression", 3},
		{"5", "got integer 5", 0},
		{`"x"`, "got string", 0},
		{"ai", "got Array field ai", 0},
		{"s > 1", "(VarChar field s with integer 1", 2},
		{"1 < s", "(VarChar field s with integer 1", 2},
		{`id == "1"`, `(Int64 field id with string "1"`, 3},
		{`f == "x"`, "(Float field f", 2},
		{`b == "true"`, `(Bool field b with string "true"`, 2},
		{"b == 1", "(Bool field b with integer 1", 2},
		{"b > true", "operator > is not supported on Bool field b", 2},
		{"b < b", "operator < is not supported", 2},
		{"s == id", "(VarChar field s with Int64 field id", 2},
		{"b == id", "(Bool field b with Int64 field id", 2},
		{`1 == "a"`, "cannot compare integer with string", 2},
		{"true > false", "cannot compare bool with bool using >", 5},
		{"1 < s < 3", "(VarChar field s", 2},
		{"1 < id < s", "(Int64 field id with VarChar field s", 7},
		{"not id", "'not' needs a boolean operand", 0},
		{"id == 1 and 5", "expected a boolean expression, got integer 5", 12},
		{"5 or id == 1", "got integer 5", 0},
		{"(id > 1) == true", "cannot compare a boolean expression", 9},
		{"(id > 1) > (id < 3)", "cannot compare a boolean expression", 9},
		// membership
		{"s in [1, 2]", "list element integer 1 does not match VarChar field s", 5},
		{`id in ["a"]`, `list element string "a" does not match Int64 field id`, 6},
		{"b in [1]", "does not match Bool field b", 5},
		{`f in ["a"]`, "does not match Float field f", 5},
		{"id in 5", "'in' expects a list", 6},
		{"id in [x]", "list elements must be constants", 7},
		{"id in [id]", "list elements must be constants", 7},
		{"ai in [1]", "'in' is not supported on Array field ai", 3},
		{"(id > 1) in [true]", "'in' is not supported on boolean expression", 9},
		// like
		{`id like "1%"`, "unsupported [position=3] (got Int64 field id", 3},
		{`f like "1%"`, "like operation on non-string or no-json field is unsupported", 2},
		{"s like 5", "like needs a string pattern, got integer 5", 7},
		{"s like s", "like needs a string pattern", 7},
		{`ai like "a%"`, "like operation on non-string", 3},
		// arithmetic
		{"s + 1 == 2", "arithmetic operator + is not supported on VarChar field s", 2},
		{"1 + s == 2", "arithmetic operator + is not supported on VarChar field s", 2},
		{"b * 2 == 2", "not supported on Bool field b", 2},
		{`"a" + 1 == 2`, "not supported on string", 4},
		{"ai + 1 == 2", "not supported on Array field ai", 3},
		{"(f & 1) == 1", "bitwise operator & needs integer operands, got Float field f", 3},
		{"(1 | f) == 1", "bitwise operator | needs integer operands, got Float field f", 3},
		{"(1.5 ^ 1) == 1", "bitwise operator ^ needs integer operands, got float 1.5", 5},
		{"~f == 1", "bitwise ~ needs an integer", 0},
		{"~1.5 == 1", "bitwise ~ needs an integer", 0},
		{`-"a" == 1`, "unary - needs a number", 0},
		{`(meta["a"] & 1) == 1`, "bitwise operator & needs integer operands", 11},
		{"id & 4 == 4", "arithmetic operator & is not supported on boolean expression", 3},
		{"id / 0 == 1", "division by zero", 3},
		{"id % 0 > 1", "division by zero", 3},
		{"f / 0.0 > 1", "division by zero", 2},
		{"id / (1 - 1) == 1", "division by zero", 3},
		{"1 / 0 == 1", "division by zero", 2},
		{"1.0 % 0 == 1", "division by zero", 4},
		{"(id << -1) == 0", "negative shift count", 4},
		{"(1 >> -1) == 0", "negative shift count", 3},
		// null / exists
		{"id + 1 is null", "is null applies to a field", 7},
		{"5 is null", "is null applies to a field", 2},
		{"exists id", "exists needs a JSON path", 0},
		{"exists meta", "exists needs a JSON path", 0},
		{"exists ai", "exists needs a JSON path", 0},
		// functions and arrays
		{"array_contains(id, 1)", "array_contains needs an Array field or a JSON path, got Int64 field id", 15},
		{`array_contains(ai, "a")`, `string "a" does not match the element type Int64 of Array field ai`, 19},
		{`array_contains_any(as, [1])`, "does not match the element type VarChar", 23},
		{"array_contains_all(ai, 1)", "array_contains_all expects a list", 23},
		{"array_contains_any(ai, id)", "needs a constant second argument", 23},
		{"array_contains(ai)", "takes 2 argument(s), got 1", 0},
		{"array_contains(ai, 1, 2)", "takes 2 argument(s), got 3", 0},
		{"array_length(ai, 1) == 1", "takes 1 argument(s)", 0},
		{"array_length(id) == 1", "array_length needs an Array field or a JSON path", 13},
		{"ai == 1", "cannot compare Array field ai with integer 1: use array_contains", 3},
		{"ai == ai", "cannot compare Array field ai", 3},
		{"ai > id", "cannot compare Array field ai", 3},
		{"foo(id) == 1", "unknown function foo", 0},
		{"Array_Contains(ai, 1)", "unknown function Array_Contains", 0},
		{`text_match(s, "a")`, `field "s" does not enable match`, 11},
		{`TEXT_MATCH(s, "a")`, `field "s" does not enable match`, 11},
		{"random_sample(0.1)", "not supported", 0},
		{"array_length(ai)", "expected a boolean expression, got integer expression array_length(ai)", 0},
		{`ai["k"] == 1`, "Array field ai can only be indexed by one integer", 3},
		{`ai[0][1] == 1`, "Array field ai can only be indexed by one integer", 3},
		{"id[0] == 1", "field id of type Int64 cannot be indexed", 3},
		{`s["k"] == "a"`, "cannot be indexed", 2},
		// JSON
		{`meta["a"] > true`, "operator > is not supported on bool true", 10},
		{`meta["a"] > [1]`, `(JSON meta["a"] with list [1]`, 10},
		{`meta["a"] == s`, `(JSON meta["a"] with VarChar field s`, 10},
		{`s != meta["a"]`, "(VarChar field s with JSON", 2},
		{`meta["a"] == b`, "two column comparison with JSON type is not supported", 10},
		{`meta["b"]`, "JSON", 0},
		{`meta["a"] > id`, "two column comparison with JSON type is not supported", 10},
		{`meta["a"] == meta["o"]["n"]`, "two column comparison with JSON type is not supported", 10},
		{"id + i32 == 2", "one operand must be a constant", 3},
		{"id * id == i32", "one operand must be a constant", 3},
		{"ai[1] is null", "IsNull/IsNotNull operations are not supported on array element access", 6},
		{`meta["a"] like 1`, "like needs a string pattern", 15},
		{`meta["a"] in 1`, "'in' expects a list", 13},
	}, testSchema(true), nil)
}

func TestCompileErrorsNoDynamic(t *testing.T) {
	runErr(t, []errCase{
		{"x > 1", "field x not exist", 0},
		{"id > 1 and age < 5", "field age not exist", 11},
		{`age["k"] == 1`, "field age not exist", 0},
		{`$meta["a"] == 1`, "no dynamic field", 0},
		{"exists age", "field age not exist", 7},
	}, testSchema(false), nil)
}

func TestCompileErrorsTemplates(t *testing.T) {
	runErr(t, []errCase{
		{"id == {missing}", "template variable {missing} has no value", 6},
		{"s == {x}", "(VarChar field s with integer 3", 2},
		{"id in {x}", "'in' expects a list such as [1, 2], got integer 3", 6},
		{"id in {names}", `list element string "apple" does not match Int64 field id`, 6},
		{"s like {x}", "like needs a string pattern, got integer 3", 7},
		{"array_contains_any(ai, {names})", "does not match the element type Int64", 23},
		{"id == {empty}", "unsupported value", 6},
		{"b == {name}", "(Bool field b", 2},
		{"id == {ids}", "(Int64 field id with list [1, 2]", 3},
	}, testSchema(true), tmplVals())
	runErr(t, []errCase{
		{"id == {x}", "template variable {x} has no value", 6},
	}, testSchema(true), nil)
}

func TestErrorString(t *testing.T) {
	_, err := Compile("s > 1", testSchema(true), nil)
	require.EqualError(t, err, "cannot parse expression: s > 1, error: comparisons between VarChar and Int64 are not supported [position=2] (VarChar field s with integer 1)")
}

func TestString(t *testing.T) {
	cases := []struct{ src, want string }{
		{"", ""},
		{"id > 5", "id > 5"},
		{"5 < id", "id > 5"},
		{"id>5", "id > 5"},
		{"1 < id <= 5", "(id > 1 and id <= 5)"},
		{"id in [1,2]", "id in [1, 2]"},
		{"id not in [1,2]", "not (id in [1, 2])"},
		{"id == 1 or id == 2 and b", "(id == 1 or (id == 2 and b))"},
		{"a1 == 1 and (a2 == 2 and a3 == 3)", `($meta["a1"] == 1 and $meta["a2"] == 2 and $meta["a3"] == 3)`},
		{"not (id == 1)", "not (id == 1)"},
		{"age > 1", `$meta["age"] > 1`},
		{`$meta["age"] > 1`, `$meta["age"] > 1`},
		{`meta["a"][0] == "x"`, `meta["a"][0] == "x"`},
		{"s like 'a%'", `s like "a%"`},
		{"id * 2 > 10", "(id * 2) > 10"},
		{"f > 1", "f > 1.0"},
		{"d > 1.5e3", "d > 1500.0"},
		{"1 + 2 * 3 == id", "id == 7"},
		{"n is not null", "n is not null"},
		{"exists age", `exists $meta["age"]`},
		{"array_contains_any(ai, [1, 2])", "array_contains_any(ai, [1, 2])"},
		{"json_contains(meta, 1)", "json_contains(meta, 1)"},
		{"array_length(ai) == 2", "array_length(ai) == 2"},
		{"ai[0] == 1", "ai[0] == 1"},
		{"-id == 1", "-id == 1"},
		{"true and id == 1", "id == 1"},
		{"b", "b"},
	}
	for _, tc := range cases {
		t.Run(tc.src, func(t *testing.T) {
			e, err := Compile(tc.src, testSchema(true), nil)
			require.NoError(t, err)
			require.Equal(t, tc.want, e.String())
			require.Equal(t, tc.src, e.Source())
		})
	}
}

func TestFields(t *testing.T) {
	cases := []struct {
		src  string
		want []int64
	}{
		{"", nil},
		{"true", nil},
		{"id > 1", []int64{fID}},
		{`id > 1 and s like "a%" or age > 1`, []int64{fID, fS, fDyn}},
		{"i32 + 1 > f and i8 < 3", []int64{fI8, fI32, fF}},
		{`array_contains(ai, 1) or meta["a"] == 1 or n is null`, []int64{fMeta, fAI, fN}},
		{"array_length(as) == 1", []int64{fAS}},
	}
	for _, tc := range cases {
		t.Run(tc.src, func(t *testing.T) {
			e, err := Compile(tc.src, testSchema(true), nil)
			require.NoError(t, err)
			require.Equal(t, tc.want, e.Fields())
		})
	}
}

func varcharPKSchema() *schemapb.CollectionSchema {
	return &schemapb.CollectionSchema{Fields: []*schemapb.FieldSchema{
		{FieldID: 1, Name: "pk", DataType: schemapb.DataType_VarChar, IsPrimaryKey: true},
		{FieldID: 2, Name: "x", DataType: schemapb.DataType_Int64},
	}}
}

func TestPKValues(t *testing.T) {
	ints := []struct {
		src  string
		want []int64
		ok   bool
	}{
		{"id in [1, 2, 3]", []int64{1, 2, 3}, true},
		{"id in [3, 1, 3]", []int64{3, 1}, true},
		{"id == 5", []int64{5}, true},
		{"5 == id", []int64{5}, true},
		{"id == 1 or id in [2, 1]", []int64{1, 2}, true},
		{"id == 1 or id == 2 or id == 3", []int64{1, 2, 3}, true},
		{"(id == 1) or (id == 2)", []int64{1, 2}, true},
		{"id in []", []int64{}, true},
		{"id in {ids}", []int64{1, 2}, true},
		{"id in [1.0, 2.5]", []int64{1}, true},
		{"id > 5", nil, false},
		{"id == 1 and b", nil, false},
		{"id == 1 or s == \"a\"", nil, false},
		{"not id in [1]", nil, false},
		{"id != 1", nil, false},
		{"i32 in [1]", nil, false},
		{"", nil, false},
		{"true", nil, false},
	}
	for _, tc := range ints {
		t.Run(tc.src, func(t *testing.T) {
			e, err := Compile(tc.src, testSchema(true), tmplVals())
			require.NoError(t, err)
			col, ok := e.PKValues()
			require.Equal(t, tc.ok, ok)
			if !ok {
				return
			}
			require.Equal(t, schemapb.DataType_Int64, col.Type())
			require.Equal(t, tc.want, col.(*column.Ints).Data)
		})
	}
	strsCases := []struct {
		src  string
		want []string
		ok   bool
	}{
		{`pk in ["a", 'b']`, []string{"a", "b"}, true},
		{`pk == "a" or pk == "b" or pk in ["a"]`, []string{"a", "b"}, true},
		{`pk in []`, []string{}, true},
		{`pk > "a"`, nil, false},
		{`pk == "a" or x == 1`, nil, false},
	}
	for _, tc := range strsCases {
		t.Run(tc.src, func(t *testing.T) {
			e, err := Compile(tc.src, varcharPKSchema(), nil)
			require.NoError(t, err)
			col, ok := e.PKValues()
			require.Equal(t, tc.ok, ok)
			if !ok {
				return
			}
			require.Equal(t, schemapb.DataType_VarChar, col.Type())
			require.Equal(t, tc.want, col.(*column.Strings).Data)
		})
	}
}

func TestMatchesAll(t *testing.T) {
	for src, want := range map[string]bool{"": true, "true": true, "1 < 2": true, "id > 1": false, "false": false} {
		t.Run(src, func(t *testing.T) {
			e, err := Compile(src, testSchema(true), nil)
			require.NoError(t, err)
			require.Equal(t, want, e.MatchesAll())
		})
	}
}

func TestEvalBatchErrors(t *testing.T) {
	cases := []struct {
		src  string
		drop int64
		msg  string
	}{
		{"id > 1", fID, "no column for field id"},
		{`meta["a"] == 1`, fMeta, "no column for field meta"},
		{"age > 1", fDyn, "no column for field $meta"},
		{"array_contains(ai, 1)", fAI, "no column for field ai"},
	}
	for _, tc := range cases {
		t.Run(tc.src, func(t *testing.T) {
			e, err := Compile(tc.src, testSchema(true), nil)
			require.NoError(t, err)
			b := testBatch()
			delete(b.cols, tc.drop)
			_, err = e.Eval(b)
			require.ErrorContains(t, err, tc.msg)
		})
	}
	t.Run("wrong column type", func(t *testing.T) {
		e, err := Compile("id > 1", testSchema(true), nil)
		require.NoError(t, err)
		b := testBatch()
		b.cols[fID] = b.cols[fS]
		_, err = e.Eval(b)
		require.ErrorContains(t, err, "want *column.Ints")
	})
	t.Run("wrong length", func(t *testing.T) {
		e, err := Compile("id > 1", testSchema(true), nil)
		require.NoError(t, err)
		b := testBatch()
		b.n = 5
		_, err = e.Eval(b)
		require.ErrorContains(t, err, "has 10 rows, batch has 5")
	})
}

func TestIntSet(t *testing.T) {
	cases := []struct {
		name string
		vals []int64
	}{
		{"empty", nil},
		{"dense", []int64{1, 5, 64, 65, 1000}},
		{"negative dense", []int64{-70, -1, 0, 3}},
		{"sparse", []int64{-1 << 63, 1<<63 - 1, 0, 7, 1 << 40, -12345678901}},
		{"sparse many", func() []int64 {
			var v []int64
			for i := range 300 {
				v = append(v, int64(i)*1_000_003-50_000_000)
			}
			return v
		}()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newIntSet(tc.vals)
			in := map[int64]bool{}
			for _, v := range tc.vals {
				in[v] = true
				require.True(t, s.has(v), "value %d", v)
			}
			for _, probe := range []int64{-1 << 63, -1, 0, 1, 2, 63, 66, 999, 1001, 1<<63 - 1, 1 << 40, 1<<40 + 1, -50_000_000 + 1} {
				require.Equal(t, in[probe], s.has(probe), "probe %d", probe)
			}
		})
	}
}

func TestLikeMatcher(t *testing.T) {
	cases := []struct {
		pat  string
		kind likeKind
		yes  []string
		no   []string
	}{
		{"abc", likeExact, []string{"abc"}, []string{"abcd", "ab", ""}},
		{"ab%", likePrefix, []string{"ab", "abc"}, []string{"a", "xab"}},
		{"%ab", likeSuffix, []string{"ab", "xab"}, []string{"abx"}},
		{"%ab%", likeInfix, []string{"ab", "xaby"}, []string{"a b"}},
		{"%", likePrefix, []string{"", "x"}, nil},
		{"a_c", likeRegexp, []string{"abc", "a c", "aéc"}, []string{"ac", "abbc"}},
		{"a%b%c", likeRegexp, []string{"abc", "a1b2c", "abbc"}, []string{"acb", "ab"}},
		{`a\%`, likeExact, []string{"a%"}, []string{"ab"}},
		{`a\_%`, likePrefix, []string{"a_", "a_b"}, []string{"ab"}},
		{`100\%%`, likePrefix, []string{"100%", "100% sure"}, []string{"100"}},
		{`a\\%`, likePrefix, []string{`a\`, `a\b`}, []string{"ab"}},
		{"a.*", likeExact, []string{"a.*"}, []string{"ab"}},
		{"%.%", likeInfix, []string{"a.b"}, []string{"ab"}},
		{"_", likeRegexp, []string{"x", "é"}, []string{"", "xy"}},
		{"%\n%", likeInfix, []string{"a\nb"}, []string{"ab"}},
		{"a%\n", likeRegexp, []string{"ab\n", "a\n"}, []string{"ab"}},
	}
	for _, tc := range cases {
		t.Run(tc.pat, func(t *testing.T) {
			m, err := newMatcher(tc.pat)
			require.NoError(t, err)
			require.Equal(t, tc.kind, m.kind)
			out := make([]bool, len(tc.yes)+len(tc.no))
			m.matchAll(append(append([]string{}, tc.yes...), tc.no...), out)
			for i, s := range tc.yes {
				require.True(t, m.match(s), s)
				require.True(t, out[i], s)
			}
			for i, s := range tc.no {
				require.False(t, m.match(s), s)
				require.False(t, out[len(tc.yes)+i], s)
			}
		})
	}
}

func TestJSONLookup(t *testing.T) {
	doc := []byte(` {"a": {"b": [10, {"c": "x\"y"}, [1, 2]]}, "k\u00e9": 1, "e": "", "n": null, "s": "}]"} `)
	key := func(k string) pathStep { return pathStep{key: k, isKey: true} }
	idx := func(i int64) pathStep { return pathStep{index: i} }
	cases := []struct {
		name string
		path []pathStep
		want string
		ok   bool
	}{
		{"root", nil, string(doc[1 : len(doc)-1]), true},
		{"nested index", []pathStep{key("a"), key("b"), idx(0)}, "10", true},
		{"escaped value", []pathStep{key("a"), key("b"), idx(1), key("c")}, `"x\"y"`, true},
		{"inner array", []pathStep{key("a"), key("b"), idx(2)}, "[1, 2]", true},
		{"escaped key", []pathStep{key("ké")}, "1", true},
		{"empty string", []pathStep{key("e")}, `""`, true},
		{"null", []pathStep{key("n")}, "null", true},
		{"brackets in string", []pathStep{key("s")}, `"}]"`, true},
		{"missing", []pathStep{key("zz")}, "", false},
		{"index past end", []pathStep{key("a"), key("b"), idx(3)}, "", false},
		{"key on array", []pathStep{key("a"), key("b"), key("x")}, "", false},
		{"index on object", []pathStep{idx(0)}, "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			raw, ok := jsonLookup(doc, tc.path)
			require.Equal(t, tc.ok, ok)
			if ok {
				require.Equal(t, tc.want, string(raw))
			}
		})
	}
	for _, bad := range []string{"", "{", `{"a"`, `{"a":`, `{"a" 1}`, `[1,`, `"abc`, `{"a":[1,{"b":}`} {
		t.Run("malformed "+bad, func(t *testing.T) {
			_, _ = jsonLookup([]byte(bad), []pathStep{key("a"), idx(1), key("b")})
			_, _ = decodeJSON([]byte(bad))
		})
	}
}

func TestDecodeJSON(t *testing.T) {
	cases := []struct {
		in   string
		want value
		ok   bool
	}{
		{"1", intVal(1), true},
		{"-7", intVal(-7), true},
		{"1.5", floatVal(1.5), true},
		{"1e2", floatVal(100), true},
		{"99999999999999999999", floatVal(1e20), true},
		{`"a\nb\u00e9\ud83d\ude00"`, strVal("a\nbé😀"), true},
		{"true", boolVal(true), true},
		{"false", boolVal(false), true},
		{"null", value{}, true},
		{`[1, "a", [true]]`, listVal([]value{intVal(1), strVal("a"), listVal([]value{boolVal(true)})}), true},
		{"[]", listVal([]value{}), true},
		{"tru", value{}, false},
		{"-", value{}, false},
		{`"\q"`, value{}, false},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			v, ok := decodeJSON([]byte(tc.in))
			require.Equal(t, tc.ok, ok)
			if ok {
				require.True(t, equalValues(tc.want, v) || tc.want.k == vkNull && v.k == vkNull, "got %s", v)
			}
		})
	}
}

func TestClientForms(t *testing.T) {
	// Shapes generated by the Go SDK, pymilvus and the query iterators.
	runEval(t, []evalCase{
		{"id in [1,2,3]", rows(1, 2, 3)},
		{"id in [1, 2]", rows(1, 2)},
		{"(id in [1,2,3]) and id > 1", rows(2, 3)},
		{`(s like "a%") and id > 0`, rows(7, 9)},
		{"(id >= 0) and id > 7", rows(8, 9)},
		{`s in ['apple','fig']`, rows(0, 5)},
	}, testSchema(true), nil)

	b := &mapBatch{n: 4, cols: map[int64]column.Column{
		1: &column.Strings{T: schemapb.DataType_VarChar, Data: []string{"a", "b", "c", "d"}},
		2: &column.Ints{T: schemapb.DataType_Int64, Data: []int64{1, 2, 3, 4}},
	}}
	for _, tc := range []evalCase{
		{`pk in ["a","c"]`, rows(0, 2)},
		{`pk in ['a','b']`, rows(0, 1)},
		{`(x > 1) and pk > "b"`, rows(2, 3)},
		{`pk > "b"`, rows(2, 3)},
	} {
		t.Run("varchar pk "+tc.expr, func(t *testing.T) {
			e, err := Compile(tc.expr, varcharPKSchema(), nil)
			require.NoError(t, err)
			got, err := e.Eval(b)
			require.NoError(t, err)
			require.Equal(t, tc.want, matching(got))
		})
	}
}

func TestPathological(t *testing.T) {
	cases := []struct {
		name string
		src  string
		ok   bool
	}{
		{"long or chain", strings.Repeat("id == 1 or ", 5000) + "id == 2", true},
		{"long and chain", strings.Repeat("b and ", 5000) + "b", true},
		{"long sum", strings.Repeat("1 + ", 5000) + "id == 5001", true},
		{"many minus", strings.Repeat("-", 5000) + "1 == id", false},
		{"deep brackets", strings.Repeat("[", 5000), false},
		{"deep calls", strings.Repeat("array_length(", 5000), false},
		{"deep exists", strings.Repeat("exists ", 5000) + "age", false},
		{"deep power", strings.Repeat("2 ** ", 5000) + "1 == id", false},
		{"big list", "id in [" + strings.Repeat("7, ", 20000) + "8]", true},
		{"long string", `s == "` + strings.Repeat("x", 100000) + `"`, true},
		{"huge power", "9 ** 9223372036854775807 == id", true},
		{"unterminated raw", `s == r"abc\"`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e, err := Compile(tc.src, testSchema(true), nil)
			if !tc.ok {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			_, err = e.Eval(testBatch())
			require.NoError(t, err)
		})
	}
}
