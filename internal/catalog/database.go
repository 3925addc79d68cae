package catalog

import "strconv"

// Key prefixes of database and alias records (root coordinator). Both were
// added after collections; a meta store without them has only the implicit
// "default" database and no aliases.
//
//	rootcoord/database/{name}        DatabaseInfo
//	rootcoord/alias/{db}/{alias}     AliasInfo
const (
	DatabasePrefix = "rootcoord/database/"
	AliasPrefix    = "rootcoord/alias/"
)

// DatabaseKey is the key of a database record.
func DatabaseKey(name string) string { return DatabasePrefix + name }

// AliasKey is the key of an alias record.
func AliasKey(db, alias string) string { return AliasPrefix + db + "/" + alias }

// DatabaseInfo is a database's durable record.
type DatabaseInfo struct {
	ID         int64             `json:"id"`
	Name       string            `json:"name"`
	Properties map[string]string `json:"properties,omitempty"`
	CreatedTS  uint64            `json:"created_ts"`
}

// AliasInfo is an alias's durable record: a second name for a collection
// in the same database, bound to the collection's ID.
type AliasInfo struct {
	DBName       string `json:"db"`
	Name         string `json:"name"`
	CollectionID int64  `json:"collection"`
	CreatedTS    uint64 `json:"created_ts"`
}

// String implements fmt.Stringer.
func (a AliasInfo) String() string {
	return a.DBName + "/" + a.Name + "→" + strconv.FormatInt(a.CollectionID, 10)
}
