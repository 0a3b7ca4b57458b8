// Source: k6 documentation, "Thresholds": abort a test when a threshold is crossed (https://grafana.com/docs/k6/latest/using-k6/thresholds/#abort-a-test-when-a-threshold-is-crossed).
// Covers: an abortOnFail threshold that trips mid-test, next to thresholds that pass and fail without aborting.
// k6 stops when the threshold trips, so its counts depend on that moment: compared on verdicts only.
// fidelity: verdicts-only
import http from 'k6/http';
import { check, sleep } from 'k6';
import exec from 'k6/execution';

export const options = {
  scenarios: {
    soak: { executor: 'per-vu-iterations', vus: 3, iterations: 40, maxDuration: '30s' },
  },
  thresholds: {
    // A third of the requests fail: trips at k6's first threshold evaluation, after about 2 s.
    http_req_failed: [{ threshold: 'rate<0.05', abortOnFail: true }],
    http_req_duration: ['p(95)<5000', 'p(95)<0.001'],
    checks: ['rate>0.5'],
    iterations: ['count>0'],
  },
};

export default function () {
  const i = exec.scenario.iterationInTest;
  const res = http.get(`${__ENV.TARGET}${i % 3 === 0 ? '/fail' : '/ok'}`);
  check(res, { 'status is 200': (r) => r.status === 200 });
  sleep(0.1);
}
