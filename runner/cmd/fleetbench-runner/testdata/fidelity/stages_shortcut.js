// Source: k6 documentation, options reference, "Stages" (https://grafana.com/docs/k6/latest/using-k6/k6-options/reference/#stages).
// Covers: the top-level stages shortcut (a ramping-vus default scenario) with a ramp to 2 VUs and down; iterations of 0.9 s.
import http from 'k6/http';
import { check, sleep } from 'k6';

export const options = {
  stages: [
    { duration: '1s', target: 2 },
    { duration: '1500ms', target: 2 },
    { duration: '500ms', target: 0 },
  ],
  thresholds: {
    checks: ['rate==1'],
  },
};

export default function () {
  const res = http.get(`${__ENV.TARGET}/items`);
  check(res, { 'listed': (r) => r.status === 200 });
  sleep(0.9);
}
