package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/app"
	"github.com/strata-db/strata/internal/auth"
)

func TestLoadConfigSecurity(t *testing.T) {
	cfg := app.Defaults()
	p := writeConfig(t, `{"security": {"authorizationEnabled": true, "defaultRootPassword": "root-secret",
		"tlsMode": 1, "serverPemPath": "/x/server.pem", "serverKeyPath": "/x/server.key"}, "pprof": true}`)
	require.NoError(t, loadConfigFile(p, &cfg, nil))
	require.True(t, cfg.Security.AuthorizationEnabled)
	require.Equal(t, "root-secret", cfg.Security.DefaultRootPassword)
	require.Equal(t, auth.TLSOneWay, cfg.Security.TLSMode)
	require.Equal(t, "/x/server.pem", cfg.Security.ServerPemPath)
	require.Equal(t, auth.Defaults().MinPasswordLength, cfg.Security.MinPasswordLength, "absent keys keep their defaults")
	require.True(t, cfg.Pprof)

	require.ErrorContains(t, loadConfigFile(writeConfig(t, `{"security": {"authorisationEnabled": true}}`), &cfg, nil),
		"authorisationEnabled")

	env := map[string]string{"STRATA_AUTHORIZATION_ENABLED": "false", "STRATA_ROOT_PASSWORD": "from-env"}
	require.NoError(t, applySecurityEnv(&cfg, func(k string) string { return env[k] }))
	require.False(t, cfg.Security.AuthorizationEnabled)
	require.Equal(t, "from-env", cfg.Security.DefaultRootPassword)
	env["STRATA_AUTHORIZATION_ENABLED"] = "maybe"
	require.ErrorContains(t, applySecurityEnv(&cfg, func(k string) string { return env[k] }), "not a boolean")

	def := app.Defaults()
	require.False(t, def.Security.AuthorizationEnabled, "off by default, as Milvus")
	require.False(t, def.Pprof)
}
