// Source: k6 documentation, "Checks" and k6/http "Response.json()" (https://grafana.com/docs/k6/latest/using-k6/checks/, https://grafana.com/docs/k6/latest/javascript-api/k6-http/response/response-json/).
// Covers: checks on JSON bodies (selectors, whole documents, a login token reused), some failing on purpose.
import http from 'k6/http';
import { check } from 'k6';
import exec from 'k6/execution';

export const options = {
  scenarios: {
    api: { executor: 'shared-iterations', vus: 3, iterations: 90, maxDuration: '30s' },
  },
  thresholds: {
    'checks{check:cheap item}': ['rate>0.5'], // a fifth of the items cost over 100: passes
    'checks{check:token issued}': ['rate==1'],
    checks: ['rate>0.99'], // fails
  },
};

export default function () {
  const i = exec.scenario.iterationInTest;
  const login = http.post(`${__ENV.TARGET}/login`, JSON.stringify({ user: 'u' }), { headers: { 'Content-Type': 'application/json' } });
  check(login, { 'token issued': (r) => typeof r.json('token') === 'string' && r.json('token').length > 0 });
  const list = http.get(`${__ENV.TARGET}/items`);
  const item = list.json()[i % 25];
  check(list, {
    'is a JSON array': (r) => Array.isArray(r.json()),
    'has 25 items': (r) => r.json('#') === 25,
    'first id is 1': (r) => r.json('0.id') === 1,
  });
  check(item, { 'cheap item': (it) => it.price <= 100 });
  const one = http.get(`${__ENV.TARGET}/items/${item.id}`, { headers: { Authorization: `Bearer ${login.json('token')}` } });
  check(one, { 'same id': (r) => r.json('id') === item.id });
}
