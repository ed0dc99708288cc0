package mcpgate

import "context"

// SettingSecretKeyCheck is the setting that holds the check of the secret
// key (--secret-key) the database's sealed secrets and signed tokens were
// made under, so that a process given another key refuses to start
// instead of failing on every secret another replica sealed.
const SettingSecretKeyCheck = "secret_key_check"

// SettingStore keeps the few settings of the gateway itself that every
// process sharing the database must agree on.
type SettingStore interface {
	// ClaimSetting stores value under name when nothing is stored there
	// yet, and returns what name holds afterwards: value, or the value
	// another process stored first.
	ClaimSetting(ctx context.Context, name, value string) (string, error)
}
