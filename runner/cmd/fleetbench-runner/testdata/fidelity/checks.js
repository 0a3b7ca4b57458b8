// Source: k6 documentation, "Checks": checks with thresholds (https://grafana.com/docs/k6/latest/using-k6/checks/).
// Covers: checks that pass and fail (several per call, one on a plain value) and thresholds on all checks and on single checks by name.
import http from 'k6/http';
import { check } from 'k6';
import exec from 'k6/execution';

export const options = {
  scenarios: {
    default: { executor: 'shared-iterations', vus: 3, iterations: 300, maxDuration: '30s' },
  },
  thresholds: {
    checks: ['rate>0.7', 'rate==1'], // some checks fail on purpose: the second fails
    'checks{check:status is 200}': ['rate>0.85'],
    'checks{check:body is ok}': ['rate<0.95'],
    'checks{check:iteration is even}': ['rate>0.6'],
  },
};

export default function () {
  const i = exec.scenario.iterationInTest;
  const res = http.get(`${__ENV.TARGET}${i % 10 === 0 ? '/fail' : '/ok'}`);
  check(res, {
    'status is 200': (r) => r.status === 200,
    'body is ok': (r) => r.body === 'ok',
    'answered': (r) => r.timings.duration < 30000,
  });
  check(i, { 'iteration is even': (n) => n % 2 === 0 });
}
