package postgres

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/mcpgate/mcpgate/sqlstore"
)

func TestViolation(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want sqlstore.Violation
	}{
		{"unique", &pgconn.PgError{Code: "23505", Detail: `Key (name)=(alice) already exists.`},
			sqlstore.Violation{Kind: sqlstore.UniqueViolation, Columns: []string{"name"}}},
		{"unique pair, wrapped", fmt.Errorf("put: %w", &pgconn.PgError{Code: "23505", Detail: `Key (agent_id, "name")=(a, b) already exists.`}),
			sqlstore.Violation{Kind: sqlstore.UniqueViolation, Columns: []string{"agent_id", "name"}}},
		{"unique without detail", &pgconn.PgError{Code: "23505"},
			sqlstore.Violation{Kind: sqlstore.UniqueViolation}},
		{"foreign key", &pgconn.PgError{Code: "23503"}, sqlstore.Violation{Kind: sqlstore.ForeignKeyViolation}},
		{"other", &pgconn.PgError{Code: "42P01"}, sqlstore.Violation{}},
		{"not postgres", errors.New("boom"), sqlstore.Violation{}},
		{"nil", nil, sqlstore.Violation{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, dialect{}.Violation(tc.err)); diff != "" {
				t.Errorf("Violation (-want +got):\n%s", diff)
			}
		})
	}
}
