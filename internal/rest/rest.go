// Package rest serves the Milvus RESTful API v2 (`POST /v2/vectordb/{category}/{action}`)
// by translating each request into calls on a milvuspb.MilvusServiceServer held in
// process, so REST and gRPC share one implementation of every rule.
//
// Envelope: success is HTTP 200 with `{"code":0,"data":…}`; a business error is
// also HTTP 200, with `{"code":N,"message":"…"}` where N is the Milvus merr code
// (1801 malformed JSON, 1802 missing required parameter, 1804 bad insert data,
// 1806 bad primary key, otherwise the code in the gRPC Status).
//
// Headers: `Authorization: Bearer <user:password|token>` (or HTTP Basic) is
// passed on to the service as the gRPC `authorization` metadata (base64, as
// SDKs send it); with authorization on, a missing or wrong credential is HTTP
// 401 `{"code":1800,"message":"user hasn't authenticated"}` and a missing
// privilege HTTP 403 with the "permission deny" message;
// `DB-Name` names the database when the body has no `dbName`;
// `Accept-Type-Allow-Int64: true` returns int64 values as JSON numbers (they are
// strings otherwise, because JavaScript loses precision above 2^53);
// `Request-Timeout` (seconds) bounds the request.
package rest

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/strata-db/strata/internal/errcode"
)

// PathPrefix is the prefix of every REST v2 route.
const PathPrefix = "/v2/vectordb/"

// codeLegacy is the code of a response whose status set only the
// deprecated error_code. The REST layer's own merr codes (1800-1806) are
// in errcode with the others.
const codeLegacy int32 = 65535

const (
	headerAllowInt64 = "Accept-Type-Allow-Int64"
	headerDBName     = "DB-Name"
	headerTimeout    = "Request-Timeout"
	defaultDB        = "default"
	defaultTimeout   = 30 * time.Second
	maxBodyBytes     = 256 << 20
)

// Handler is the REST v2 http.Handler.
type Handler struct {
	svc    milvuspb.MilvusServiceServer
	logger *slog.Logger
	routes map[string]route
	imp    importState // jobs/import/* (import.go)
}

// route is one action: its handler, and whether it resolves and checks the
// request's database (the databases/* routes name the database themselves).
type route struct {
	fn      func(ctx context.Context, r *request) (any, error)
	checkDB bool
}

// New returns a Handler that serves REST v2 on top of svc.
func New(svc milvuspb.MilvusServiceServer, logger *slog.Logger) *Handler {
	h := &Handler{svc: svc, logger: logger}
	h.routes = map[string]route{}
	h.collectionRoutes()
	h.entityRoutes()
	h.partitionRoutes()
	h.indexRoutes()
	h.aliasRoutes()
	h.databaseRoutes()
	h.rbacRoutes()
	h.resourceGroupRoutes()
	return h
}

func (h *Handler) add(path string, checkDB bool, fn func(ctx context.Context, r *request) (any, error)) {
	h.routes[path] = route{fn: fn, checkDB: checkDB}
}

// Routes lists the implemented routes ("collections/list", …), for docs and tests.
func (h *Handler) Routes() []string {
	out := make([]string, 0, len(h.routes))
	for k := range h.routes {
		out = append(out, k)
	}
	return out
}

// apiError is an error with a Milvus code, as the envelope reports it.
type apiError struct {
	code int32
	msg  string
	http int // HTTP status; 0 means 200 (business errors travel in the envelope)
}

func (e *apiError) Error() string { return e.msg }

func errorf(code int32, format string, args ...any) error {
	return &apiError{code: code, msg: fmt.Sprintf(format, args...)}
}

func missing(name string) error {
	return errorf(errcode.MissingRequiredParameter, "missing required parameters, error: %s is required", name)
}

// request is one decoded HTTP request.
type request struct {
	body       []byte
	db         string
	allowInt64 bool
}

// decode unmarshals the body into v, numbers kept exact.
func (r *request) decode(v any) error {
	if len(bytes.TrimSpace(r.body)) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return errorf(errcode.IncorrectParameterFormat, "request body is not valid JSON for this action, error: %v", err)
	}
	return nil
}

// dbOf returns the database named in the body (dbName) or the request's.
func (r *request) dbOf(body string) string {
	if body != "" {
		return body
	}
	return r.db
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	path := strings.TrimPrefix(req.URL.Path, PathPrefix)
	rt, found := h.routes[path]
	if !found || !strings.HasPrefix(req.URL.Path, PathPrefix) {
		writeJSON(w, http.StatusNotFound, map[string]any{
			"code":    http.StatusNotFound,
			"message": fmt.Sprintf("route %s not found", req.URL.Path),
		})
		return
	}
	if req.Method != http.MethodPost {
		writeJSON(w, http.StatusMethodNotAllowed, map[string]any{
			"code":    http.StatusMethodNotAllowed,
			"message": "only POST is supported",
		})
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, maxBodyBytes))
	if err != nil {
		writeError(w, errorf(errcode.IncorrectParameterFormat, "read request body: %v", err))
		return
	}
	r := &request{body: body}
	r.allowInt64, _ = strconv.ParseBool(req.Header.Get(headerAllowInt64))
	var head struct {
		DBName string `json:"dbName"`
	}
	if err := r.decode(&head); err != nil {
		writeError(w, err)
		return
	}
	r.db = head.DBName
	if r.db == "" {
		r.db = req.Header.Get(headerDBName)
	}
	if r.db == "" {
		r.db = defaultDB
	}
	timeout := defaultTimeout
	if v := req.Header.Get(headerTimeout); v != "" {
		if s, err := strconv.ParseFloat(v, 64); err == nil && s > 0 {
			timeout = time.Duration(s * float64(time.Second))
		}
	}
	ctx, cancel := context.WithTimeout(req.Context(), timeout)
	defer cancel()
	ctx = WithMetadata(ctx, req.Header.Get("Authorization"), r.db)
	if rt.checkDB && r.db != defaultDB {
		if err := h.checkDatabase(ctx, r.db); err != nil {
			writeError(w, err)
			return
		}
	}
	data, err := rt.fn(ctx, r)
	if err != nil {
		h.logger.Debug("rest request failed", "path", path, "err", err)
		writeError(w, err)
		return
	}
	if env, ok := data.(envelope); ok {
		env["code"] = 0
		writeJSON(w, http.StatusOK, env)
		return
	}
	if data == nil {
		data = map[string]any{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"code": 0, "data": data})
}

// envelope is a handler result that is the whole response body (search adds
// "topks" beside "data").
type envelope map[string]any

// WithMetadata puts what an SDK would send as gRPC metadata into the
// context as incoming metadata: the database and the credentials of an
// HTTP Authorization header (Bearer user:password or token, or Basic).
func WithMetadata(ctx context.Context, auth, db string) context.Context {
	md := metadata.MD{"dbname": []string{db}}
	if token, found := strings.CutPrefix(auth, "Bearer "); found && token != "" {
		md.Set("authorization", base64.StdEncoding.EncodeToString([]byte(token)))
	} else if basic, found := strings.CutPrefix(auth, "Basic "); found && basic != "" {
		md.Set("authorization", basic) // already base64(user:password)
	}
	return metadata.NewIncomingContext(ctx, md)
}

func (h *Handler) checkDatabase(ctx context.Context, db string) error {
	resp, err := h.svc.ListDatabases(ctx, &milvuspb.ListDatabasesRequest{})
	if err := check(resp, err); err != nil {
		return err
	}
	for _, n := range resp.GetDbNames() {
		if n == db {
			return nil
		}
	}
	return errorf(errcode.DatabaseNotFound, "database not found[database=%s]", db)
}

// statusOf extracts the Status of a response.
func statusOf(resp any) *commonpb.Status {
	switch r := resp.(type) {
	case *commonpb.Status:
		return r
	case interface{ GetStatus() *commonpb.Status }:
		return r.GetStatus()
	}
	return nil
}

// check turns a gRPC result into an error: a transport error, or a Status
// that is not success.
func check(resp any, err error) error {
	if err != nil {
		if s, ok := status.FromError(err); ok {
			switch s.Code() {
			case codes.Unimplemented:
				return errorf(errcode.Unexpected, "not implemented: %s", s.Message())
			case codes.Unauthenticated: // as Milvus's REST server answers a bad credential
				return &apiError{code: errcode.NeedAuthenticate, msg: "user hasn't authenticated", http: http.StatusUnauthorized}
			case codes.PermissionDenied:
				return &apiError{code: codeLegacy, msg: s.Message(), http: http.StatusForbidden}
			}
			return errorf(errcode.Unexpected, "%s", s.Message())
		}
		return errorf(errcode.Unexpected, "%v", err)
	}
	st := statusOf(resp)
	if st == nil {
		return nil
	}
	if c := st.GetCode(); c == errcode.RateLimit || c == errcode.QuotaExceeded {
		// As Milvus's REST server answers what its limiter refuses.
		return &apiError{code: errcode.HTTPRateLimit, msg: "request is rejected by limiter, error: " + st.GetReason()}
	}
	if st.GetCode() != 0 {
		return &apiError{code: st.GetCode(), msg: st.GetReason()}
	}
	if st.GetErrorCode() != commonpb.ErrorCode_Success {
		return &apiError{code: codeLegacy, msg: st.GetReason()}
	}
	return nil
}

func writeError(w http.ResponseWriter, err error) {
	var e *apiError
	if !errors.As(err, &e) {
		e = &apiError{code: errcode.Unexpected, msg: err.Error()}
	}
	code := http.StatusOK
	if e.http != 0 {
		code = e.http
	}
	writeJSON(w, code, map[string]any{"code": e.code, "message": e.msg})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		code = http.StatusOK
		b, _ = json.Marshal(map[string]any{"code": errcode.InvalidSearchResult, "message": "encode response: " + err.Error()})
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(b)
}
