package edit

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"fmt"
	"io"
)

// EncodeBase packs the text the user started from into a hidden form field. It
// travels with the form (clusterdesk keeps no state between requests, so any
// replica can answer) and is only ever used to show what changed on the server
// after a conflict and to rebase: it is compressed because YAML shrinks about
// tenfold, leaving the request's 1 MiB for the user's text.
func EncodeBase(text string) string {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	_, _ = zw.Write([]byte(text))
	_ = zw.Close()
	return base64.RawURLEncoding.EncodeToString(buf.Bytes())
}

// DecodeBase unpacks a field written by EncodeBase. The field comes from the
// browser: it stops decompressing at MaxText and then returns ErrBaseTooLarge
// (a gzip stream expands a thousandfold, so the body limit alone bounds nothing).
func DecodeBase(field string) (string, error) {
	raw, err := base64.RawURLEncoding.DecodeString(field)
	if err != nil {
		return "", fmt.Errorf("the form's starting version is damaged: %w", err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return "", fmt.Errorf("the form's starting version is damaged: %w", err)
	}
	out, err := io.ReadAll(io.LimitReader(zr, MaxText+1))
	if err != nil {
		return "", fmt.Errorf("the form's starting version is damaged: %w", err)
	}
	if len(out) > MaxText {
		return "", ErrBaseTooLarge
	}
	return string(out), nil
}
