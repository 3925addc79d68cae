package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/strata-db/strata/internal/app"
	"github.com/strata-db/strata/internal/config"
)

// fileConfig is the JSON document --config reads: the server's app.Config
// (its keys are that struct's json tags, internal/config has the rules)
// and the settings that belong to the process rather than to the server.
// Every field is optional; an absent field keeps its default. Durations are
// Go duration strings ("500ms", "2m"), sizes are bytes. Unknown fields are
// an error.
type fileConfig struct {
	app.Config
	// MemoryLimit is the Go runtime's soft memory limit in bytes (0 = none);
	// absent (null), it is 3/4 of the memory available unless GOMEMLIMIT is set.
	MemoryLimit *int64 `json:"memoryLimit"`
}

// processConfig holds the settings of the file that belong to the process
// rather than to the server (app.Config).
type processConfig struct {
	// MemoryLimit is the "memoryLimit" setting; nil when absent.
	MemoryLimit *int64
	// LogFormat is the --log-format flag ("text" or "json"), not a file setting.
	LogFormat string `json:"-"`
}

// loadConfigFile applies the JSON configuration file at path to cfg and,
// when proc is not nil, to proc.
func loadConfigFile(path string, cfg *app.Config, proc *processConfig) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	fc := fileConfig{Config: *cfg}
	if proc != nil {
		fc.MemoryLimit = proc.MemoryLimit
	}
	if err := config.Decode(data, &fc); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	*cfg = fc.Config
	if proc != nil {
		proc.MemoryLimit = fc.MemoryLimit
	}
	return nil
}

// configCmd is `strata config [--config FILE]`: it prints the configuration
// document, the defaults or FILE applied to them, and checks it as
// `strata standalone` would (exit 1 when it is invalid).
func configCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("config", flag.ContinueOnError)
	fs.SetOutput(stderr)
	configFile := fs.String("config", "", "JSON file to apply to the defaults (see README, \"Configuration file\")")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: strata config [--config FILE]\n\n"+
			"prints the configuration document with every setting: the defaults, or FILE applied to them,\n"+
			"and checks it (exit status 1 when strata standalone would refuse it)")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return fmt.Errorf("config: unexpected argument %q", fs.Arg(0))
	}
	fc := fileConfig{Config: app.Defaults()}
	if *configFile != "" {
		var proc processConfig
		if err := loadConfigFile(*configFile, &fc.Config, &proc); err != nil {
			return err
		}
		fc.MemoryLimit = proc.MemoryLimit
	}
	doc, err := config.Encode(fc)
	if err != nil {
		return err
	}
	if _, err := stdout.Write(doc); err != nil {
		return err
	}
	return fc.Config.Validate()
}

// applySecurityEnv applies the environment's security settings over the
// configuration file's: STRATA_AUTHORIZATION_ENABLED (a boolean) and
// STRATA_ROOT_PASSWORD (the root password of the first start).
func applySecurityEnv(cfg *app.Config, getenv func(string) string) error {
	if v := getenv("STRATA_AUTHORIZATION_ENABLED"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("STRATA_AUTHORIZATION_ENABLED=%q is not a boolean", v)
		}
		cfg.Security.AuthorizationEnabled = b
	}
	if v := getenv("STRATA_ROOT_PASSWORD"); v != "" {
		cfg.Security.DefaultRootPassword = v
	}
	return nil
}
