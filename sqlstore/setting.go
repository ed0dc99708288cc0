package sqlstore

import (
	"context"
	"fmt"
)

// ClaimSetting stores value under name unless name holds a value already,
// and returns what name holds afterwards. The insert and the read run in
// one transaction, so that of processes claiming at once one wins and all
// return its value.
func (s *Store) ClaimSetting(ctx context.Context, name, value string) (stored string, err error) {
	err = s.withTx(ctx, func(tx *Store) error {
		if _, err := tx.write.ExecContext(ctx, `INSERT INTO settings (name, value, created_at) VALUES ($1, $2, $3)
			ON CONFLICT (name) DO NOTHING`, name, value, micros(now())); err != nil {
			return err
		}
		return tx.write.QueryRowContext(ctx, `SELECT value FROM settings WHERE name = $1`, name).Scan(&stored)
	})
	if err != nil {
		return "", fmt.Errorf("claim setting %s: %w", name, err)
	}
	return stored, nil
}
