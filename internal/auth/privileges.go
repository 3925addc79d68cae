package auth

import (
	"slices"
	"strings"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
)

// Object types of grants (commonpb.ObjectType names).
const (
	ObjectGlobal     = "Global"
	ObjectCollection = "Collection"
	ObjectUser       = "User"
)

// Rule is what Milvus requires for one RPC: a privilege on an object.
type Rule struct {
	// ObjectType is the type of the object the privilege is checked on.
	ObjectType string
	// Privilege is the privilege's API name ("Search", "CreateCollection").
	Privilege string
	// Objects returns the object names the request names; nil means the
	// object is "*" (Global privileges). Every name must be permitted.
	Objects func(req any) []string
}

// Rules maps each MilvusService RPC that Milvus checks to its rule; the
// table mirrors the privilege annotations of milvus.proto (a test holds it to
// them). RPCs absent from it (Connect, GetVersion, CheckHealth, HasCollection,
// ShowCollections, ListDatabases, …) need only authentication.
var Rules = map[string]Rule{
	"CreateCollection":             {ObjectGlobal, "CreateCollection", nil},
	"DropCollection":               {ObjectGlobal, "DropCollection", nil},
	"LoadCollection":               {ObjectCollection, "Load", collectionName},
	"ReleaseCollection":            {ObjectCollection, "Release", collectionName},
	"DescribeCollection":           {ObjectGlobal, "DescribeCollection", nil},
	"BatchDescribeCollection":      {ObjectGlobal, "DescribeCollection", nil},
	"GetCollectionStatistics":      {ObjectCollection, "GetStatistics", collectionName},
	"AlterCollection":              {ObjectGlobal, "CreateCollection", nil},
	"AlterCollectionField":         {ObjectGlobal, "CreateCollection", nil},
	"AddCollectionFunction":        {ObjectGlobal, "CreateCollection", nil},
	"AlterCollectionFunction":      {ObjectGlobal, "CreateCollection", nil},
	"DropCollectionFunction":       {ObjectGlobal, "CreateCollection", nil},
	"TruncateCollection":           {ObjectGlobal, "DropCollection", nil},
	"CreatePartition":              {ObjectCollection, "CreatePartition", collectionName},
	"DropPartition":                {ObjectCollection, "DropPartition", collectionName},
	"HasPartition":                 {ObjectCollection, "HasPartition", collectionName},
	"LoadPartitions":               {ObjectCollection, "Load", collectionName},
	"ReleasePartitions":            {ObjectCollection, "Release", collectionName},
	"ShowPartitions":               {ObjectCollection, "ShowPartitions", collectionName},
	"GetLoadingProgress":           {ObjectCollection, "GetLoadState", collectionName},
	"GetLoadState":                 {ObjectCollection, "GetLoadState", collectionName},
	"CreateAlias":                  {ObjectGlobal, "CreateAlias", nil},
	"DropAlias":                    {ObjectGlobal, "DropAlias", nil},
	"AlterAlias":                   {ObjectGlobal, "CreateAlias", nil},
	"DescribeAlias":                {ObjectGlobal, "DescribeAlias", nil},
	"ListAliases":                  {ObjectGlobal, "ListAliases", nil},
	"CreateIndex":                  {ObjectCollection, "CreateIndex", collectionName},
	"AlterIndex":                   {ObjectCollection, "CreateIndex", collectionName},
	"DescribeIndex":                {ObjectCollection, "IndexDetail", collectionName},
	"GetIndexStatistics":           {ObjectCollection, "IndexDetail", collectionName},
	"GetIndexState":                {ObjectCollection, "IndexDetail", collectionName},
	"GetIndexBuildProgress":        {ObjectCollection, "IndexDetail", collectionName},
	"DropIndex":                    {ObjectCollection, "DropIndex", collectionName},
	"Insert":                       {ObjectCollection, "Insert", collectionName},
	"Delete":                       {ObjectCollection, "Delete", collectionName},
	"Upsert":                       {ObjectCollection, "Upsert", collectionName},
	"Search":                       {ObjectCollection, "Search", collectionName},
	"HybridSearch":                 {ObjectCollection, "Search", collectionName},
	"Flush":                        {ObjectCollection, "Flush", collectionNames},
	"Query":                        {ObjectCollection, "Query", collectionName},
	"FlushAll":                     {ObjectGlobal, "FlushAll", nil},
	"AddCollectionField":           {ObjectCollection, "AddCollectionField", collectionName},
	"GetFlushState":                {ObjectCollection, "GetFlushState", collectionName},
	"LoadBalance":                  {ObjectCollection, "LoadBalance", collectionName},
	"ManualCompaction":             {ObjectCollection, "Compaction", collectionName},
	"Import":                       {ObjectCollection, "Import", collectionName},
	"CreateCredential":             {ObjectGlobal, "CreateOwnership", nil},
	"UpdateCredential":             {ObjectUser, "UpdateUser", credentialUser},
	"DeleteCredential":             {ObjectGlobal, "DropOwnership", nil},
	"ListCredUsers":                {ObjectGlobal, "SelectOwnership", nil},
	"CreateRole":                   {ObjectGlobal, "CreateOwnership", nil},
	"DropRole":                     {ObjectGlobal, "DropOwnership", nil},
	"OperateUserRole":              {ObjectGlobal, "ManageOwnership", nil},
	"SelectRole":                   {ObjectGlobal, "SelectOwnership", nil},
	"SelectUser":                   {ObjectUser, "SelectUser", selectedUser},
	"OperatePrivilege":             {ObjectGlobal, "ManageOwnership", nil},
	"OperatePrivilegeV2":           {ObjectGlobal, "ManageOwnership", nil},
	"SelectGrant":                  {ObjectGlobal, "SelectOwnership", nil},
	"CreateResourceGroup":          {ObjectGlobal, "CreateResourceGroup", nil},
	"DropResourceGroup":            {ObjectGlobal, "DropResourceGroup", nil},
	"UpdateResourceGroups":         {ObjectGlobal, "UpdateResourceGroups", nil},
	"TransferNode":                 {ObjectGlobal, "TransferNode", nil},
	"TransferReplica":              {ObjectGlobal, "TransferReplica", nil},
	"ListResourceGroups":           {ObjectGlobal, "ListResourceGroups", nil},
	"DescribeResourceGroup":        {ObjectGlobal, "DescribeResourceGroup", nil},
	"RenameCollection":             {ObjectGlobal, "RenameCollection", nil},
	"CreateDatabase":               {ObjectGlobal, "CreateDatabase", nil},
	"DropDatabase":                 {ObjectGlobal, "DropDatabase", nil},
	"AlterDatabase":                {ObjectGlobal, "AlterDatabase", nil},
	"DescribeDatabase":             {ObjectGlobal, "DescribeDatabase", nil},
	"BackupRBAC":                   {ObjectGlobal, "BackupRBAC", nil},
	"RestoreRBAC":                  {ObjectGlobal, "RestoreRBAC", nil},
	"CreatePrivilegeGroup":         {ObjectGlobal, "CreatePrivilegeGroup", nil},
	"DropPrivilegeGroup":           {ObjectGlobal, "DropPrivilegeGroup", nil},
	"ListPrivilegeGroups":          {ObjectGlobal, "ListPrivilegeGroups", nil},
	"OperatePrivilegeGroup":        {ObjectGlobal, "OperatePrivilegeGroup", nil},
	"AddFileResource":              {ObjectGlobal, "AddFileResource", nil},
	"RemoveFileResource":           {ObjectGlobal, "RemoveFileResource", nil},
	"ListFileResources":            {ObjectGlobal, "ListFileResources", nil},
	"AddUserTags":                  {ObjectUser, "UpdateUser", taggedUser},
	"DeleteUserTags":               {ObjectUser, "UpdateUser", taggedUser},
	"GetUserTags":                  {ObjectUser, "SelectUser", taggedUser},
	"ListUsersWithTag":             {ObjectUser, "SelectUser", nil},
	"CreateRowPolicy":              {ObjectCollection, "CreateOwnership", collectionName},
	"DropRowPolicy":                {ObjectCollection, "DropOwnership", collectionName},
	"ListRowPolicies":              {ObjectCollection, "SelectOwnership", collectionName},
	"UpdateReplicateConfiguration": {ObjectGlobal, "UpdateReplicateConfiguration", nil},
	"GetReplicateConfiguration":    {ObjectGlobal, "GetReplicateConfiguration", nil},
}

func collectionName(req any) []string {
	if r, ok := req.(interface{ GetCollectionName() string }); ok {
		return []string{r.GetCollectionName()}
	}
	return []string{""}
}

func collectionNames(req any) []string {
	if r, ok := req.(interface{ GetCollectionNames() []string }); ok {
		return r.GetCollectionNames()
	}
	return nil
}

func credentialUser(req any) []string {
	return []string{req.(*milvuspb.UpdateCredentialRequest).GetUsername()}
}

func selectedUser(req any) []string {
	return []string{req.(*milvuspb.SelectUserRequest).GetUser().GetName()}
}

func taggedUser(req any) []string {
	if r, ok := req.(interface{ GetUserName() string }); ok {
		return []string{r.GetUserName()}
	}
	return []string{""}
}

// IsPrivilege reports whether name is one privilege (not a group) in API spelling.
func IsPrivilege(name string) bool {
	_, ok := commonpb.ObjectPrivilege_value["Privilege"+name]
	return ok && !strings.HasPrefix(name, "Group")
}

// Privileges lists every privilege's API name.
func Privileges() []string {
	var out []string
	for n := range commonpb.ObjectPrivilege_value {
		if p, ok := strings.CutPrefix(n, "Privilege"); ok && !strings.HasPrefix(p, "Group") {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// Privilege levels (milvuspb.PrivilegeLevel names): where a privilege is
// scoped. Cluster privileges ignore the grant's database.
const (
	LevelCluster    = "Cluster"
	LevelDatabase   = "Database"
	LevelCollection = "Collection"
)

// PrivilegeLevel returns the level of privilege ("" for one of no level).
func PrivilegeLevel(privilege string) string {
	switch {
	case slices.Contains(BuiltinGroups["ClusterAdmin"], privilege):
		return LevelCluster
	case slices.Contains(BuiltinGroups["DatabaseAdmin"], privilege):
		return LevelDatabase
	case slices.Contains(BuiltinGroups["CollectionAdmin"], privilege):
		return LevelCollection
	}
	return ""
}

var (
	collectionReadOnly = []string{
		"Query", "Search", "IndexDetail", "GetFlushState", "GetLoadState", "GetLoadingProgress",
		"HasPartition", "ShowPartitions", "DescribeCollection", "DescribeAlias", "GetStatistics", "ListAliases",
		"GetImportProgress", "ListImport",
	}
	collectionReadWrite = append(slices.Clone(collectionReadOnly), "Load", "Release", "Insert", "Delete", "Upsert",
		"Import", "Flush", "Compaction", "LoadBalance", "CreateIndex", "DropIndex", "CreatePartition", "DropPartition",
		"AddCollectionField")
	collectionAdmin   = append(slices.Clone(collectionReadWrite), "CreateAlias", "DropAlias")
	databaseReadOnly  = []string{"ShowCollections", "DescribeDatabase"}
	databaseReadWrite = append(slices.Clone(databaseReadOnly), "AlterDatabase")
	databaseAdmin     = append(slices.Clone(databaseReadWrite), "CreateCollection", "DropCollection", "RenameCollection")
	clusterReadOnly   = []string{"ListDatabases", "SelectOwnership", "SelectUser", "DescribeResourceGroup", "ListResourceGroups", "ListPrivilegeGroups"}
	clusterReadWrite  = append(slices.Clone(clusterReadOnly), "FlushAll", "TransferNode", "TransferReplica", "UpdateResourceGroups")
	clusterAdmin      = append(slices.Clone(clusterReadWrite), "BackupRBAC", "RestoreRBAC", "CreateDatabase", "DropDatabase",
		"CreateOwnership", "DropOwnership", "ManageOwnership", "CreateResourceGroup", "DropResourceGroup", "UpdateUser",
		"CreatePrivilegeGroup", "DropPrivilegeGroup", "OperatePrivilegeGroup")
	legacyReadOnly = []string{
		"Query", "Search", "IndexDetail", "GetFlushState", "GetLoadState", "GetLoadingProgress",
		"HasPartition", "ShowPartitions", "ShowCollections", "ListAliases", "ListDatabases", "DescribeCollection",
		"DescribeDatabase", "DescribeAlias", "GetStatistics",
	}
	legacyReadWrite = append(slices.Clone(legacyReadOnly), "CreateIndex", "DropIndex", "CreatePartition", "DropPartition",
		"Load", "Release", "Insert", "Delete", "Upsert", "Import", "Flush", "Compaction", "LoadBalance", "CreateAlias", "DropAlias")
	legacyAdmin = append(slices.Clone(legacyReadWrite), "CreateCollection", "DropCollection", "RenameCollection",
		"CreateOwnership", "DropOwnership", "SelectOwnership", "ManageOwnership", "SelectUser", "UpdateUser",
		"BackupRBAC", "RestoreRBAC", "CreateResourceGroup", "UpdateResourceGroups", "DropResourceGroup",
		"DescribeResourceGroup", "ListResourceGroups", "TransferReplica", "TransferNode", "CreateDatabase",
		"DropDatabase", "AlterDatabase", "FlushAll")
)

// BuiltinGroups are Milvus's built-in privilege groups and their privileges.
// They cannot be dropped or changed.
var BuiltinGroups = map[string][]string{
	"CollectionReadOnly": collectionReadOnly, "CollectionReadWrite": collectionReadWrite, "CollectionAdmin": collectionAdmin,
	"DatabaseReadOnly": databaseReadOnly, "DatabaseReadWrite": databaseReadWrite, "DatabaseAdmin": databaseAdmin,
	"ClusterReadOnly": clusterReadOnly, "ClusterReadWrite": clusterReadWrite, "ClusterAdmin": clusterAdmin,
	"ReadOnly": legacyReadOnly, "ReadWrite": legacyReadWrite, "Admin": legacyAdmin,
}
