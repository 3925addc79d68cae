package catalog

import (
	"fmt"
	"strings"

	"github.com/strata-db/strata/internal/errcode"
)

// The names of the catalog: how collections, aliases, partitions, fields
// and databases may be named, and the derived names of struct sub-fields.
// Every component that takes a name from a client validates it here.

// MaxNameLength bounds every name (Milvus proxy.maxNameLength).
const MaxNameLength = 255

// ValidateName checks a collection, alias, partition, field or database
// name as Milvus does: at most MaxNameLength bytes, a letter or an underscore
// first (partitions may also start with a digit), then letters, digits and
// underscores (partitions may also hold '-'). A partition name is judged
// with surrounding blanks trimmed, and a field may not be named by a
// filter-language keyword (FieldNameKeyword). The errors carry Milvus's codes
// and messages: 1100 for collections, aliases and partitions, 1701 for
// fields, 802 for databases.
func ValidateName(kind, name string) error {
	switch kind {
	case "collection", "alias":
		return validateCollectionName(kind, name)
	case "partition":
		return validatePartitionName(name)
	case "field":
		return validateFieldName(name)
	case "database":
		return validateDatabaseName(name)
	}
	return validateCollectionName(kind, name)
}

// nameProblem names what is wrong with name, or "" when nothing is: too
// long, a bad first character, or a bad later character.
func nameProblem(name string, firstDigit, dash bool) string {
	if len(name) > MaxNameLength {
		return "length"
	}
	c := name[0]
	if c != '_' && !isLetter(c) && (!firstDigit || !isDigit(c)) {
		return "first"
	}
	for i := 1; i < len(name); i++ {
		c := name[i]
		if c != '_' && !isLetter(c) && !isDigit(c) && (!dash || c != '-') {
			return "chars"
		}
	}
	return ""
}

func validateCollectionName(kind, name string) error {
	entity := "name"
	if kind == "alias" {
		entity = "alias"
	}
	if name == "" {
		return errcode.InvalidParam("collection %s should not be empty", entity)
	}
	invalid := fmt.Sprintf("Invalid collection %s: %s.", entity, name) // then " the reason", one space as Milvus 2.6 words it
	switch nameProblem(name, false, false) {
	case "length":
		return errcode.InvalidParam("%s the length of a collection %s must be less than %d characters", invalid, entity, MaxNameLength)
	case "first":
		return errcode.InvalidParam("%s the first character of a collection %s must be an underscore or letter", invalid, entity)
	case "chars":
		return errcode.InvalidParam("%s collection %s can only contain numbers, letters and underscores", invalid, entity)
	}
	return nil
}

func validatePartitionName(name string) error {
	name = strings.TrimSpace(name) // Milvus judges the trimmed name
	invalid := "Invalid partition name: " + name + ". "
	if name == "" {
		return errcode.Invalid("%sPartition name should not be empty.", invalid)
	}
	switch nameProblem(name, true, true) {
	case "length":
		return errcode.Invalid("%sThe length of a partition name must be less than %d characters.", invalid, MaxNameLength)
	case "first":
		return errcode.Invalid("%sThe first character of a partition name must be an underscore or letter.", invalid)
	case "chars":
		return errcode.Invalid("%sPartition name can only contain numbers, letters and underscores.", invalid)
	}
	return nil
}

func validateFieldName(name string) error {
	bad := func(msg string) error {
		return errcode.New(errcode.FieldInvalidName, "%s: field name invalid[field=%s]", msg, name)
	}
	if strings.TrimSpace(name) == "" {
		return bad("field name should not be empty")
	}
	invalid := "Invalid field name: " + name + ". "
	switch nameProblem(name, false, false) {
	case "length":
		return bad(fmt.Sprintf("%sThe length of a field name must be less than %d characters.", invalid, MaxNameLength))
	case "first":
		return bad(invalid + "The first character of a field name must be an underscore or letter.")
	case "chars":
		return bad(invalid + "Field name can only contain numbers, letters, and underscores.")
	}
	if FieldNameKeyword(name) {
		return bad(fmt.Sprintf("%s%s is keyword in milvus.", invalid, name))
	}
	return nil
}

// fieldNameKeywords are the words of the filter language that Milvus 2.6
// refuses as field names, in the casings it refuses (common.FieldNameKeywords):
// a field so named could not be told apart from the operator in a filter.
var fieldNameKeywords = map[string]bool{
	"$meta": true, "like": true, "exists": true, "EXISTS": true,
	"and": true, "or": true, "not": true, "in": true,
	"json_contains": true, "JSON_CONTAINS": true,
	"json_contains_all": true, "JSON_CONTAINS_ALL": true,
	"json_contains_any": true, "JSON_CONTAINS_ANY": true,
	"array_contains": true, "ARRAY_CONTAINS": true,
	"array_contains_all": true, "ARRAY_CONTAINS_ALL": true,
	"array_contains_any": true, "ARRAY_CONTAINS_ANY": true,
	"array_length": true, "ARRAY_LENGTH": true,
	"true": true, "True": true, "TRUE": true,
	"false": true, "False": true, "FALSE": true,
	"text_match": true, "TEXT_MATCH": true,
	"phrase_match": true, "PHRASE_MATCH": true,
	"random_sample": true, "RANDOM_SAMPLE": true,
}

// FieldNameKeyword reports whether name is a filter-language keyword that
// cannot name a field ("like", "and", "json_contains", "TRUE", ...), matched
// in the casings Milvus 2.6 lists.
func FieldNameKeyword(name string) bool { return fieldNameKeywords[name] }

func validateDatabaseName(name string) error {
	bad := func(msg string) error {
		return errcode.New(errcode.DatabaseInvalidName, "%s: invalid database name[database=%s]", msg, name)
	}
	if name == "" {
		return bad("database name couldn't be empty")
	}
	switch nameProblem(name, false, false) {
	case "length":
		return bad(fmt.Sprintf("the length of a database name must be less than %d characters", MaxNameLength))
	case "first":
		return bad("the first character of a database name must be an underscore or letter")
	case "chars":
		return bad("database name can only contain numbers, letters and underscores")
	}
	return nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isLetter(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }

// StructSubFieldName is the name under which a sub-field of an Array of
// Structs field is addressed (in create_index, search's anns_field and
// output_fields) and under which its flattened column is stored in the
// schema's Fields: "struct[sub]", as Milvus spells it.
func StructSubFieldName(structName, sub string) string { return structName + "[" + sub + "]" }

// MmapKey is the type-param and property key of the mmap loading hint.
const MmapKey = "mmap.enabled"
