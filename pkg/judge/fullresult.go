package judge

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
)

// Keys of the full result in the TestRun's results ConfigMap (status.results.fullResult).
const (
	// SummaryKey holds the merged result in k6's end-of-test summary shape (K6Summary).
	SummaryKey = "summary.json.gz"
	// TimelineKey holds the run over time (Timeline).
	TimelineKey = "timeline.json.gz"
)

// maxFullResultBytes bounds what DecodeGzipJSON inflates: a ConfigMap holds at most 1 MiB
// gzipped, and the result compresses well but not without limit.
const maxFullResultBytes = 64 << 20

// EncodeGzipJSON is how the full result's parts are stored.
func EncodeGzipJSON(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	if _, err := zw.Write(raw); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return z.Bytes(), nil
}

// DecodeGzipJSON reads a part of the full result into v.
func DecodeGzipJSON(data []byte, v any) error {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("the full result is not gzip: %w", err)
	}
	raw, err := io.ReadAll(io.LimitReader(zr, maxFullResultBytes+1))
	if err != nil {
		return fmt.Errorf("inflating the full result: %w", err)
	}
	if len(raw) > maxFullResultBytes {
		return fmt.Errorf("the full result inflates past %d MiB", maxFullResultBytes>>20)
	}
	return json.Unmarshal(raw, v)
}
