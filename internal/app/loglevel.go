package app

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
)

// logLevelHandler serves /log/level on the metrics port as Milvus does
// (zap's level handler): GET answers {"level":"info"}; PUT sets the level
// from a JSON body {"level":"debug"} or a form field level=debug and
// answers the new level; errors answer HTTP 400 {"error":"…"}.
func logLevelHandler(lv *slog.LevelVar, logger *slog.Logger) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		reply := func(code int, v map[string]string) {
			w.WriteHeader(code)
			_ = json.NewEncoder(w).Encode(v)
		}
		switch r.Method {
		case http.MethodGet:
		case http.MethodPut:
			var name string
			if strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
				name = r.FormValue("level")
			} else {
				var body struct {
					Level *string `json:"level"`
				}
				if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
					reply(http.StatusBadRequest, map[string]string{"error": fmt.Sprintf("Request body must be well-formed JSON: %v", err)})
					return
				}
				if body.Level == nil {
					reply(http.StatusBadRequest, map[string]string{"error": "Must specify a logging level."})
					return
				}
				name = *body.Level
			}
			var level slog.Level
			if err := level.UnmarshalText([]byte(name)); err != nil {
				reply(http.StatusBadRequest, map[string]string{"error": fmt.Sprintf("unrecognized level: %q", name)})
				return
			}
			if level != lv.Level() {
				logger.Info("log level changed", "from", levelName(lv.Level()), "to", levelName(level))
				lv.Set(level)
			}
		default:
			reply(http.StatusMethodNotAllowed, map[string]string{"error": "Only GET and PUT are supported."})
			return
		}
		reply(http.StatusOK, map[string]string{"level": levelName(lv.Level())})
	}
}

// levelName is a level as Milvus (zap) names it: "debug", "info", "warn", "error".
func levelName(l slog.Level) string { return strings.ToLower(l.String()) }
