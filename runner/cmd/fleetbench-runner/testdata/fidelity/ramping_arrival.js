// Source: k6 documentation, "Ramping arrival rate" executor (https://grafana.com/docs/k6/latest/using-k6/scenarios/executors/ramping-arrival-rate/).
// Covers: stages, as a ramping-arrival-rate scenario (its iteration total is fixed by the stages), with count and latency thresholds.
import http from 'k6/http';
import { check } from 'k6';

export const options = {
  scenarios: {
    ramp: {
      executor: 'ramping-arrival-rate', startRate: 10, timeUnit: '1s', preAllocatedVUs: 15, maxVUs: 30,
      // The stages' area is 35 + 31.5 + 15 = 81.5 iterations: 81 start, the last about 90 ms
      // before the end. With a whole-number area the last one would be due exactly at the end
      // and race k6's deadline.
      stages: [
        { target: 60, duration: '1s' },
        { target: 60, duration: '525ms' },
        { target: 0, duration: '500ms' },
      ],
    },
  },
  thresholds: {
    iterations: ['count>50', 'count>1000'], // 81 iterations: the second fails
    http_req_duration: ['p(95)<5000', 'med<0.001'],
    checks: ['rate==1'],
  },
};

export default function () {
  const res = http.get(`${__ENV.TARGET}/ok`);
  check(res, { 'status is 200': (r) => r.status === 200 });
}
