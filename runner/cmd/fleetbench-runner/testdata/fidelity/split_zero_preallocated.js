// Source: k6 documentation, "Constant arrival rate" executor (https://grafana.com/docs/k6/latest/using-k6/scenarios/executors/constant-arrival-rate/), with k6's "Execution segment" option (https://grafana.com/docs/k6/latest/using-k6/k6-options/reference/#execution-segment).
// Covers: a documented difference. preAllocatedVUs: 2 with maxVUs: 6 split over 3 runners gives one runner none of the
// pre-allocated VUs but its third of the arrival rate: it drops iterations until it has allocated a VU, as three plain
// k6 processes with these segments do; one k6 drops none. (With maxVUs: 2 that runner gets no share of the rate at all,
// k6 splits the rate by maxVUs, and the counts match one k6.)
// fidelity: split-differs
import http from 'k6/http';

export const options = {
  scenarios: {
    steady: {
      executor: 'constant-arrival-rate', rate: 10, timeUnit: '1s', duration: '2050ms',
      preAllocatedVUs: 2, maxVUs: 6,
    },
  },
  thresholds: {
    iterations: ['count==21'], // one k6: passes; split over 3: fails when a runner dropped an iteration
    dropped_iterations: ['count<1'],
  },
};

export default function () {
  http.get(`${__ENV.TARGET}/ok`);
}
