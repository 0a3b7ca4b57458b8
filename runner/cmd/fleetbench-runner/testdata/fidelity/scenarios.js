// Source: k6 documentation, "Scenarios": several scenarios with their own exec functions (https://grafana.com/docs/k6/latest/using-k6/scenarios/).
// Covers: several scenarios with their own exec functions, executors, startTime and scenario tags, with {scenario:x} thresholds.
import http from 'k6/http';
import { check } from 'k6';
import exec from 'k6/execution';

export const options = {
  scenarios: {
    browse: { executor: 'shared-iterations', exec: 'browse', vus: 3, iterations: 150, maxDuration: '30s' },
    api: {
      executor: 'per-vu-iterations', exec: 'api', vus: 3, iterations: 40, startTime: '500ms',
      maxDuration: '30s', tags: { team: 'backend' },
    },
    // An iteration due exactly when the duration ends races k6's deadline, so the duration ends
    // half a tick after the last one: 21 iterations (0 ms .. 2000 ms).
    burst: {
      executor: 'constant-arrival-rate', exec: 'burst', rate: 10, timeUnit: '1s', duration: '2050ms',
      preAllocatedVUs: 6, maxVUs: 12, startTime: '1s',
    },
  },
  thresholds: {
    'http_req_duration{scenario:browse}': ['p(95)<5000'],
    'http_req_duration{scenario:api}': ['p(95)<0.001'], // fails
    'iterations{scenario:api}': ['count==120'],
    'iterations{scenario:burst}': ['count==21'],
    'http_req_failed{scenario:burst}': ['rate<0.01'],
    'http_reqs{team:backend}': ['count>100'],
    'checks{scenario:browse}': ['rate==1'],
  },
};

export function browse() {
  const res = http.get(`${__ENV.TARGET}/items`);
  check(res, { 'catalog loaded': (r) => r.status === 200 });
}

export function api() {
  http.post(`${__ENV.TARGET}/echo`, JSON.stringify({ vu: exec.vu.idInTest }), { headers: { 'Content-Type': 'application/json' } });
  http.get(`${__ENV.TARGET}/status/201`);
}

export function burst() {
  http.get(`${__ENV.TARGET}/ok`);
}
