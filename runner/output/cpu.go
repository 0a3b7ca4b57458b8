package output

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cpuMeter reads the process's own CPU time via getrusage, which includes
// all threads and is cheap enough to call every couple of seconds.
type cpuMeter struct {
	startUser, startSys time.Duration
	last                time.Duration
}

func rusage() (user, sys time.Duration, maxRSS int64) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0, 0
	}
	// Linux reports ru_maxrss in KiB.
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano()), ru.Maxrss * 1024
}

func newCPUMeter() cpuMeter {
	u, s, _ := rusage()
	return cpuMeter{startUser: u, startSys: s, last: u + s}
}

// delta returns CPU seconds since the previous call.
func (m *cpuMeter) delta() float64 {
	u, s, _ := rusage()
	d := u + s - m.last
	m.last = u + s
	return d.Seconds()
}

// totals returns CPU seconds since Start and the peak RSS so far.
func (m *cpuMeter) totals() (user, sys float64, maxRSS int64) {
	u, s, rss := rusage()
	return (u - m.startUser).Seconds(), (s - m.startSys).Seconds(), rss
}

// residentBytes is the process's resident memory now (/proc/self/statm's second field, in
// pages): unlike ru_maxrss it falls when memory is returned, so a trend can be fitted to it.
// 0 where it cannot be read.
func residentBytes() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	return parseStatm(string(b), int64(os.Getpagesize()))
}

// parseStatm reads the resident pages of a /proc/<pid>/statm line in bytes.
func parseStatm(statm string, pageSize int64) int64 {
	f := strings.Fields(statm)
	if len(f) < 2 {
		return 0
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil || pages < 0 {
		return 0
	}
	return pages * pageSize
}

// usableCores is the cgroup v2 CPU quota if one is set (a pod's CPU limit),
// else the number of CPUs.
func usableCores() float64 {
	if b, err := os.ReadFile("/sys/fs/cgroup/cpu.max"); err == nil {
		f := strings.Fields(string(b))
		if len(f) == 2 && f[0] != "max" {
			quota, err1 := strconv.ParseFloat(f[0], 64)
			period, err2 := strconv.ParseFloat(f[1], 64)
			if err1 == nil && err2 == nil && period > 0 {
				return quota / period
			}
		}
	}
	return float64(runtime.NumCPU())
}
