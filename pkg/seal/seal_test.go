package seal

import (
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func record() *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "run-results", Namespace: "team-a", OwnerReferences: []metav1.OwnerReference{
			{APIVersion: "fleetbench.dev/v1alpha1", Kind: "TestRun", Name: "run", UID: "uid-1", Controller: ptr.To(true)}}},
		Data:       map[string]string{"target-points.json": `[{"memoryMiB":1}]`},
		BinaryData: map[string][]byte{"timeline.json.gz": {1, 2, 3}},
	}
}

func TestVerify(t *testing.T) {
	key := NewKey()
	cases := []struct {
		name   string
		change func(cm *corev1.ConfigMap)
		key    Key
		want   error
	}{
		{name: "as sealed", change: func(*corev1.ConfigMap) {}},
		{name: "a value changed", change: func(cm *corev1.ConfigMap) { cm.Data["target-points.json"] = `[{"memoryMiB":2}]` }, want: ErrTampered},
		{name: "binary data changed", change: func(cm *corev1.ConfigMap) { cm.BinaryData["timeline.json.gz"] = []byte{9} }, want: ErrTampered},
		{name: "a key added", change: func(cm *corev1.ConfigMap) { cm.Data["extra"] = "" }, want: ErrTampered},
		{name: "a key removed", change: func(cm *corev1.ConfigMap) { delete(cm.BinaryData, "timeline.json.gz") }, want: ErrTampered},
		{name: "a value moved from data to binary data", change: func(cm *corev1.ConfigMap) {
			cm.BinaryData["target-points.json"] = []byte(cm.Data["target-points.json"])
			delete(cm.Data, "target-points.json")
		}, want: ErrTampered},
		{name: "copied to another name", change: func(cm *corev1.ConfigMap) { cm.Name = "other-results" }, want: ErrTampered},
		{name: "copied to another namespace", change: func(cm *corev1.ConfigMap) { cm.Namespace = "team-b" }, want: ErrTampered},
		{name: "given to a new run of the same name", change: func(cm *corev1.ConfigMap) { cm.OwnerReferences[0].UID = "uid-2" }, want: ErrTampered},
		{name: "the seal removed", change: func(cm *corev1.ConfigMap) { delete(cm.Annotations, Annotation) }, want: ErrUnsealed},
		{name: "the seal not base64", change: func(cm *corev1.ConfigMap) { cm.Annotations[Annotation] = "%%%" }, want: ErrTampered},
		{name: "another key", change: func(*corev1.ConfigMap) {}, key: NewKey(), want: ErrTampered},
		{name: "past the API server's size", change: func(cm *corev1.ConfigMap) {
			cm.BinaryData["timeline.json.gz"] = []byte(strings.Repeat("x", MaxRecordBytes))
		}, want: ErrTooLarge},
		{name: "other annotations and labels do not matter", change: func(cm *corev1.ConfigMap) {
			cm.Annotations["note"] = "x"
			cm.Labels = map[string]string{"a": "b"}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cm := record()
			key.Seal(cm)
			tc.change(cm)
			verifier := key
			if tc.key != nil {
				verifier = tc.key
			}
			if err := verifier.Verify(cm); !errors.Is(err, tc.want) {
				t.Fatalf("Verify = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestParseKey(t *testing.T) {
	if _, err := ParseKey(make([]byte, MinKeyBytes-1)); err == nil {
		t.Fatal("a key shorter than MinKeyBytes was accepted")
	}
	raw := []byte(strings.Repeat("k", MinKeyBytes))
	k, err := ParseKey(raw)
	if err != nil {
		t.Fatal(err)
	}
	raw[0] = 'x'
	if k[0] != 'k' {
		t.Fatal("ParseKey kept the caller's slice")
	}
}
