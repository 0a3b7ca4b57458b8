// Source: k6 documentation, "Test lifecycle": setup() data passed to VU code and teardown() (https://grafana.com/docs/k6/latest/using-k6/test-lifecycle/).
// Covers: setup() logging in and returning data (a token, product ids) that every VU uses, and teardown() receiving it.
// setup() and teardown() make requests and checks, as they usually do. k6 runs them in every process; a fleet
// must run them once (fleetbench: on runner 0, through k6's REST API) for its counts to equal one k6's.
// fidelity: cluster
import http from 'k6/http';
import { check } from 'k6';
import exec from 'k6/execution';

export const options = {
  scenarios: {
    users: { executor: 'per-vu-iterations', vus: 6, iterations: 30, maxDuration: '30s' },
  },
  thresholds: {
    'checks{check:authorized}': ['rate==1'],
    'http_reqs{scenario:users}': ['count==180'],
    http_req_failed: ['rate<0.01'],
  },
};

export function setup() {
  const res = http.post(`${__ENV.TARGET}/login`, JSON.stringify({ user: 'load', password: 'test' }), {
    headers: { 'Content-Type': 'application/json' },
  });
  check(res, { 'logged in': (r) => r.status === 200 && r.json('token') !== '' });
  const items = http.get(`${__ENV.TARGET}/items`).json();
  return { token: res.json('token'), ids: items.map((it) => it.id) };
}

export default function (data) {
  const id = data.ids[exec.scenario.iterationInTest % data.ids.length];
  const res = http.get(`${__ENV.TARGET}/items/${id}`, { headers: { Authorization: `Bearer ${data.token}` } });
  check(res, {
    authorized: (r) => r.status === 200,
    'right item': (r) => r.json('id') === id,
  });
}

export function teardown(data) {
  http.post(`${__ENV.TARGET}/logout`, null, { headers: { Authorization: `Bearer ${data.token}` } });
}
