// Source: k6 documentation, "Ramping VUs" executor (https://grafana.com/docs/k6/latest/using-k6/scenarios/executors/ramping-vus/).
// Covers: a ramping-vus scenario (stages up, hold, down). Each iteration takes 0.9 s, so the VUs, started on the
// stages' schedule, start their iterations far from the moments k6 starts or stops a VU.
import http from 'k6/http';
import { sleep } from 'k6';

export const options = {
  scenarios: {
    ramp: {
      executor: 'ramping-vus', startVUs: 0, gracefulRampDown: '5s',
      stages: [
        { duration: '1500ms', target: 3 },
        { duration: '1500ms', target: 3 },
      ],
    },
  },
  thresholds: {
    iterations: ['count>3', 'count>1000'], // the second fails
    vus_max: ['value==3'],
  },
};

export default function () {
  http.get(`${__ENV.TARGET}/ok`);
  sleep(0.9);
}
