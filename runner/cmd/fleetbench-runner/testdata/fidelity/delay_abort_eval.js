// Source: k6 documentation, "Thresholds": abortOnFail with delayAbortEval (https://grafana.com/docs/k6/latest/using-k6/thresholds/#abort-a-test-when-a-threshold-is-crossed).
// Covers: failing abortOnFail thresholds whose delayAbortEval is longer than the test, so k6 never aborts: the test runs to its end and fails at the end.
// fidelity: cluster
import http from 'k6/http';
import { check } from 'k6';
import exec from 'k6/execution';

export const options = {
  scenarios: {
    api: { executor: 'shared-iterations', vus: 3, iterations: 60, maxDuration: '30s' },
  },
  thresholds: {
    http_req_failed: [{ threshold: 'rate<0.01', abortOnFail: true, delayAbortEval: '1m' }], // a fifth fail: fails at the end
    http_req_duration: [{ threshold: 'p(95)<5000', abortOnFail: true, delayAbortEval: '10s' }],
    checks: ['rate>0.7'],
  },
};

export default function () {
  const res = http.get(`${__ENV.TARGET}${exec.scenario.iterationInTest % 5 === 0 ? '/fail' : '/ok'}`);
  check(res, { 'status is 200': (r) => r.status === 200 });
}
