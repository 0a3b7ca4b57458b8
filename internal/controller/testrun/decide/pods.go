package decide

import (
	"fmt"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"fleetbench.dev/fleetbench/pkg/measure"
	"fleetbench.dev/fleetbench/pkg/runners"
)

// What a pod's and a Job's status say, read the same way everywhere.

func Terminated(pod *corev1.Pod) bool {
	return pod != nil && (pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed)
}

func PodCondition(pod *corev1.Pod, typ corev1.PodConditionType) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == typ {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

func PodReady(pod *corev1.Pod) bool {
	c := PodCondition(pod, corev1.PodReady)
	return c != nil && c.Status == corev1.ConditionTrue
}

// ExitOf is the k6 container's exit code and termination reason (OOMKilled, Error, …).
func ExitOf(pod *corev1.Pod) (int32, string) {
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name == runners.ContainerName && cs.State.Terminated != nil {
			return cs.State.Terminated.ExitCode, cs.State.Terminated.Reason
		}
	}
	if pod.Status.Phase == corev1.PodFailed {
		return -1, pod.Status.Reason
	}
	return 0, ""
}

func TerminationText(pod *corev1.Pod) string {
	for _, cs := range pod.Status.InitContainerStatuses {
		if t := cs.State.Terminated; t != nil && t.ExitCode != 0 {
			// A runner made before the wait moved into k6's container (reach-target).
			// The init container's image wrote the message (up to 4 KiB): printable and short.
			return fmt.Sprintf("%s exited with code %d: %s", cs.Name, t.ExitCode, Excerpt(t.Message, maxErrorText))
		}
	}
	exit, reason := ExitOf(pod)
	text := fmt.Sprintf("exited with code %d", exit)
	if meaning := k6ExitMeaning[exit]; meaning != "" {
		text += " (" + meaning + ")"
	} else if exit == exitK6Error {
		text += " (k6's own exit code for an error it reports, not a signal)"
	} else if killedBySignal(exit) {
		text += fmt.Sprintf(" (killed by signal %d)", exit-128)
	}
	if reason != "" {
		text += ", reason " + reason
	}
	switch {
	case exit == measure.ExitTargetUnreachable:
		// The runner's own words, the last line before it exited.
		lines := strings.Split(strings.TrimSpace(TerminatedMessage(pod)), "\n")
		text += ": " + Excerpt(lines[len(lines)-1], maxErrorText)
	case exit != 0 && exit != ExitThresholdsFailed:
		// The kubelet keeps the log's end as the termination message (FallbackToLogsOnError).
		if errs := K6Errors(TerminatedMessage(pod)); errs != "" {
			text += ": " + errs
		}
	}
	return text
}

func TerminatedMessage(pod *corev1.Pod) string {
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name == runners.ContainerName && cs.State.Terminated != nil {
			return cs.State.Terminated.Message
		}
	}
	return ""
}

// maxErrorText bounds the k6 error text a message carries.
const maxErrorText = 800

// K6Errors picks k6's last error lines out of a log tail: the msg of `level=error` and
// `level=fatal` lines (k6's logfmt), the last three, joined, e.g. "could not initialize
// 'test.js': ... Line 4:35 Unexpected token ;".
func K6Errors(log string) string {
	var msgs []string
	for _, line := range strings.Split(log, "\n") {
		if !strings.Contains(line, "level=error") && !strings.Contains(line, "level=fatal") {
			continue
		}
		msg := line
		if i := strings.Index(line, "msg="); i >= 0 {
			msg = line[i+len("msg="):]
			if strings.HasPrefix(msg, `"`) {
				if q, err := strconv.QuotedPrefix(msg); err == nil {
					msg, _ = strconv.Unquote(q)
				}
			}
		}
		// A stack trace's newlines and tabs become single spaces in a one-line message.
		msgs = append(msgs, strings.Join(strings.Fields(msg), " "))
	}
	// The pod wrote it: printable only (no terminal escapes), and short.
	return Excerpt(strings.Join(msgs[max(0, len(msgs)-3):], "; "), maxErrorText)
}

func JobFailed(job *batchv1.Job) string {
	if job == nil {
		return ""
	}
	for _, c := range job.Status.Conditions {
		if c.Type == batchv1.JobFailed && c.Status == corev1.ConditionTrue {
			return c.Reason + ": " + c.Message
		}
	}
	return ""
}

// PendingWhy says why a pod that has not ended is not running yet, as the scheduler and the
// kubelet report it: no node with room, an image that will not come, a container waiting.
// Runner and target messages both read it.
func PendingWhy(pod *corev1.Pod) string {
	if c := PodCondition(pod, corev1.PodScheduled); c != nil && c.Status == corev1.ConditionFalse {
		return c.Reason + ": " + c.Message
	}
	if p := ImageProblem(pod); p != "" {
		return p
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil && w.Reason != "" && w.Reason != "ContainerCreating" {
			return strings.TrimSpace(fmt.Sprintf("container %s: %s %s", cs.Name, w.Reason, w.Message))
		}
	}
	return ""
}

func ImageProblem(pod *corev1.Pod) string {
	for _, cs := range pod.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil && imageMissing[w.Reason] {
			return strings.TrimSpace(fmt.Sprintf("image %s: %s %s", cs.Image, w.Reason, w.Message))
		}
	}
	return ""
}

// exitK6Error is k6's exit code for an error without a code of its own: k6 exits -1, which the
// kernel reports as 255.
const exitK6Error = 255

// killedBySignal says whether an exit code is a shell's 128+n for signal n (1 to 64 on Linux);
// 255 is k6's own error code, not signal 127.
func killedBySignal(exit int32) bool { return exit > 128 && exit <= 128+64 }
