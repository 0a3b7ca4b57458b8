// Source: k6 documentation, k6/http "batch( requests )" and the HTTP methods (https://grafana.com/docs/k6/latest/javascript-api/k6-http/batch/).
// Covers: POST/PUT/DELETE with JSON bodies, http.batch, and thresholds on the method tag.
import http from 'k6/http';
import { check } from 'k6';
import exec from 'k6/execution';

export const options = {
  scenarios: {
    crud: { executor: 'per-vu-iterations', vus: 3, iterations: 40, maxDuration: '30s' },
  },
  thresholds: {
    'http_req_duration{method:POST}': ['p(95)<5000'],
    'http_reqs{method:DELETE}': ['count==120'],
    'http_reqs{method:GET}': ['count>1000'], // 360 GETs: fails
    http_reqs: ['count==720', 'rate>1'],
    checks: ['rate==1'],
  },
};

export default function () {
  const params = { headers: { 'Content-Type': 'application/json' } };
  const created = http.post(`${__ENV.TARGET}/echo`, JSON.stringify({ name: `item-${exec.vu.idInTest}-${exec.vu.iterationInScenario}` }), params);
  check(created, { 'created': (r) => r.json('method') === 'POST' });
  http.put(`${__ENV.TARGET}/echo`, JSON.stringify({ name: 'renamed' }), params);
  const responses = http.batch([
    ['GET', `${__ENV.TARGET}/ok`],
    ['GET', `${__ENV.TARGET}/items`],
    ['GET', `${__ENV.TARGET}/status/201`],
  ]);
  check(responses, { 'batch ok': (rs) => rs.every((r) => r.status < 300) });
  http.del(`${__ENV.TARGET}/echo`);
}
