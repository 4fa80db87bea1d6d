package procs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestStopEndsProcessAndLogsOutput(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "child.log")
	p := &Proc{Name: "sleeper", Path: "/bin/sh", Args: []string{"-c", "echo hello; exec sleep 60"}, LogPath: logPath}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	if !p.Running() {
		t.Fatal("not running after Start")
	}
	// Its output reaches the log while it runs. Waited for, not slept on: a
	// loaded CI machine took longer than the 200 ms this test slept to run
	// the shell's echo, and Stop then ended it first (stop 60).
	waitForLog(t, logPath, "hello")
	if err := p.Stop(2 * time.Second); err != nil {
		t.Fatal(err)
	}
	if p.Running() {
		t.Fatal("still running after Stop")
	}
	data, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "hello") {
		t.Errorf("log = %q, want the child's output", data)
	}
}

func TestStopKillsProcessIgnoringSIGTERM(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "log")
	p := &Proc{Name: "stubborn", Path: "/bin/sh", Args: []string{"-c", "trap '' TERM; echo trapped; while :; do sleep 0.05; done"}, LogPath: logPath}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	// Only once the shell ignores SIGTERM does Stop have to kill it: before,
	// SIGTERM alone would end it and this test would prove nothing.
	waitForLog(t, logPath, "trapped")
	start := time.Now()
	if err := p.Stop(300 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if elapsed := time.Since(start); elapsed > 3*time.Second {
		t.Errorf("Stop took %s", elapsed)
	}
}

// waitForLog waits up to 10 s for the log at path to contain want.
func waitForLog(t *testing.T, path, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		data, err := os.ReadFile(path)
		if err == nil && strings.Contains(string(data), want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s does not contain %q after 10 s: %q (%v)", path, want, data, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A process gets devcluster's environment with its own Env on top.
func TestEnvIsAddedToDevclustersOwn(t *testing.T) {
	t.Setenv("DEVCLUSTER_PROCS_TEST_INHERITED", "inherited")
	t.Setenv("GOGC", "100")
	logPath := filepath.Join(t.TempDir(), "child.log")
	p := &Proc{Name: "env", Path: "/bin/sh", Args: []string{"-c", `echo "gogc=$GOGC $DEVCLUSTER_PROCS_TEST_INHERITED"`}, LogPath: logPath, Env: []string{"GOGC=200"}}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	<-p.Done()
	if err := p.Err(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "gogc=200 inherited") {
		t.Errorf("log = %q, want GOGC from Env and the rest inherited", data)
	}
}
