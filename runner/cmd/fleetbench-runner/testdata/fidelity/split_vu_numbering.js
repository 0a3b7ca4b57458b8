// Source: k6 documentation, "Execution context variables": __VU and __ITER (https://grafana.com/docs/k6/latest/using-k6/execution-context-variables/).
// Covers: a documented difference. The script branches on __VU and __ITER; each runner numbers its own VUs from 1,
// so split over 3 runners three VUs are "VU 1" and do VU 1's extra work, as three plain k6 processes do.
// fidelity: split-differs
import http from 'k6/http';
import { check } from 'k6';

export const options = {
  scenarios: {
    users: { executor: 'per-vu-iterations', vus: 3, iterations: 10, maxDuration: '30s' },
  },
  thresholds: {
    'http_reqs{role:admin}': ['count==10'], // one k6: passes; split over 3: 30, fails
    checks: ['rate==1'],
  },
};

export default function () {
  if (__VU === 1) {
    // VU 1 plays the admin.
    http.get(`${__ENV.TARGET}/items`, { tags: { role: 'admin' } });
  }
  const res = http.get(`${__ENV.TARGET}/ok`, { tags: { role: 'user' } });
  if (__ITER === 0) {
    check(res, { 'first visit ok': (r) => r.status === 200 });
  }
}
