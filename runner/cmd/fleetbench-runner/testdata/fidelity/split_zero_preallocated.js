// Source: k6 documentation, "Constant arrival rate" executor (https://grafana.com/docs/k6/latest/using-k6/scenarios/executors/constant-arrival-rate/), with k6's "Execution segment" option (https://grafana.com/docs/k6/latest/using-k6/k6-options/reference/#execution-segment).
// Covers: a documented difference. preAllocatedVUs: 2 and maxVUs: 2 split over 3 runners gives one runner no VU at
// all, so its third of the arrival rate is dropped, as three plain k6 processes with these segments do; one k6 runs it all.
// fidelity: split-differs
import http from 'k6/http';

export const options = {
  scenarios: {
    steady: {
      executor: 'constant-arrival-rate', rate: 10, timeUnit: '1s', duration: '2050ms',
      preAllocatedVUs: 2, maxVUs: 2,
    },
  },
  thresholds: {
    iterations: ['count==21'], // one k6: passes; split over 3: fails
    dropped_iterations: ['count<1'],
  },
};

export default function () {
  http.get(`${__ENV.TARGET}/ok`);
}
