// Source: k6 documentation, "Constant arrival rate" executor (https://grafana.com/docs/k6/latest/using-k6/scenarios/executors/constant-arrival-rate/).
// Covers: a constant-arrival-rate scenario (its count is fixed by rate x duration) with think time, and counter count and rate thresholds.
import http from 'k6/http';
import { sleep } from 'k6';

export const options = {
  scenarios: {
    // An iteration due exactly when the duration ends races k6's deadline (k6 alone counts 59 to
    // 61 for 60/s over 1s under load), so the duration ends half a tick after the last one.
    steady: {
      executor: 'constant-arrival-rate', rate: 10, timeUnit: '1s', duration: '3050ms',
      preAllocatedVUs: 6, maxVUs: 12,
    },
  },
  thresholds: {
    iterations: ['count==31', 'rate>1'],
    http_reqs: ['rate<100000', 'count<10'], // the second fails
    http_req_failed: ['rate==0'],
  },
};

export default function () {
  http.get(`${__ENV.TARGET}/ok`);
  sleep(0.05);
}
