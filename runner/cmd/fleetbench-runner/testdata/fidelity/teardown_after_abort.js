// Source: k6 documentation, "Thresholds": abortOnFail, and "Test lifecycle": teardown() (https://grafana.com/docs/k6/latest/using-k6/thresholds/#abort-a-test-when-a-threshold-is-crossed, https://grafana.com/docs/k6/latest/using-k6/test-lifecycle/).
// Covers: an abortOnFail threshold that trips mid-test, after which k6 still runs teardown() once: its request and check show it.
// k6 stops when the threshold trips, so its counts depend on that moment: compared on verdicts only.
// fidelity: cluster
// fidelity: verdicts-only
import http from 'k6/http';
import { check, sleep } from 'k6';

export const options = {
  scenarios: {
    orders: { executor: 'per-vu-iterations', vus: 2, iterations: 40, maxDuration: '30s' },
  },
  thresholds: {
    // Every request fails: trips at k6's first threshold evaluation, after about 2 s.
    http_req_failed: [{ threshold: 'rate<0.5', abortOnFail: true }],
    'checks{check:teardown ran}': ['rate==1'],
  },
};

export default function () {
  http.get(`${__ENV.TARGET}/fail`);
  sleep(0.1);
}

export function teardown() {
  const res = http.post(`${__ENV.TARGET}/logout`);
  check(res, { 'teardown ran': (r) => r.status === 204 });
}
