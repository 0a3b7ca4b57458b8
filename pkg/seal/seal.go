// Package seal authenticates the records fleetbench keeps in tenants' namespaces (results,
// replaced runners' results, kept comparison records, runner capacity): a tenant can write any
// ConfigMap there, so the manager reads back only what carries a MAC made with a key that only
// it holds. A record is checked before a byte of it is decoded; one that fails is refused whole.
package seal

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Annotation holds a record's MAC.
const Annotation = "fleetbench.dev/seal"

// MinKeyBytes is the shortest key accepted: HMAC-SHA256's own block of security.
const MinKeyBytes = 32

// MaxRecordBytes bounds what Verify hashes: the API server stores no ConfigMap over 1 MiB, so a
// larger one is not a record the manager wrote.
const MaxRecordBytes = 1 << 20

// version is hashed first, so a change of the layout below never verifies an older MAC.
const version = "fleetbench-seal-v1"

var (
	// ErrUnsealed: the record carries no MAC (written by someone else, or by a fleetbench
	// older than sealing).
	ErrUnsealed = errors.New("it carries no seal of this operator")
	// ErrTampered: the MAC does not match: someone changed the record, or copied it from
	// another name, namespace or run.
	ErrTampered = errors.New("its seal does not match its content: it was changed outside the operator")
	// ErrTooLarge: the record is larger than any the manager writes.
	ErrTooLarge = errors.New("it is larger than any record the operator writes")
)

// Key is the manager's secret.
type Key []byte

// NewKey is a fresh random key, for a manager that was given none (tests, make run).
func NewKey() Key {
	k := make(Key, MinKeyBytes)
	if _, err := rand.Read(k); err != nil {
		panic(err) // crypto/rand does not fail on a supported platform
	}
	return k
}

// ParseKey checks a key read from a file.
func ParseKey(raw []byte) (Key, error) {
	if len(raw) < MinKeyBytes {
		return nil, fmt.Errorf("the record key has %d bytes, at least %d are needed", len(raw), MinKeyBytes)
	}
	return Key(slices.Clone(raw)), nil
}

// Seal sets cm's MAC over its namespace, name, controller and data. Call it last, right before
// the write: any later change to those makes the record fail Verify.
func (k Key) Seal(cm *corev1.ConfigMap) {
	if cm.Annotations == nil {
		cm.Annotations = map[string]string{}
	}
	cm.Annotations[Annotation] = base64.StdEncoding.EncodeToString(k.mac(cm))
}

// Verify says whether cm is a record this key sealed, unchanged. Its size is checked before
// anything is hashed.
func (k Key) Verify(cm *corev1.ConfigMap) error {
	if Size(cm) > MaxRecordBytes {
		return ErrTooLarge
	}
	got, ok := cm.Annotations[Annotation]
	if !ok {
		return ErrUnsealed
	}
	want := k.mac(cm)
	raw, err := base64.StdEncoding.DecodeString(got)
	if err != nil || !hmac.Equal(raw, want) {
		return ErrTampered
	}
	return nil
}

// Size is the bytes of cm's data.
func Size(cm *corev1.ConfigMap) int {
	n := 0
	for key, v := range cm.Data {
		n += len(key) + len(v)
	}
	for key, v := range cm.BinaryData {
		n += len(key) + len(v)
	}
	return n
}

// mac covers everything that makes a record what it is: where it lives, which run controls it
// (a record copied to a new run of the same name does not verify), and every key and value.
// Each part is length-prefixed, so no two layouts hash alike.
func (k Key) mac(cm *corev1.ConfigMap) []byte {
	h := hmac.New(sha256.New, k)
	field(h, version)
	field(h, cm.Namespace)
	field(h, cm.Name)
	owner := ""
	if ref := metav1.GetControllerOfNoCopy(cm); ref != nil {
		owner = string(ref.UID)
	}
	field(h, owner)
	for _, key := range sortedKeys(cm.Data) {
		field(h, "d")
		field(h, key)
		field(h, cm.Data[key])
	}
	for _, key := range sortedKeys(cm.BinaryData) {
		field(h, "b")
		field(h, key)
		field(h, string(cm.BinaryData[key]))
	}
	return h.Sum(nil)
}

func field(h hash.Hash, s string) {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(s)))
	h.Write(n[:])
	h.Write([]byte(s))
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Refused says whether err is Verify's refusal of a record (rather than, say, the API server's).
func Refused(err error) bool {
	return errors.Is(err, ErrUnsealed) || errors.Is(err, ErrTampered) || errors.Is(err, ErrTooLarge)
}
