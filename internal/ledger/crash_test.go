package ledger_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

// crashChildEnv names the database the test binary, started again as a child,
// appends to until it is killed.
const crashChildEnv = "LEDGER_CRASH_CHILD_DSN"

// crashChild appends batches of 400 (the API server's batch) forever and says
// "acked <first> <last>" after each Append returned: what the API server would
// have been told is stored.
func crashChild(dsn string) {
	ctx := context.Background()
	s, err := ledger.Open(ctx, dsn, ledger.Options{})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	for b := 0; ; b++ {
		batch := make([]ledger.Entry, 400)
		for i := range batch {
			batch[i] = entry(fmt.Sprintf("b%06d-%03d", b, i), b)
		}
		if _, err := s.Append(ctx, batch); err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Printf("acked %d\n", b)
	}
}

// TestKilledWriterLosesNothingAcknowledged kills (SIGKILL) a process in the
// middle of appending and reopens the ledger: every batch whose Append had
// returned is there, whole.
func TestKilledWriterLosesNothingAcknowledged(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), crashChildEnv+"="+dsn)
		cmd.Stderr = os.Stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		acked := -1
		lines := bufio.NewScanner(out)
		for lines.Scan() {
			line := lines.Text()
			if strings.HasPrefix(line, "error") {
				t.Fatalf("child: %s", line)
			}
			if _, err := fmt.Sscanf(line, "acked %d", &acked); err != nil {
				t.Fatalf("child said %q", line)
			}
			if acked == 9 { // ten batches acknowledged, the eleventh under way
				break
			}
		}
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		// Lines the child wrote before it died are acknowledgements too.
		for lines.Scan() {
			fmt.Sscanf(lines.Text(), "acked %d", &acked)
		}
		if acked < 9 {
			t.Fatalf("the child acknowledged %d batches", acked+1)
		}

		s := open(t, dsn, ledger.Options{})
		for b := 0; b <= acked; b++ {
			p := query(t, s, ledger.Query{Since: t0.Add(secs(b)), Until: t0.Add(secs(b + 1)), Limit: ledger.MaxLimit})
			if len(p.Entries) != 400 {
				t.Errorf("batch %d: %d of its 400 entries after the crash", b, len(p.Entries))
			}
		}
		st, err := s.Stats(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if st.Entries%400 != 0 {
			t.Errorf("%d entries: a batch was stored in part", st.Entries)
		}
	})
}
