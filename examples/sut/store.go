package main

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
)

// Store is where the device backend keeps devices and their pushes: PostgreSQL or MariaDB/MySQL
// (sqlStore) in real runs, memory (memStore) when DATABASE_URL is empty and in unit tests.
type Store interface {
	// Init creates the tables if they are missing; called until it succeeds.
	Init(ctx context.Context) error
	// Register records a device (and its config when not nil); created is false when the
	// device was already known.
	Register(ctx context.Context, device string, config json.RawMessage) (created bool, err error)
	// Known tells whether the device has registered.
	Known(ctx context.Context, device string) (bool, error)
	// Push stores one row: device, payload (a JSON object) and the time it was received.
	Push(ctx context.Context, device string, payload json.RawMessage) error
	// Config returns the device's stored config, or nil when it has none.
	Config(ctx context.Context, device string) (json.RawMessage, error)
	// Ping tells whether the database answers.
	Ping(ctx context.Context) error
	Close() error
}

// memKeep is how many pushes the memory store remembers by default (PUSH_HISTORY), so that a
// long stability run against it does not look like a memory leak: once the ring is full, the
// store's memory holds.
const memKeep = 10000

type memPush struct {
	Device  string
	Payload json.RawMessage
}

// memStore keeps everything in process memory: the last keep pushes and every device.
type memStore struct {
	mu      sync.Mutex
	devices map[string]json.RawMessage // device -> config (nil: none)
	pushes  []memPush                  // ring of the last keep pushes
	keep    int
	next    int
	total   int64
	pingErr error // tests set this to make Ping fail
}

func newMemStore() *memStore { return newMemStoreKeeping(memKeep) }

func newMemStoreKeeping(keep int) *memStore {
	return &memStore{devices: map[string]json.RawMessage{}, keep: keep}
}

func (m *memStore) Init(context.Context) error { return nil }

func (m *memStore) Register(_ context.Context, device string, config json.RawMessage) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, known := m.devices[device]
	if config != nil {
		m.devices[device] = append(json.RawMessage(nil), config...)
	} else if !known {
		m.devices[device] = nil
	}
	return !known, nil
}

func (m *memStore) Known(_ context.Context, device string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.devices[device]
	return ok, nil
}

func (m *memStore) Push(_ context.Context, device string, payload json.RawMessage) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := memPush{Device: device, Payload: append(json.RawMessage(nil), payload...)}
	if len(m.pushes) < m.keep {
		m.pushes = append(m.pushes, p)
	} else {
		m.pushes[m.next] = p
		m.next = (m.next + 1) % m.keep
	}
	m.total++
	return nil
}

func (m *memStore) Config(_ context.Context, device string) (json.RawMessage, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.devices[device], nil
}

func (m *memStore) Ping(context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.pingErr
}

func (m *memStore) Close() error { return nil }

// stored returns the remembered pushes, oldest first, and the total ever stored.
func (m *memStore) stored() ([]memPush, int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := append([]memPush(nil), m.pushes[m.next:]...)
	return append(out, m.pushes[:m.next]...), m.total
}

var errNotReady = errors.New("database not ready")
