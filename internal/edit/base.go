package edit

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"fmt"
	"io"
)

// maxBase bounds a decoded base text: the API server stores objects up to about
// 3 MiB, so more than this is not a text clusterdesk wrote.
const maxBase = 8 << 20

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

// DecodeBase unpacks a field written by EncodeBase.
func DecodeBase(field string) (string, error) {
	raw, err := base64.RawURLEncoding.DecodeString(field)
	if err != nil {
		return "", fmt.Errorf("the form's starting version is damaged: %w", err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return "", fmt.Errorf("the form's starting version is damaged: %w", err)
	}
	out, err := io.ReadAll(io.LimitReader(zr, maxBase+1))
	if err != nil {
		return "", fmt.Errorf("the form's starting version is damaged: %w", err)
	}
	if len(out) > maxBase {
		return "", fmt.Errorf("the form's starting version is larger than %d bytes", maxBase)
	}
	return string(out), nil
}
