package memlimit

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
)

// files is a ReadFile over a map: a missing name does not exist.
func files(m map[string]string) ReadFile {
	return func(name string) ([]byte, error) {
		if s, ok := m[name]; ok {
			return []byte(s), nil
		}
		return nil, fs.ErrNotExist
	}
}

func TestDecide(t *testing.T) {
	const mi = int64(1) << 20
	for _, tc := range []struct {
		name       string
		gomemlimit string
		files      map[string]string
		wantSet    bool
		wantSoft   int64
		wantSource string
		wantErr    bool
	}{
		{name: "v2 limit of the chart's 512Mi", files: map[string]string{V2File: "536870912\n"},
			wantSet: true, wantSoft: 429496720, wantSource: V2File}, // 409.6 MiB, to 100 bytes
		{name: "v2 without limit", files: map[string]string{V2File: "max\n"}, wantSource: V2File},
		{name: "v2 wins over v1", files: map[string]string{V2File: "1073741824", V1File: "536870912"},
			wantSet: true, wantSoft: 1024 * mi / 100 * 80, wantSource: V2File},
		{name: "v1 limit", files: map[string]string{V1File: "268435456\n"},
			wantSet: true, wantSoft: 256 * mi / 100 * 80, wantSource: V1File},
		{name: "v1 without limit (largest page-aligned int64)", files: map[string]string{V1File: "9223372036854771712\n"}, wantSource: V1File},
		{name: "no cgroup files: not in a container", files: map[string]string{}},
		{name: "GOMEMLIMIT wins over the container", gomemlimit: "300MiB", files: map[string]string{V2File: "536870912"}, wantSource: "GOMEMLIMIT"},
		{name: "GOMEMLIMIT=off wins too", gomemlimit: "off", files: map[string]string{V2File: "536870912"}, wantSource: "GOMEMLIMIT"},
		{name: "garbage in memory.max", files: map[string]string{V2File: "lots"}, wantSource: V2File, wantErr: true},
		{name: "zero in memory.max", files: map[string]string{V2File: "0"}, wantSource: V2File, wantErr: true},
		{name: "negative in v1", files: map[string]string{V1File: "-1"}, wantSource: V1File, wantErr: true},
		{name: "empty memory.max", files: map[string]string{V2File: ""}, wantSource: V2File, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(tc.gomemlimit, files(tc.files))
			if d.Set != tc.wantSet || d.Soft != tc.wantSoft || d.Source != tc.wantSource || (d.Err != nil) != tc.wantErr {
				t.Errorf("Decide = set %v soft %d source %q error %v, want set %v soft %d source %q error %v", d.Set, d.Soft, d.Source, d.Err, tc.wantSet, tc.wantSoft, tc.wantSource, tc.wantErr)
			}
			if d.String() == "" {
				t.Error("empty log message")
			}
		})
	}
}

// A file that exists but cannot be read is an error, not "no limit".
func TestUnreadableLimitIsAnError(t *testing.T) {
	denied := func(string) ([]byte, error) { return nil, fs.ErrPermission }
	d := Decide("", denied)
	if d.Set || !errors.Is(d.Err, fs.ErrPermission) || d.Source != V2File {
		t.Errorf("Decide = %+v, want no limit set and the permission error from %s", d, V2File)
	}
}

func TestTheLogSaysWhatWasSet(t *testing.T) {
	d := Decide("", files(map[string]string{V2File: "536870912"}))
	if got, want := d.String(), "soft memory limit 409.6 MiB: 80 % of the container's memory limit 512.0 MiB (/sys/fs/cgroup/memory.max)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if got := Decide("1GiB", nil).String(); !strings.Contains(got, "GOMEMLIMIT") {
		t.Errorf("String() = %q, want it to name GOMEMLIMIT", got)
	}
}
