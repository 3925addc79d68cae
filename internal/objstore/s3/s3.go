package s3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/strata-db/strata/internal/objstore"
)

// Config configures a Store.
type Config struct {
	// Endpoint is the server's host[:port], without scheme (required).
	Endpoint string `json:"endpoint"`
	// Bucket holds the objects (required).
	Bucket string `json:"bucket"`
	// AccessKey and SecretKey are static credentials; both empty means
	// anonymous access.
	AccessKey string `json:"accessKey"`
	// SecretKey is AccessKey's secret.
	SecretKey string `json:"secretKey"`
	// UseSSL selects https.
	UseSSL bool `json:"useSSL"`
	// Root is a key prefix inside the bucket ("" for none); it must be a
	// valid objstore key when set. Leading and trailing "/" are ignored.
	Root string `json:"root"`
	// Region is the bucket's region. Default "us-east-1".
	Region string `json:"region"`
	// CreateBucket makes Open create Bucket when it does not exist.
	CreateBucket bool `json:"createBucket"`
}

// DefaultRegion is the default Config.Region.
const DefaultRegion = "us-east-1"

// Defaults returns the default configuration (without Endpoint and Bucket).
func Defaults() Config { return Config{}.withDefaults() }

// withDefaults returns c with unset fields set to their defaults and Root
// without leading and trailing "/".
func (c Config) withDefaults() Config {
	if c.Region == "" {
		c.Region = DefaultRegion
	}
	c.Root = strings.Trim(c.Root, "/")
	return c
}

// Validate reports a Config that cannot work.
func (c Config) Validate() error {
	if c.Endpoint == "" {
		return errors.New("objstore/s3: config: Endpoint is required")
	}
	if c.Bucket == "" {
		return errors.New("objstore/s3: config: Bucket is required")
	}
	if (c.AccessKey == "") != (c.SecretKey == "") {
		return errors.New("objstore/s3: config: set both AccessKey and SecretKey, or neither")
	}
	if root := strings.Trim(c.Root, "/"); root != "" {
		if err := objstore.ValidateKey(root); err != nil {
			return fmt.Errorf("objstore/s3: config: Root: %w", err)
		}
	}
	return nil
}

// Store is an objstore.Store on an S3 bucket. It is safe for concurrent use.
type Store struct {
	client    *minio.Client
	transport *http.Transport
	bucket    string
	prefix    string // Root + "/", or ""
	logger    *slog.Logger
}

var _ objstore.Store = (*Store)(nil)

// Open connects to the endpoint, checks that the bucket exists (creating it
// when cfg.CreateBucket is set) and returns a Store.
func Open(ctx context.Context, cfg Config, logger *slog.Logger) (*Store, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	transport, err := minio.DefaultTransport(cfg.UseSSL)
	if err != nil {
		return nil, fmt.Errorf("objstore/s3: transport: %w", err)
	}
	creds := credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, "")
	if cfg.AccessKey == "" {
		creds = credentials.New(&credentials.Static{Value: credentials.Value{SignerType: credentials.SignatureAnonymous}})
	}
	client, err := minio.New(cfg.Endpoint, &minio.Options{
		Creds:     creds,
		Secure:    cfg.UseSSL,
		Region:    cfg.Region,
		Transport: transport,
	})
	if err != nil {
		return nil, fmt.Errorf("objstore/s3: client for %s: %w", cfg.Endpoint, err)
	}
	s := &Store{client: client, transport: transport, bucket: cfg.Bucket, logger: logger}
	if cfg.Root != "" {
		s.prefix = cfg.Root + "/"
	}
	if err := s.ensureBucket(ctx, cfg); err != nil {
		transport.CloseIdleConnections()
		return nil, err
	}
	return s, nil
}

func (s *Store) ensureBucket(ctx context.Context, cfg Config) error {
	ok, err := s.client.BucketExists(ctx, cfg.Bucket)
	if err != nil {
		return fmt.Errorf("objstore/s3: bucket %q: %w", cfg.Bucket, err)
	}
	if ok {
		return nil
	}
	if !cfg.CreateBucket {
		return fmt.Errorf("objstore/s3: bucket %q does not exist", cfg.Bucket)
	}
	err = s.client.MakeBucket(ctx, cfg.Bucket, minio.MakeBucketOptions{Region: cfg.Region})
	if err != nil {
		// Another process may have created it meanwhile.
		code := minio.ToErrorResponse(err).Code
		if code != "BucketAlreadyOwnedByYou" && code != "BucketAlreadyExists" {
			return fmt.Errorf("objstore/s3: create bucket %q: %w", cfg.Bucket, err)
		}
	}
	s.logger.Info("created bucket", slog.String("bucket", cfg.Bucket))
	return nil
}

// Close releases idle connections. The Store must not be used afterwards.
func (s *Store) Close() error {
	s.transport.CloseIdleConnections()
	return nil
}

// objectName validates key and maps it to the S3 object name.
func (s *Store) objectName(ctx context.Context, key string) (string, error) {
	if err := objstore.ValidateKey(key); err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	return s.prefix + key, nil
}

// Put uploads data in one PUT.
func (s *Store) Put(ctx context.Context, key string, data []byte) error {
	name, err := s.objectName(ctx, key)
	if err != nil {
		return err
	}
	opts := minio.PutObjectOptions{ContentType: "application/octet-stream"}
	// minio-go signs an empty body over plain http as an aws-chunked stream
	// without a Content-Length, which servers reject (MissingContentLength);
	// there is no payload to protect, so send it unsigned.
	opts.DisableContentSha256 = len(data) == 0
	_, err = s.client.PutObject(ctx, s.bucket, name, bytes.NewReader(data), int64(len(data)), opts)
	if err != nil {
		return s.wrap(ctx, "put", key, err)
	}
	return nil
}

// Get downloads the whole object.
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	name, err := s.objectName(ctx, key)
	if err != nil {
		return nil, err
	}
	obj, err := s.client.GetObject(ctx, s.bucket, name, minio.GetObjectOptions{})
	if err != nil {
		return nil, s.wrap(ctx, "get", key, err)
	}
	data, err := io.ReadAll(obj)
	if closeErr := obj.Close(); err == nil && closeErr != nil {
		err = closeErr
	}
	if err != nil {
		return nil, s.wrap(ctx, "get", key, err)
	}
	return data, nil
}

// Open starts a download of the object; the reader streams it. The size
// comes from the response's headers, so an absent key fails here.
func (s *Store) Open(ctx context.Context, key string) (io.ReadCloser, int64, error) {
	name, err := s.objectName(ctx, key)
	if err != nil {
		return nil, 0, err
	}
	obj, err := s.client.GetObject(ctx, s.bucket, name, minio.GetObjectOptions{})
	if err != nil {
		return nil, 0, s.wrap(ctx, "open", key, err)
	}
	info, err := obj.Stat()
	if err != nil {
		return nil, 0, errors.Join(s.wrap(ctx, "open", key, err), obj.Close())
	}
	return obj, info.Size, nil
}

// Stat returns the object's size and modification time.
func (s *Store) Stat(ctx context.Context, key string) (objstore.ObjectInfo, error) {
	name, err := s.objectName(ctx, key)
	if err != nil {
		return objstore.ObjectInfo{}, err
	}
	info, err := s.client.StatObject(ctx, s.bucket, name, minio.StatObjectOptions{})
	if err != nil {
		return objstore.ObjectInfo{}, s.wrap(ctx, "stat", key, err)
	}
	return objstore.ObjectInfo{Key: key, Size: info.Size, ModTime: info.LastModified}, nil
}

// List returns every object under prefix, recursively, sorted by key.
func (s *Store) List(ctx context.Context, prefix string) ([]objstore.ObjectInfo, error) {
	if err := objstore.ValidatePrefix(prefix); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// Cancel on return so the listing goroutine stops if we leave early.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var out []objstore.ObjectInfo
	for obj := range s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: s.prefix + prefix, Recursive: true}) {
		if obj.Err != nil {
			return nil, s.wrap(ctx, "list", prefix, obj.Err)
		}
		key, ok := strings.CutPrefix(obj.Key, s.prefix)
		if !ok {
			continue
		}
		out = append(out, objstore.ObjectInfo{Key: key, Size: obj.Size, ModTime: obj.LastModified})
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b objstore.ObjectInfo) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}

// Delete removes the object; S3 treats an absent key as success.
func (s *Store) Delete(ctx context.Context, key string) error {
	name, err := s.objectName(ctx, key)
	if err != nil {
		return err
	}
	if err := s.client.RemoveObject(ctx, s.bucket, name, minio.RemoveObjectOptions{}); err != nil {
		if isNotFound(err) {
			return nil
		}
		return s.wrap(ctx, "delete", key, err)
	}
	return nil
}

// wrap maps not-found responses to objstore.ErrNotFound and a finished
// ctx to its error, and names the operation otherwise.
func (s *Store) wrap(ctx context.Context, op, key string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("objstore/s3: %s %q: %w", op, key, ctxErr)
	}
	if isNotFound(err) {
		return fmt.Errorf("%w: %q", objstore.ErrNotFound, key)
	}
	return fmt.Errorf("objstore/s3: %s %q: %w", op, key, err)
}

func isNotFound(err error) bool {
	resp := minio.ToErrorResponse(err)
	return resp.Code == "NoSuchKey" || resp.StatusCode == http.StatusNotFound && resp.Code != "NoSuchBucket"
}

// Ping asks the server whether the bucket exists: nil when it answers yes.
func (s *Store) Ping(ctx context.Context) error {
	ok, err := s.client.BucketExists(ctx, s.bucket)
	if err != nil {
		return fmt.Errorf("objstore/s3: ping bucket %q: %w", s.bucket, err)
	}
	if !ok {
		return fmt.Errorf("objstore/s3: ping: bucket %q does not exist", s.bucket)
	}
	return nil
}
