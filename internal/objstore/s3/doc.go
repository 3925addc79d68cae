// Package s3 implements objstore.Store on S3-compatible object storage (AWS
// S3, MinIO) with minio-go, for cluster mode.
//
// Key scheme: the object with key k is stored in Config.Bucket under
// Root + "/" + k, or under k itself when Root is empty, so several
// deployments can share one bucket.
//
// S3 gives the port's guarantees directly: a PUT is atomic (readers see the
// old or the new object) and durable once acknowledged, and a LIST returns
// keys in ascending UTF-8 binary order, which for valid keys is bytewise
// order. Deleting an absent object succeeds. A "NoSuchKey" error (or HTTP
// 404) maps to objstore.ErrNotFound.
package s3
