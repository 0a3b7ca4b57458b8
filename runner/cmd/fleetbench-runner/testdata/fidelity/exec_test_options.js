// Source: k6 documentation, k6/execution "test.options" (https://grafana.com/docs/k6/latest/javascript-api/k6-execution/#test).
// Covers: exec.test.options read by the script (the consolidated options, scenarios and thresholds included) to choose its work.
import http from 'k6/http';
import { check } from 'k6';
import exec from 'k6/execution';

export const options = {
  scenarios: {
    catalog: { executor: 'shared-iterations', vus: 3, iterations: 60, maxDuration: '30s', tags: { area: 'shop' } },
  },
  tags: { suite: 'fidelity' },
  thresholds: {
    'http_reqs{suite:fidelity}': ['count==120'],
    checks: ['rate==1'],
  },
};

export default function () {
  const opts = exec.test.options;
  const sc = opts.scenarios[exec.scenario.name];
  check(opts, {
    'scenario options visible': (o) => sc.iterations === 60 && sc.executor === 'shared-iterations',
    'global tags visible': (o) => o.tags.suite === 'fidelity',
    'thresholds visible': (o) => Object.keys(o.thresholds).length === 2,
  });
  // One request per 20 iterations of the scenario's total, read from the options.
  const every = sc.iterations / 20;
  http.get(`${__ENV.TARGET}/items`);
  http.get(`${__ENV.TARGET}${exec.scenario.iterationInTest % every === 0 ? '/status/201' : '/ok'}`);
}
