package config

import (
	"fmt"

	"github.com/mcpgate/mcpgate"
)

// userFields are the fields of an entry under users.
var userFields = []string{"name", "password", "admin"}

// users reads the users section.
func (d *decoder) users(top *fields) []*User {
	var out []*User
	firstLine := map[string]int{}
	for i, n := range d.seq(top, "users") {
		f := d.fields(n, fmt.Sprintf("users[%d]", i), userFields)
		if f == nil {
			continue
		}
		u := &User{Name: d.required(f, "name", "the user's login name"), Admin: d.boolean(f, "admin", false)}
		u.password = d.password(f)
		if u.Name == "" {
			continue
		}
		at := f.lineNode("name")
		if p := mcpgate.CheckUserName(u.Name); p != nil {
			d.errorf(at, f.field("name"), "%s", p.Msg)
		} else if line, dup := firstLine[u.Name]; dup {
			d.errorf(at, f.field("name"), "user %q is declared twice (first at line %d)", u.Name, line)
		} else {
			firstLine[u.Name] = at.Line
		}
		out = append(out, u)
	}
	return out
}

// password returns the user's password with its ${env:NAME} references
// expanded, nil when the file sets none.
func (d *decoder) password(f *fields) *string {
	n := d.scalar(f, "password", "text or ${env:NAME}")
	if n == nil {
		return nil
	}
	pw, err := mcpgate.ExpandSecrets(n.Value, d.lookup)
	if err != nil {
		d.errorf(f.keys["password"], f.field("password"), "%s", mcpgate.ErrorMessage(err))
		return nil
	}
	if pw == "" {
		d.errorf(f.keys["password"], f.field("password"), "is empty; leave it out for a user who signs in without a password")
		return nil
	}
	return &pw
}
