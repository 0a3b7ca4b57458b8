package main

import "sync"

// leak keeps LEAK_BYTES_PER_PUSH bytes for every stored push, forever: a deliberate memory
// leak, so a stability run's trend verdict has something real to find. The bytes are written,
// not only allocated: fresh pages the kernel has not had touched do not count in RSS.
type leak struct {
	mu   sync.Mutex
	kept [][]byte
	size int64
}

func (l *leak) keep(n int) {
	if n <= 0 {
		return
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i | 1)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.kept = append(l.kept, b)
	l.size += int64(n)
}

func (l *leak) bytes() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.size
}
