package access

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEnsureTokenFileIsStable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens.csv")
	first, err := EnsureTokenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	second, err := EnsureTokenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != len(Users) {
		t.Fatalf("got %d users, want %d", len(first), len(Users))
	}
	for i := range first {
		if first[i].Token == "" || first[i].Token != second[i].Token {
			t.Errorf("user %s: token %q then %q", first[i].Name, first[i].Token, second[i].Token)
		}
	}
	admin, err := Find(second, "admin")
	if err != nil {
		t.Fatal(err)
	}
	if len(admin.Groups) != 1 || admin.Groups[0] != "system:masters" {
		t.Errorf("admin groups = %v, want [system:masters]", admin.Groups)
	}
}

func TestTokenFileFormat(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens.csv")
	users := []User{
		{Name: "admin", Groups: []string{"system:masters", "ops"}, Token: "t1"},
		{Name: "auditor", Token: "t2"},
	}
	if err := writeTokenFile(path, users); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := "t1,admin,admin,\"system:masters,ops\"\nt2,auditor,auditor\n"
	if string(data) != want {
		t.Errorf("token file =\n%s\nwant\n%s", data, want)
	}
	if _, err := Find(users, "approver"); err == nil || !strings.Contains(err.Error(), "approver") {
		t.Errorf("Find of a missing user: %v", err)
	}
}
