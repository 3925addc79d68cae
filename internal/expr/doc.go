// Package expr compiles and evaluates the Milvus boolean filter language
// (the expr / filter string of Query, Search and Delete) against columnar
// batches.
//
// Compile lexes src, parses it with a hand-written recursive-descent
// (precedence-climbing) parser, resolves names against the collection
// schema, substitutes template values, folds constants and type-checks.
// The result is a tree of vectorized operators: every operator processes a
// whole column per call (tight loops over []int64, []float64, []string,
// []bool), so evaluation costs no per-row interface calls or reflection for
// scalar fields. JSON rows are scanned per row with a small allocation-free
// path reader; Array rows are walked per row.
//
// # Grammar
//
// Keywords accept the spellings shown (lower and upper case).
//
//	expr       = or .
//	or         = and { ("or" | "OR" | "||") and } .
//	and        = not { ("and" | "AND" | "&&") not } .
//	not        = ("not" | "NOT" | "!") not | bitor .
//	bitor      = bitxor { "|" bitxor } .
//	bitxor     = bitand { "^" bitand } .
//	bitand     = equality { "&" equality } .
//	equality   = relational { ("==" | "!=") relational } .
//	relational = term [ relop term [ relop term ] ] .      // chained: lo < x <= hi
//	relop      = "<" | "<=" | ">" | ">=" .
//	term       = shift [ ["not"] "in" shift                // x in [..], x not in [..]
//	                   | ["not"] "like" shift              // pattern: a string constant
//	                   | "is" ["not"] "null" ] .           // also IS NULL, IS NOT NULL
//	shift      = additive { ("<<" | ">>") additive } .
//	additive   = multiplicative { ("+" | "-") multiplicative } .
//	multiplicative = unary { ("*" | "/" | "%") unary } .
//	unary      = ("-" | "+" | "~" | "!" | "not") unary | power .
//	power      = postfix [ "**" unary ] .                  // right-associative
//	postfix    = primary { "[" (string | int) "]" } .      // JSON path / array index
//	primary    = int | float | string | bool | "null" | ident | "$meta"
//	           | "{" ident "}"                             // template placeholder
//	           | "(" expr ")" | "[" [ expr { "," expr } [","] ] "]"
//	           | ident "(" [ arg { "," arg } [","] ] ")"    // function call
//	arg        = expr | ident "=" expr .                   // named: minimum_should_match=2
//	           | ("exists" | "EXISTS") postfix .
//
//	int    = decimal | "0x" hex | "0o" octal | "0" octal | "0b" binary .
//	float  = digits "." [digits] [exp] | "." digits [exp] | digits exp | hex float ("0x1p-2") .
//	bool   = "true" | "True" | "TRUE" | "false" | "False" | "FALSE" .
//	string = '"' … '"' | "'" … "'" | ("r" | "R") quoted .
//	ident  = [A-Za-z_][A-Za-z0-9_]* .
//
// Cooked strings decode the C escapes \n \t \r \a \b \f \v \\ \" \' \? \xHH,
// octal \ooo, \uXXXX and \UXXXXXXXX; any other escape (notably \% and \_)
// keeps its backslash so LIKE patterns can use it. Raw strings keep every
// backslash; a backslash only stops the closing quote from ending the string.
//
// Precedence follows Milvus' Plan.g4 from loosest to tightest: or, and, not,
// |, ^, &, == !=, < <= > >=, in / like / is null, << >>, + -, * / %, unary,
// **. Bitwise operators therefore bind looser than comparisons, as in C:
// write (a & 4) == 4. One deliberate difference: the logical not binds
// looser than comparisons, so "not a > 1" means "not (a > 1)" (Plan.g4
// parses it as "(not a) > 1", which Milvus then rejects).
//
// # Names
//
// An identifier names a schema field. "$meta" is the dynamic field. A name
// that is not a schema field means $meta["name"] when the collection has a
// dynamic field, and is the error "field x not exist" otherwise. Steps in
// brackets index JSON fields (string keys and array positions) or Array
// fields (one integer position). Vector fields cannot be used in a filter.
//
// # Semantics
//
//   - Comparisons work between numbers (Int8…Int64, Float, Double; integers
//     and floats compare exactly, so an Int8 field compared with 1000 is
//     simply false), strings, and bools (== and != only), between two fields
//     of compatible types, and on arithmetic results. Constants compared
//     with Float (32-bit) data are rounded to float32 first.
//   - Arithmetic + - * / % ** and bitwise & | ^ ~ << >> (integers only) work
//     on numeric fields, array elements, array_length and JSON numbers.
//     Integer / and % truncate; ** always yields a float unless both sides
//     are constants. A constant zero divisor and a constant negative shift
//     are compile errors; a zero divisor in a row makes that row null.
//   - Constants are folded, so "1 + 2 == id" compiles to "id == 3".
//   - Null follows SQL three-valued logic: a comparison with a null operand
//     is null; not null is null; false and null is false; true or null is
//     true; a row whose result is null does not match. "x is null" and
//     "x is not null" are never null.
//   - JSON values compare by JSON type: numbers with numbers (integer
//     documents exactly), strings with strings, bools with bools, and (== and
//     != only) arrays with list literals, element by element. A missing
//     key or a type mismatch makes ==, <, <=, >, >=, in and like false, and
//     makes != and not in true (they are negations, as in Milvus). A JSON
//     path is null (for is null) when the row is null, the key is missing or
//     the value is JSON null. "exists p" is true when the path is present,
//     even with a null value. A JSON path used as a predicate is true when
//     its value is JSON true. The literal null may only be tested: "null is
//     null" is true, "null is not null" false.
//   - in takes a constant list (or a template list); the empty list matches
//     nothing and "not in []" everything. Lists for typed fields must hold
//     values of the field's type (integers and floats mix freely).
//   - like works on VarChar fields and JSON strings: % matches any run of
//     characters, _ exactly one character, \% \_ \\ are literals. Exact,
//     prefix, suffix and infix patterns use plain string tests; the rest a
//     compiled regular expression.
//   - array_contains(f, v), array_contains_all(f, [..]) and
//     array_contains_any(f, [..]) work on Array fields (values must match the
//     element type) and on JSON arrays; json_contains, json_contains_all and
//     json_contains_any are the same functions. JSON elements compare by
//     value, including nested arrays. contains_all of [] is true, contains_any
//     of [] is false.
//   - array_length(f) is the length of an Array field or a JSON array (null
//     when the JSON value is not an array), usable in any numeric context.
//   - Template placeholders {name} are replaced by
//     expr_template_values[name] (bool_val, int64_val, float_val, string_val,
//     or array_val of bools, longs, doubles, strings, nested arrays or JSON
//     documents) anywhere a constant or constant list may appear. A missing
//     name is a compile error.
//   - text_match(f, 'terms'[, minimum_should_match=k]) and
//     phrase_match(f, 'phrase'[, slop]) work on VarChar fields with
//     enable_match (also spelled TEXT_MATCH, PHRASE_MATCH); the query is a
//     string constant or template. The query is analyzed with the field's
//     analyzer; text_match holds for rows containing at least k (default 1,
//     at most 1000) of its distinct tokens, phrase_match for rows holding
//     its tokens in order within slop positions (default 0, a uint32; see
//     package textindex for the exact rule). A null text matches nothing
//     and the result is never null, so "not text_match(...)" keeps null
//     rows, as in Milvus. The field's positional index is built on first
//     use and kept by a MemoBatch (a segment), extending as it grows; other
//     batches get a transient one.
//   - random_sample, element_filter, match_* and the ST_* geometry
//     functions are recognised and rejected as not supported; timestamptz
//     ISO/INTERVAL forms and =~ / !~ are rejected.
//
// # Scalar indexes
//
// When the batch is an IndexedBatch whose Index(field) implements
// FieldIndex (a sealed segment with a scalar index attached), comparisons
// of that field with a constant (==, !=, <, <=, >, >=, chained ranges), in
// and not in lists, and exact or prefix like patterns are answered from the
// index instead of scanning the column (a conjunction of ordering
// comparisons on one field is a single range lookup), and array_contains,
// array_contains_any and array_contains_all use an index over an Array
// field's elements; and, or and not combine those
// results as usual, and anything an index cannot answer scans. Results are
// identical to scanning (TestIndexedEvalMatchesScan checks this over random
// filters with nulls, NaN and infinities).
//
// The empty filter matches every row. Errors are *Error values carrying the
// byte offset of the problem.
package expr
