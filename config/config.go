// Package config reads the gateway's YAML config file (users, agents, their
// skills and tools), checks all of it before anything is written, and
// applies it to a store in one transaction, idempotently: applying the same
// file twice changes nothing, and entries the file no longer names are
// removed, but only those the file created (Source config).
//
// Secrets are written as ${env:NAME} and stored as written; the variables
// are read only to check that they are set (and to hash user passwords).
//
// Every problem names the file, the line and the field. The reader only
// reads YAML into the domain types (and checks what only YAML can get
// wrong: types, unknown or repeated keys, aliases); each skill is then
// checked by skilledit.Checker, the same checks the management API and
// the CLI run, and each problem's field is mapped back to its line. Unlike
// the API, the file refuses a ${env:NAME} whose variable is not set.
//
// It depends on the root package, auth (password hashes), skilledit (the
// skill checks), rest (JSON strings), rest/openapi (documents a skill
// names) and the YAML library; it must not import a store implementation,
// registry, netguard or the transport.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/skilledit"
	"go.yaml.in/yaml/v3"
)

// Config is a config file that passed every check, ready to Apply.
type Config struct {
	// File is the name the config was read from, for messages.
	File   string
	Users  []*User
	Agents []*Agent
	// IdempotencyTTL (idempotency_ttl) is how long a call's result is
	// replayed for its idempotency key; 0 when the file sets none.
	IdempotencyTTL mcpgate.Duration
	// CallRetention (call_retention) is how long the audit log keeps a
	// call; 0 when the file sets none.
	CallRetention mcpgate.Duration
}

// User is a user the file declares.
type User struct {
	Name  string
	Admin bool
	// password is the plain password after ${env:NAME} expansion, nil when
	// the file sets none; only its hash is ever stored.
	password *string
}

// HasPassword reports whether the file sets the user's password.
func (u *User) HasPassword() bool { return u.password != nil }

// Agent is an agent the file declares, with its skills.
type Agent struct {
	ID          string
	Name        string
	Description string
	// Owner is the name of the user who owns the agent: one the file
	// declares or one already in the store.
	Owner      string
	MCPEnabled bool
	Skills     []*mcpgate.Skill
	// ownerAt is where the owner is named, to report it missing at apply.
	ownerAt *Error
}

// maxFileBytes bounds the size of a config file.
const maxFileBytes = 4 << 20

// Load reads and checks the config file at path. lookup finds the
// environment variables that ${env:NAME} references name (os.LookupEnv
// when nil). A bad file gives Errors, each naming the line and field.
func Load(path string, lookup mcpgate.LookupFunc) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, mcpgate.Errorf(mcpgate.EINVALID, "read the config file: %v", err)
	}
	return Parse(path, data, lookup)
}

// Parse checks a config file's content; name is used in messages. It is
// Load without the file.
func Parse(name string, data []byte, lookup mcpgate.LookupFunc) (*Config, error) {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	d := &decoder{file: name, lookup: lookup, checker: skilledit.NewChecker()}
	c := &Config{File: name}
	if len(data) > maxFileBytes {
		d.errs = append(d.errs, &Error{File: name, Msg: fmt.Sprintf("the file is larger than %d bytes", maxFileBytes)})
	} else if root := d.document(data); root != nil {
		d.config(root, c)
	}
	if len(d.errs) > 0 {
		errs := d.errs.sorted()
		return nil, errs[:min(len(errs), maxErrors)]
	}
	return c, nil
}

// yamlLine finds the line in the YAML library's error texts.
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// document parses data as one YAML document and returns its root, nil for
// an empty file or a syntax error (recorded).
func (d *decoder) document(data []byte) *yaml.Node {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
		return nil
	} else if err != nil {
		d.syntaxError(err)
		return nil
	}
	var next yaml.Node
	if err := dec.Decode(&next); err == nil {
		d.errorf(&next, "", "the file holds more than one YAML document; keep only one")
		return nil
	} else if !errors.Is(err, io.EOF) {
		d.syntaxError(err)
		return nil
	}
	if len(doc.Content) == 0 || !d.checkNodes(&doc) {
		return nil
	}
	return doc.Content[0]
}

// syntaxError records a YAML syntax error with its line.
func (d *decoder) syntaxError(err error) {
	e := &Error{File: d.file, Msg: err.Error()}
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		e.Line, _ = strconv.Atoi(m[1])
		e.Msg = m[2]
	}
	d.errs = append(d.errs, e)
}

// config reads the top level of the file.
func (d *decoder) config(root *yaml.Node, c *Config) {
	f := d.fields(root, "", []string{"users", "agents", "idempotency_ttl", "call_retention"})
	if f == nil {
		return
	}
	c.IdempotencyTTL, c.CallRetention = d.duration(f, "idempotency_ttl"), d.duration(f, "call_retention")
	c.Users = d.users(f)
	c.Agents = d.agents(f, c.Users)
}
