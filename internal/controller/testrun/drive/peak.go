package drive

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	"fleetbench.dev/fleetbench/internal/controller/testrun/runio"
	"fleetbench.dev/fleetbench/pkg/judge"
	"fleetbench.dev/fleetbench/pkg/runners"
)

// stepGrace is how long after a step's hold ends it is judged: the runners' live envelopes
// hold its last window at once; the grace covers clock skew between nodes.
const stepGrace = time.Second

// evaluatePeak judges, in order, every step of a peak test whose hold has ended, on the
// runners' merged live windows, and records the climb in status.peak. It returns why the
// runners must stop (a stop rule fired on a step) and when the next step is due.
func (r *Stage) evaluatePeak(ctx context.Context, s *decide.Scope) (stop string, next time.Duration) {
	run := s.Run
	if run.Spec.Type != v1alpha1.TestTypePeak || s.StartTime() == nil {
		return "", 0
	}
	// A copy, decided: the climb so far and the steps judged now.
	p := s.Peak().DeepCopy()
	if p == nil {
		p = &v1alpha1.PeakResult{}
	}
	s.Decided.Peak = p
	switch p.BreakingPoint {
	case v1alpha1.PeakReached:
		return peakStopMessage(p), 0
	case v1alpha1.PeakNotReached:
		return "", 0
	}
	steps, err := runners.PeakSteps(&run.Spec)
	if err != nil || len(p.Steps) >= len(steps) {
		return "", 0 // the load config refused such a climb before the start
	}
	start := s.StartTime().Time
	var due []runners.PeakStep
	for _, st := range steps[len(p.Steps):] {
		if at := start.Add(st.To + stepGrace); s.Now.Before(at) {
			next = at.Sub(s.Now)
			break
		}
		due = append(due, st)
	}
	if len(due) == 0 {
		return "", next
	}
	envs, err := r.liveEnvelopes(ctx, s, start.Add(due[len(due)-1].To+stepGrace))
	if errors.Is(err, runio.ErrPending) {
		return "", runio.LiveLimit // its end wakes the run
	}
	if err != nil {
		logf.FromContext(ctx).Info("reading the runners' live results failed; trying again", "error", err.Error())
		return "", 2 * time.Second
	}
	for _, st := range due {
		m := judge.MeasureStep(envs, start.Add(st.From), start.Add(st.To))
		rule := judge.StopRule(run.Spec.Peak.StopWhen, m)
		p.Steps = append(p.Steps, v1alpha1.PeakStepResult{Devices: st.Devices, Requests: int64(m.Requests),
			RequestsPerSecond: fmt.Sprintf("%.2f", m.RequestsPerSecond), DroppedPercent: fmt.Sprintf("%.2f", m.DroppedPercent),
			ErrorPercent: fmt.Sprintf("%.2f", m.ErrorPercent), P95: judge.Millis(m.P95Millis), Held: rule == ""})
		if rule == "" {
			p.LastHeldDevices = st.Devices
			continue
		}
		at := metav1.NewTime(s.Now)
		p.BreakingPoint, p.FirstFailedDevices, p.StopRule, p.StopRequestTime = v1alpha1.PeakReached, st.Devices, rule, &at
		c := s.Capacity().DeepCopy()
		if c == nil {
			c = &v1alpha1.CapacityResult{}
		}
		c.BreakingPointDevices = p.LastHeldDevices
		s.Decided.Capacity = c
		r.Recorder.Eventf(run, nil, corev1.EventTypeNormal, "BreakingPoint", "Peak", "%s", peakStopMessage(p))
		return peakStopMessage(p), 0
	}
	if len(p.Steps) == len(steps) {
		p.BreakingPoint = v1alpha1.PeakNotReached
	}
	return "", next
}

func peakStopMessage(p *v1alpha1.PeakResult) string {
	return fmt.Sprintf("the breaking point is reached: the step of %d devices broke (%s), the last that held had %d",
		p.FirstFailedDevices, p.StopRule, p.LastHeldDevices)
}
