// Source: k6 documentation, "Constant VUs" executor (https://grafana.com/docs/k6/latest/using-k6/scenarios/executors/constant-vus/).
// Covers: a constant-vus scenario: 3 VUs for 2 s, an iteration every 0.8 s, so each VU starts three (0, 0.8, 1.6 s), far from the end.
import http from 'k6/http';
import { sleep } from 'k6';

export const options = {
  scenarios: {
    steady: { executor: 'constant-vus', vus: 3, duration: '2s' },
  },
  thresholds: {
    iterations: ['count==9'],
    http_req_duration: ['p(95)<5000'],
  },
};

export default function () {
  http.get(`${__ENV.TARGET}/ok`);
  sleep(0.8);
}
