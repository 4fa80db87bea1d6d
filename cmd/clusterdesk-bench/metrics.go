package main

import (
	"bufio"
	"bytes"
	"context"
	"strconv"
	"strings"

	"k8s.io/client-go/kubernetes"
)

// watches reads the API server's open WATCH requests from its /metrics: all of
// them, and those on the CSR resource. clusterdesk's share is the difference to
// a reading taken before it started (the controller manager holds watches too).
func watches(ctx context.Context, cs kubernetes.Interface) (all, csrs int, err error) {
	raw, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return 0, 0, err
	}
	s := bufio.NewScanner(bytes.NewReader(raw))
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		line := s.Text()
		if !strings.HasPrefix(line, "apiserver_longrunning_requests{") || !strings.Contains(line, `verb="WATCH"`) {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		all += int(v)
		if strings.Contains(line, `resource="certificatesigningrequests"`) {
			csrs += int(v)
		}
	}
	return all, csrs, s.Err()
}
