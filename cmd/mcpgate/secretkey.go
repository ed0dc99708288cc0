package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/reqstate"
	"github.com/mcpgate/mcpgate/seal"
)

// loadSecretKey reads the operator's secret (--secret-key, or the data
// directory's key file, made on first start) and checks it against the
// database's: the first process on a database stores the key's check, and
// a process given another key refuses to start, since it could open none
// of the secrets sealed, nor verify the tokens signed, under the other.
func (m *Main) loadSecretKey(ctx context.Context) error {
	key, err := m.secretKey()
	if err != nil {
		return err
	}
	check := seal.Check(key)
	stored, err := m.store.ClaimSetting(ctx, mcpgate.SettingSecretKeyCheck, check)
	if err != nil {
		return fmt.Errorf("secret key: %w", err)
	}
	if stored != check {
		return fmt.Errorf("secret key: this process's key (check %s) is not the key the database's secrets were sealed with (check %s): "+
			"give every process on one database the same --secret-key (MCPGATE_SECRET_KEY); without it each makes its own key file %s",
			check, stored, filepath.Join(m.Config.store.dataDir, "secret.key"))
	}
	box, err := seal.New(key)
	if err != nil {
		return fmt.Errorf("secret key: %w", err)
	}
	m.secret, m.box = key, box
	return nil
}

// sealKeys seals at rest the signing keys of access tokens and file URLs
// under the secret key, those an earlier release stored in plain form too.
func (m *Main) sealKeys(ctx context.Context) error {
	m.keys = sealedKeys{Store: m.store, box: m.box}
	return m.keys.sealPlain(ctx)
}

// secretKeyProblem names what is wrong with a --secret-key value, or
// returns "" for a good one or none.
func secretKeyProblem(key string) string {
	if key == "" {
		return ""
	}
	if _, err := seal.ParseKey(key); err != nil {
		return "--secret-key: " + err.Error()
	}
	return ""
}

// secretKey returns the operator's secret: --secret-key, or the data
// directory's key file, made on first start.
func (m *Main) secretKey() ([]byte, error) {
	if m.Config.SecretKey != "" {
		key, _ := seal.ParseKey(m.Config.SecretKey) // checked by validate
		return key, nil
	}
	dir := m.Config.store.dataDir
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("secret key: %w", err)
	}
	key, err := seal.LoadOrCreateKey(filepath.Join(dir, "secret.key"))
	if err != nil {
		return nil, fmt.Errorf("secret key: %w", err)
	}
	return key, nil
}

// requestStateSigner returns the signer of 2026-07-28 requestState tokens,
// keyed from the same secret, so that every replica that shares
// --secret-key verifies the others' tokens.
func (m *Main) requestStateSigner() *reqstate.Signer {
	return reqstate.New(m.secret)
}
