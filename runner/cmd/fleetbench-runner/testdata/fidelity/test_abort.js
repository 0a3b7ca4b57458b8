// Source: k6 documentation, k6/execution "test.abort()" (https://grafana.com/docs/k6/latest/javascript-api/k6-execution/#test), and k6-operator's e2e script https://github.com/grafana/k6-operator/blob/main/e2e/tests/abort-one-runner.js
// Covers: test.abort() mid-run by one VU: k6 stops every VU and still runs teardown() once, whose request and check show it.
// k6 stops when the script aborts, so its counts depend on that moment: compared on verdicts only.
// fidelity: cluster
// fidelity: verdicts-only
import http from 'k6/http';
import { check, sleep } from 'k6';
import exec from 'k6/execution';

export const options = {
  scenarios: {
    // VU 3 of the test aborts; split over 3 runners it is the last runner's VU.
    users: { executor: 'per-vu-iterations', vus: 3, iterations: 60, maxDuration: '30s' },
  },
  thresholds: {
    http_req_failed: ['rate==0'],
    'checks{check:teardown ran}': ['rate==1'],
  },
};

export default function () {
  http.get(`${__ENV.TARGET}/ok`);
  if (exec.vu.idInTest === 3 && exec.vu.iterationInScenario === 5) {
    exec.test.abort('the order service is gone: no point going on');
  }
  sleep(0.05);
}

export function teardown() {
  const res = http.post(`${__ENV.TARGET}/logout`);
  check(res, { 'teardown ran': (r) => r.status === 204 });
}
