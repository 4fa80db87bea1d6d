// Package testpg starts a throwaway PostgreSQL server for tests: initdb in a
// temporary directory, postgres listening on a Unix socket there (no port to
// collide with another engineer's or CI's), a database per test, everything
// removed at Stop. It uses Debian's PostgreSQL binaries (`make postgres`
// installs them) and fails, never skips, when they are missing: a test that
// quietly does not run on PostgreSQL proves nothing about it.
//
// Test-only: cmd/clusterdesk must not link it (internal/importrules).
package testpg

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
)

// Server is one running PostgreSQL.
type Server struct {
	dir    string // data in dir/data, the socket in dir
	bin    string
	cred   *syscall.Credential
	admin  *sql.DB
	nextDB int
}

// port only names the socket file (.s.PGSQL.<port>): nothing listens on TCP.
const port = "5432"

// Start initialises and starts a server. PostgreSQL refuses to run as root,
// so as root (CI, the developers' machines) it runs as the postgres user
// Debian's package creates.
func Start() (*Server, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "testpg-")
	if err != nil {
		return nil, err
	}
	s := &Server{dir: dir, bin: bin}
	if os.Geteuid() == 0 {
		if s.cred, err = postgresUser(); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		if err := os.Chown(dir, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	if err := s.start(); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

func (s *Server) start() error {
	data := filepath.Join(s.dir, "data")
	if out, err := s.run("initdb", "-D", data, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C"); err != nil {
		return fmt.Errorf("testpg: initdb: %w\n%s", err, out)
	}
	// fsync off: a test server need not survive a power cut; it makes initdb's
	// and every commit's cost the CPU's, not the disk's.
	opts := "-c listen_addresses='' -c unix_socket_directories=" + s.dir + " -p " + port +
		" -c fsync=off -c full_page_writes=off -c max_connections=100 -c shared_buffers=128MB"
	if out, err := s.run("pg_ctl", "-D", data, "-l", filepath.Join(s.dir, "log"), "-o", opts, "-w", "-t", "60", "start"); err != nil {
		log, _ := os.ReadFile(filepath.Join(s.dir, "log"))
		return fmt.Errorf("testpg: pg_ctl start: %w\n%s\n%s", err, out, log)
	}
	admin, err := sql.Open("pgx", s.dsn("postgres"))
	if err != nil {
		return err
	}
	s.admin = admin
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return admin.PingContext(ctx)
}

// NewDatabase creates an empty database and returns its DSN.
func (s *Server) NewDatabase() (string, error) {
	s.nextDB++
	name := "test" + strconv.Itoa(s.nextDB)
	if _, err := s.admin.Exec("CREATE DATABASE " + name); err != nil {
		return "", fmt.Errorf("testpg: %w", err)
	}
	return s.dsn(name), nil
}

// dsn is a postgres:// URL over the server's socket.
func (s *Server) dsn(db string) string {
	return "postgres://postgres@/" + db + "?host=" + s.dir + "&port=" + port + "&sslmode=disable"
}

// Stop stops the server fast and removes its files.
func (s *Server) Stop() error {
	var err error
	if s.admin != nil {
		s.admin.Close()
	}
	if _, statErr := os.Stat(filepath.Join(s.dir, "data", "postmaster.pid")); statErr == nil {
		if out, stopErr := s.run("pg_ctl", "-D", filepath.Join(s.dir, "data"), "-m", "immediate", "-w", "stop"); stopErr != nil {
			err = fmt.Errorf("testpg: pg_ctl stop: %w\n%s", stopErr, out)
		}
	}
	return errors.Join(err, os.RemoveAll(s.dir))
}

// run runs one of PostgreSQL's programs, as the postgres user when root.
func (s *Server) run(name string, args ...string) ([]byte, error) {
	cmd := exec.Command(filepath.Join(s.bin, name), args...)
	cmd.Dir = s.dir
	if s.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	}
	return cmd.CombinedOutput()
}

// binDir finds initdb, pg_ctl and postgres: Debian's newest version first,
// then PATH.
func binDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if isExec(filepath.Join(d, "initdb")) && isExec(filepath.Join(d, "postgres")) && isExec(filepath.Join(d, "pg_ctl")) {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Dir(real), nil
		}
	}
	return "", errors.New("testpg: PostgreSQL's initdb, pg_ctl and postgres not found (/usr/lib/postgresql/*/bin, PATH): run `make postgres`")
}

func version(dir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return v
}

func isExec(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode()&0o111 != 0
}

func postgresUser() (*syscall.Credential, error) {
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("testpg: running as root needs the postgres user (Debian's package makes it): %w", err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err := errors.Join(err1, err2); err != nil {
		return nil, err
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}
