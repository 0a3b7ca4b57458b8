// Source: k6 documentation, "Thresholds": thresholds on built-in timing metrics (https://grafana.com/docs/k6/latest/using-k6/thresholds/).
// Covers: timing thresholds (http_req_duration by name, http_req_waiting, iteration_duration, http_req_connecting) on a slow endpoint, set far from the measured values.
import http from 'k6/http';

export const options = {
  scenarios: {
    slow: { executor: 'shared-iterations', vus: 6, iterations: 90, maxDuration: '30s' },
  },
  thresholds: {
    'http_req_duration{name:slow}': ['p(95)>5', 'p(95)<5000', 'med<0.001'], // the third fails
    http_req_waiting: ['avg<5000'],
    iteration_duration: ['p(99)<10000', 'min>5'],
    http_req_connecting: ['max<5000'],
    http_req_duration: ['max<1'], // fails
  },
};

export default function () {
  http.get(`${__ENV.TARGET}/slow?ms=20`, { tags: { name: 'slow' } });
  http.get(`${__ENV.TARGET}/ok`);
}
