// Package access defines who may use a devcluster: the static-token users of
// the console's tests, their RBAC, and the kubeconfigs that log them in.
package access

import (
	"crypto/rand"
	"encoding/csv"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// User is a devcluster identity that authenticates with a static bearer token.
type User struct {
	Name   string
	Groups []string
	Token  string
}

// Users are the identities the console is tested with: admin may do anything,
// auditor may only read, approver may approve kube-apiserver-client CSRs.
var Users = []User{
	{Name: "admin", Groups: []string{"system:masters"}},
	{Name: "auditor"},
	{Name: "approver"},
}

// EnsureTokenFile returns Users with their tokens, creating the
// kube-apiserver --token-auth-file at path on the first run and reading it
// afterwards, so kubeconfigs handed out earlier keep working.
func EnsureTokenFile(path string) ([]User, error) {
	users, err := readTokenFile(path)
	if err == nil && complete(users) {
		return users, nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	users = make([]User, len(Users))
	for i, u := range Users {
		u.Token, err = newToken()
		if err != nil {
			return nil, err
		}
		users[i] = u
	}
	return users, writeTokenFile(path, users)
}

// Find returns the user called name.
func Find(users []User, name string) (User, error) {
	for _, u := range users {
		if u.Name == name {
			return u, nil
		}
	}
	return User{}, fmt.Errorf("no devcluster user %q", name)
}

func complete(users []User) bool {
	for _, want := range Users {
		if _, err := Find(users, want.Name); err != nil {
			return false
		}
	}
	return true
}

// writeTokenFile writes the format kube-apiserver expects: token,user,uid,"group1,group2".
func writeTokenFile(path string, users []User) error {
	var b strings.Builder
	w := csv.NewWriter(&b)
	for _, u := range users {
		row := []string{u.Token, u.Name, u.Name}
		if len(u.Groups) > 0 {
			row = append(row, strings.Join(u.Groups, ","))
		}
		if err := w.Write(row); err != nil {
			return err
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(b.String()), 0o600)
}

func readTokenFile(path string) ([]User, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	rows, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	users := make([]User, 0, len(rows))
	for _, row := range rows {
		if len(row) < 3 {
			return nil, fmt.Errorf("%s: want token,user,uid[,groups], got %d fields", path, len(row))
		}
		u := User{Token: row[0], Name: row[1]}
		if len(row) > 3 && row[3] != "" {
			u.Groups = strings.Split(row[3], ",")
		}
		users = append(users, u)
	}
	return users, nil
}

func newToken() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}
